"""``video-index restore`` (docs/deletion.md#restore-from-a-replica, docs/cli.md): copy back
from a replica what the segment bucket lacks; configuration and exit codes as ``delete``'s."""

from __future__ import annotations

import argparse
import json
from typing import Any, Final

from rich.console import Console
from rich.progress import Progress, TextColumn
from rich.text import Text

from video_index.cli.deletion import EXITS, settings_and_clients, target
from video_index.cli.exits import EXIT_OK, EXIT_USAGE, guarded

RESTORE_DESCRIPTION: Final = (
    """\
Copy back from a replica bucket what the segment bucket lacks or holds differently
(never what a deletion request covers). With --stack it runs on the deployed stack's
restore state machine, at fleet size. --dry-run says what would be copied.
"""
    + EXITS
)


def register(commands: Any) -> None:
    restore = commands.add_parser(
        "restore",
        help="copy back from a replica bucket what the segment bucket lacks",
        description=RESTORE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    restore.add_argument(
        "--from-bucket", required=True, metavar="REPLICA", help="the replica bucket's name"
    )
    restore.add_argument("--dry-run", action="store_true", help="report only; copy nothing")
    restore.add_argument("--json", action="store_true", help="print the report as JSON")
    restore.add_argument(
        "--stack",
        metavar="NAME",
        help="run on this deployed stack's restore state machine (fleet size)",
    )
    restore.add_argument(
        "--manifest",
        metavar="URI",
        help="with --stack: s3://…/manifest.json of the replica's S3 Inventory",
    )
    restore.add_argument(
        "--interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --stack: seconds between two looks at the execution (default 5)",
    )
    target(restore)
    restore.set_defaults(handler=lambda args, console, _: _restore(args, console))


def _restore(args: argparse.Namespace, console: Console) -> int:
    if args.stack:
        from video_index.cli.bulk import restore_deployed

        return guarded(console, lambda: restore_deployed(args, console))

    def run() -> int:
        from video_index.aws.objects import ObjectStore
        from video_index.deletion.restore import Restorer, RestoreReport
        from video_index.deletion.service import build_enforcer

        settings, clients = settings_and_clients(args)
        if args.from_bucket == settings.bucket:
            console.print(Text("error: --from-bucket is the segment bucket itself", style="red"))
            return EXIT_USAGE
        restorer = Restorer(
            ObjectStore(clients.s3, settings.bucket), build_enforcer(settings, clients)
        )
        if args.json:  # stdout carries the report only
            report = restorer.run(args.from_bucket, dry_run=args.dry_run)
        else:
            with Progress(TextColumn("{task.description}"), console=console) as progress:
                task = progress.add_task("comparing")

                def show(report: RestoreReport) -> None:
                    progress.update(
                        task,
                        description=f"compared {report.compared:,}, copied {report.copied:,}, "
                        f"identical {report.identical:,}",
                    )

                report = restorer.run(args.from_bucket, dry_run=args.dry_run, progress=show)
        if args.json:
            print(json.dumps(report.__dict__, indent=2))
        else:
            verb = "would copy" if report.dry_run else "copied"
            console.print(
                Text(
                    f"restore from {report.source} into {report.target}: compared "
                    f"{report.compared}, {verb} {report.copied} ({report.bytes_copied:,} "
                    f"bytes), identical {report.identical}, withheld by deletion requests "
                    f"{report.withheld}"
                )
            )
        return EXIT_OK

    return guarded(console, run)
