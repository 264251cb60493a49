"""``video-index retention run``: one pass of the retention job, here and now (docs/holds.md);
the help text is :data:`DESCRIPTION`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.text import Text

from video_index.cli.exits import EXIT_OK, guarded

DESCRIPTION: Final = """\
Run one pass of the retention job here and now: expired footage that no hold covers is
deleted; the report says what was listed, deleted and kept.

  video-index retention run [--ready-file PATH | --in-process] [--json]

The deployed stack runs the job daily; this command runs the same code in this process:
on a running video-index local (its bucket, holds table, retention and clock, --now
included: the local stack has no schedule; found by itself at its default place), or
with --in-process on the bucket and holds table of VIDEO_INDEX_BUCKET and
VIDEO_INDEX_HOLDS_TABLE (retention from VIDEO_INDEX_RETENTION_DAYS, an object of days
per kind). Exit codes: 0 done; 2 bad usage or configuration; 3 AWS unavailable.
"""


def register(commands: Any) -> None:
    retention = commands.add_parser(
        "retention",
        help="run the retention job once (expired footage no hold covers is deleted)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = retention.add_subparsers(dest="retention_command", metavar="ACTION", required=True)
    run = actions.add_parser(
        "run",
        help="one pass over every kind and device",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = run.add_mutually_exclusive_group()
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )
    where.add_argument(
        "--in-process", action="store_true", help="configured by VIDEO_INDEX_* variables"
    )
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.set_defaults(handler=lambda args, console, parser: _run(args, console, parser), parser=run)


def _run(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    if args.ready_file is None and not args.in_process:
        from video_index.cli.ready import missing_target_note

        parser.error(f"give --ready-file PATH or --in-process; {missing_target_note()}")

    def run() -> int:
        from video_index.aws.clients import Clients
        from video_index.core.contract import ENV_BUCKET, ENV_HOLDS_TABLE
        from video_index.core.settings import Settings
        from video_index.holds.service import build_retention

        if args.ready_file is not None:
            from video_index.local.ready import ReadyStack

            ready = ReadyStack.read(args.ready_file)
            job = build_retention(ready.settings(), ready.clients(), ready.clock())
        else:
            settings = Settings.from_env(required=(ENV_BUCKET, ENV_HOLDS_TABLE))
            job = build_retention(settings, Clients.default(), time.time)
        report = dataclasses.asdict(job.run())
        if args.json:
            print(json.dumps(report))
        else:
            console.print(Text(", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.items())))
        return EXIT_OK

    return guarded(console, run)
