"""The ``video-index`` command line (docs/cli.md): argument parsing and output only.

Subcommands:

* ``key check KEY [KEY...]`` — is each key valid, foreign or invalid (and why)?
* ``key make --kind … --device … --start … --duration-ms … FILE`` — the key ``upload``
  puts FILE under (docs/keys.md).
* ``local``, ``status``, ``upload``, ``reconcile``, ``rebuild``, ``export``, ``annotate``,
  ``delete``, ``undelete``, ``restore``, ``hold``, ``retention``, ``device``, ``devices``,
  ``calendar``, ``camera`` — registered by their modules in this package.

Before a command runs, :func:`main` checks what every command shares: a window runs
forwards (``--to`` after ``--from``), and a command that takes ``--ready-file`` and is
given no target finds a running ``video-index local`` by itself (:mod:`.ready`). Ctrl-C
ends any command with one line and exit code 130, never a traceback.

Exit codes (:mod:`.exits`): 0 success, 1 the command ran and found a problem, 2 bad usage
(the message names the argument), 3 AWS unavailable, 130 interrupted.

Importing this module reads no AWS configuration and imports no AWS SDK: the
commands import what they need only when they run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli import annotate as annotate_cli
from video_index.cli import audit as audit_cli
from video_index.cli import camera as camera_cli
from video_index.cli import deletion as deletion_cli
from video_index.cli import device as device_cli
from video_index.cli import devices as devices_cli
from video_index.cli import export as export_cli
from video_index.cli import hold as hold_cli
from video_index.cli import local as local_cli
from video_index.cli import ops as ops_cli
from video_index.cli import restore as restore_cli
from video_index.cli import retention as retention_cli
from video_index.cli import share as share_cli
from video_index.cli import status as status_cli
from video_index.cli import upload as upload_cli
from video_index.cli import verify as verify_cli
from video_index.cli.args import check_window, device_arg, start_arg
from video_index.cli.console import make_console
from video_index.cli.exits import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    guarded,
)
from video_index.core.keys import (
    EXTENSIONS,
    KEY_PREFIX,
    KINDS,
    MAX_DURATION_MS,
    MIN_DURATION_MS,
    ForeignKey,
    InvalidKey,
    KeyClass,
    ValidKey,
    classify_key,
)
from video_index.core.timeunits import iso_of

_FOREIGN_REASON: Final = f"outside {KEY_PREFIX}: never indexed (not an error)"


# --- key check ---------------------------------------------------------------------------


def _status(result: KeyClass) -> str:
    match result:
        case ValidKey():
            return "valid"
        case ForeignKey():
            return "foreign"
        case InvalidKey():
            return "invalid"


def _as_json(key: str, result: KeyClass) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "status": _status(result)}
    match result:
        case ValidKey(segment=segment):
            out["segment"] = {
                "kind": segment.kind,
                "device": segment.device,
                "start": iso_of(segment.start),
                "end": iso_of(segment.end),
                "duration_ms": segment.duration_ms,
                "id": segment.id,
                "ext": segment.ext,
            }
        case ForeignKey():
            out["reason"] = _FOREIGN_REASON
        case InvalidKey(reason=reason):
            out["reason"] = reason
    return out


def _details(result: KeyClass) -> Text:
    match result:
        case ValidKey(segment=s):
            return Text(
                f"{s.kind} · {s.device} · {iso_of(s.start)} · {s.duration_ms} ms · id {s.id}"
            )
        case ForeignKey():
            return Text(_FOREIGN_REASON)
        case InvalidKey(reason=reason):
            return Text(reason)


_STYLES: Final = {"valid": "green", "foreign": "yellow", "invalid": "bold red"}


def _key_check(args: argparse.Namespace, console: Console) -> int:
    results = [(key, classify_key(key)) for key in args.keys]
    if args.json:
        print(json.dumps([_as_json(key, result) for key, result in results], indent=2))
    else:
        table = Table(title="Key check", title_justify="left")
        table.add_column("key", overflow="fold")
        table.add_column("result")
        table.add_column("details", overflow="fold")
        for key, result in results:
            status = _status(result)
            # Text, not markup: a key may contain '[' and must be shown exactly.
            table.add_row(Text(key), Text(status, style=_STYLES[status]), _details(result))
        console.print(table)
    return EXIT_OK if all(isinstance(r, ValidKey) for _, r in results) else EXIT_PROBLEM


# --- key make ----------------------------------------------------------------------------


def _key_make(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The key ``upload`` would use: its checks, and the bytes it would send (a progressive
    MP4 is stored fragmented unless ``--as-is``, and the id is over what is stored)."""
    from video_index.upload import UploadArgumentError
    from video_index.upload.segment import upload_key

    kind: str = args.kind
    low, high = MIN_DURATION_MS[kind], MAX_DURATION_MS[kind]
    if not low <= args.duration_ms <= high:
        parser.error(
            f"argument --duration-ms: {args.duration_ms} is out of range for {kind} "
            f"({low}..{high} ms)"
        )
    path: Path = args.file
    ext = args.ext or path.suffix.lstrip(".").lower()
    if ext not in EXTENSIONS[kind]:
        source = "--ext" if args.ext else f"FILE ({path.name})"
        parser.error(
            f"argument --ext: extension {ext or '(none)'!r} from {source} is not allowed for "
            f"{kind}; use --ext with one of: {', '.join(EXTENSIONS[kind])}"
        )
    try:
        key, rewritten = upload_key(
            path,
            kind=kind,
            device=args.device,
            start=args.start,
            duration_ms=args.duration_ms,
            ext=ext,
            as_is=args.as_is,
        )
    except UploadArgumentError as exc:
        flag = {"path": "FILE", "file": "FILE"}.get(exc.argument, f"--{exc.argument}")
        parser.error(f"argument {flag.replace('_', '-')}: {exc.reason}")
    print(key)
    if rewritten:  # said on stderr: stdout holds the key alone
        sys.stderr.write(
            f"note: {path.name} is a progressive MP4; upload stores it as fragmented MP4 "
            "(stream copy), and the key is computed over those bytes (with --as-is: over "
            "the file as it is)\n"
        )
    return EXIT_OK


# --- parser ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="video-index",
        description="Index of camera video stored in Amazon S3.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _register_key(commands)
    # Subcommands that live with their feature; each module keeps AWS imports inside
    # its handlers so that importing the CLI stays cheap and reads no configuration.
    for register in (
        upload_cli.register,
        local_cli.register,
        status_cli.register,
        ops_cli.register,
        export_cli.register,
        annotate_cli.register,
        deletion_cli.register,
        restore_cli.register,
        device_cli.register,
        devices_cli.register,
        camera_cli.register,
        hold_cli.register,
        share_cli.register,
        verify_cli.register,
        retention_cli.register,
        audit_cli.register,
    ):
        register(commands)
    return parser


def _register_key(commands: Any) -> None:
    key = commands.add_parser(
        "key",
        help="object keys: check them, or make the key for a file",
        description="Object keys (docs/keys.md): check whether keys will be indexed, or "
        "print the key a file is uploaded under.",
    )
    key_commands = key.add_subparsers(dest="key_command", metavar="KEY_COMMAND", required=True)

    check = key_commands.add_parser(
        "check",
        help="classify keys as valid, foreign or invalid",
        description=(
            "Classify each key: valid (indexed), foreign (outside v1/: ignored, not an "
            "error) or invalid (under v1/ but breaks a rule: never indexed). Exit code 0 "
            "when every key is valid, 1 otherwise."
        ),
    )
    check.add_argument("keys", nargs="+", metavar="KEY", help="S3 object key (not URL-encoded)")
    check.add_argument("--json", action="store_true", help="print JSON instead of a table")
    check.set_defaults(handler=lambda args, console, _: _key_check(args, console))

    make = key_commands.add_parser(
        "make",
        help="print the key `video-index upload` puts FILE under",
        description=(
            "Print the key video-index upload puts FILE under. Its id is the first 16 hex "
            "digits of the SHA-256 of kind, device, start, duration and the bytes stored, "
            "so a retried upload gets the same key. A progressive MP4 is stored as "
            "fragmented MP4 (stream copy, so players stream it as stored): the key is over "
            "those bytes, said on stderr, unless --as-is."
        ),
    )
    make.add_argument("--kind", required=True, choices=KINDS, help="what the file holds")
    make.add_argument(
        "--device", required=True, type=device_arg, help="1-64 characters of [a-z0-9-]"
    )
    make.add_argument(
        "--start",
        required=True,
        type=start_arg,
        help="start of the recording, ISO 8601 with a time zone (e.g. 2026-11-30T12:00:00Z)",
    )
    make.add_argument(
        "--duration-ms", required=True, type=int, help="recorded duration in milliseconds"
    )
    make.add_argument(
        "--ext",
        choices=sorted({ext for exts in EXTENSIONS.values() for ext in exts}),
        help="file extension in the key (default: FILE's own extension)",
    )
    make.add_argument(
        "--as-is",
        action="store_true",
        help="the key of a progressive MP4 uploaded as it is (upload --as-is); by default "
        "the key of the fragmented MP4 upload stores",
    )
    make.add_argument("file", type=Path, metavar="FILE", help="the segment file")
    make.set_defaults(handler=lambda args, _, parser: _key_make(args, parser), parser=make)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    command = _chosen(parser, args)
    console = make_console()
    try:
        check_window(args, command)
        if hasattr(args, "ready_file") and args.command != "local":
            code = guarded(console, lambda: _resolve(args))
            if code != EXIT_OK:
                return code
        result: int = args.handler(args, console, command)
    except SystemExit as exc:  # parser.error() in a handler
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except BrokenPipeError:  # the reader (`| head`) has had enough: no traceback
        _quiet_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        # One line, never a traceback; a command that leaves a job behind has already
        # recorded it as interrupted and said so (docs/cli.md#exit-codes).
        make_console(stderr=True).print(Text(f"{args.command}: interrupted (Ctrl-C)"))
        return EXIT_INTERRUPTED
    return result


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)command the arguments chose: its usage goes with its errors."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush finds no closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _resolve(args: argparse.Namespace) -> int:
    from video_index.cli.ready import resolve

    resolve(args)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
