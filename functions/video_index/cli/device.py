"""``video-index device retire|unretire NAME``: a camera gone for good is not silent.

Retired devices live in one control item of the read model (``control``/``retired``),
outside every generation, so a rebuild keeps them (docs/operations.md#silent-cameras).
The target is a deployed stack (``--stack``), the local stack (``--ready-file``) or a
table (``--table`` with the usual boto3 configuration).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from video_index.cli.devices import add_new_device, check_device, store_device_names
from video_index.cli.exits import EXIT_OK, guarded


def register(commands: Any) -> None:
    device = commands.add_parser(
        "device",
        help="retire a camera (never silent) or make it active again",
        description="Mark a camera retired: the silent-camera check, status and GET /devices "
        "stop calling it silent. unretire undoes it. One UpdateItem of a control item that "
        "a rebuild keeps. A device the read model does not know is refused as a likely typo "
        "(--new-device acts on it anyway). Exit code 0 done; 2 bad usage or an unknown "
        "device; 3 AWS unavailable.",
    )
    device.add_argument(
        "action",
        choices=("retire", "unretire"),
        help="retire: never silent; unretire: judged again like every camera",
    )
    device.add_argument("name", help="the device name (as in its keys)")
    where = device.add_mutually_exclusive_group()
    where.add_argument("--stack", metavar="NAME", help="the deployed stack")
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )
    where.add_argument("--table", metavar="NAME", help="the read-model table")
    add_new_device(device)
    device.set_defaults(handler=lambda args, console, parser: _run(args, console, parser))


def _run(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    from video_index.aws.store import ReadModelStore
    from video_index.core.keys import InvalidKeyError, validate_device
    from video_index.core.settings import DEFAULT_TOMBSTONE_DAYS

    try:
        name = validate_device(args.name)
    except InvalidKeyError as exc:
        parser.error(f"argument name: {exc.reason}")

    def retire() -> int:
        client, table = _table(args, parser)
        store = ReadModelStore(client, table, tombstone_days=DEFAULT_TOMBSTONE_DAYS)
        if not args.new_device:
            check_device(store_device_names(store), name)
        store.set_retired(name, args.action == "retire")
        console.print(f"{name}: {'retired' if args.action == 'retire' else 'active'}")
        return EXIT_OK

    return guarded(console, retire)


def _table(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[Any, str]:
    from video_index.cli.targets import ENV_STACK, new_session, open_stack
    from video_index.core.contract import ENV_TABLE

    if args.ready_file is not None:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        return ready.client("dynamodb"), str(ready["table"])
    stack = args.stack or (None if args.table else os.environ.get(ENV_STACK))
    if stack:
        opened = open_stack(stack)
        return opened.client("dynamodb"), opened.settings().table
    table = args.table or os.environ.get(ENV_TABLE)
    if not table:
        from video_index.cli.ready import missing_target_note

        parser.error(f"give --stack, --ready-file or --table; {missing_target_note()}")
    return new_session().client("dynamodb"), table
