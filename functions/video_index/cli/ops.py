"""``video-index reconcile`` and ``video-index rebuild start|status|abort`` (docs/operations.md).

Both run in this process with the same code the reconcile Lambda runs under
Step Functions. Configuration comes from the environment (``VIDEO_INDEX_*`` and
the standard boto3 variables) or, with ``--ready-file``, from a running
``video-index local``.

Exit codes (:mod:`video_index.cli.exits`): 0 done; 1 refused (safety threshold), a
rebuild already running or nothing to abort; 2 bad usage or missing configuration;
3 AWS unavailable, for every service.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, guarded


def register(commands: Any) -> None:
    reconcile = commands.add_parser(
        "reconcile",
        help="make the read model equal to S3 again (from an inventory report or a listing)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = reconcile.add_mutually_exclusive_group()
    where.add_argument("--manifest", help="s3://BUCKET/.../manifest.json of an S3 Inventory report")
    where.add_argument(
        "--source",
        choices=("inventory", "list"),
        default="inventory",
        help="inventory (default: the newest report under VIDEO_INDEX_INVENTORY_DESTINATION) "
        "or list (a listing of v1/: small buckets, before any report exists)",
    )
    reconcile.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    reconcile.add_argument(
        "--force", action="store_true", help="apply even above the safety threshold"
    )
    reconcile.add_argument("--json", action="store_true", help="print the report as JSON")
    _target(reconcile)
    reconcile.set_defaults(handler=lambda args, console, _: _reconcile(args, console))

    rebuild = commands.add_parser(
        "rebuild",
        help="re-project S3 into a new read-model generation and switch to it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = rebuild.add_subparsers(dest="rebuild_command", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="run a rebuild now, with a progress bar")
    start.add_argument(
        "--settle-seconds",
        type=float,
        default=None,
        help="wait this long after the start before the final catch-up (default: "
        "longer than an ingest batch can run)",
    )
    start.add_argument(
        "--drop-grace-seconds",
        type=float,
        default=None,
        help="wait this long after the switch before deleting the old generation",
    )
    _target(start)
    start.set_defaults(handler=lambda args, console, _: _rebuild_start(args, console))
    status = actions.add_parser("status", help="phase, partitions done/total")
    status.add_argument("--json", action="store_true")
    _target(status)
    status.set_defaults(handler=lambda args, console, _: _rebuild_status(args, console))
    abort = actions.add_parser(
        "abort", help="stop a running rebuild; the current generation keeps serving"
    )
    _target(abort)
    abort.set_defaults(handler=lambda args, console, _: _rebuild_abort(args, console))


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ready-file",
        type=Path,
        help="use the stack a running `video-index local` describes in this file",
    )


def _ops(args: argparse.Namespace) -> Any:
    """Ops wired from a ready file or from the environment (AWS imports happen here)."""
    from video_index.aws.clients import Clients
    from video_index.core.settings import Settings
    from video_index.ops.service import build_ops

    if args.ready_file is None:
        return build_ops(Settings.from_env(), Clients.default())
    from video_index.local.ready import ReadyStack

    ready = ReadyStack.read(args.ready_file)
    return build_ops(ready.settings(), ready.clients())


def _reconcile(args: argparse.Namespace, console: Console) -> int:
    from video_index.ops.report import ReconcileRefused

    def run() -> int:
        ops = _ops(args)
        source = "inventory" if args.manifest else args.source
        try:
            report = ops.reconcile(
                source=source, manifest=args.manifest, dry_run=args.dry_run, force=args.force
            )
        except ReconcileRefused as refused:
            ops.save_report(refused.report)
            _print_report(console, refused.report.as_dict(), args.json)
            console.print(f"[red]refused:[/red] {refused}")
            return EXIT_PROBLEM
        _print_report(console, report.as_dict(), args.json)
        return EXIT_OK

    return guarded(console, run)


def _print_report(console: Console, report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, default=str, indent=2))
        return
    table = Table(
        title=f"reconcile {report['run_id']}" + (" (dry run)" if report["dry_run"] else "")
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name in (
        "source",
        "manifest",
        "generation",
        "objects_seen",
        "invalid_keys",
        "foreign_keys",
        "partitions_checked",
        "partitions_differing",
        "partitions_repaired",
        "entries_added",
        "entries_removed",
        "entries_fixed",
        "aggregates_fixed",
        "removal_share",
    ):
        table.add_row(name.replace("_", " "), str(report.get(name)))
    console.print(table)
    for sample in report.get("samples", []):
        console.print(f"  {sample['action']:<6} {sample['key']}")


def _rebuild_start(args: argparse.Namespace, console: Console) -> int:
    from video_index.ops.rebuild import (
        DEFAULT_DROP_GRACE_SECONDS,
        DEFAULT_SETTLE_SECONDS,
        RebuildStatus,
    )

    def run() -> int:
        ops = _ops(args)
        with _progress(console) as progress:
            task = progress.add_task("building", total=None)

            def show(status: RebuildStatus) -> None:
                progress.update(
                    task,
                    description=status.phase,
                    total=status.partitions_total or None,
                    completed=status.partitions_done,
                )

            status = ops.rebuilder.run(  # a rebuild already running: Conflict, exit 1
                settle_seconds=(
                    DEFAULT_SETTLE_SECONDS if args.settle_seconds is None else args.settle_seconds
                ),
                drop_grace_seconds=(
                    DEFAULT_DROP_GRACE_SECONDS
                    if args.drop_grace_seconds is None
                    else args.drop_grace_seconds
                ),
                progress=show,
            )
        console.print(
            f"generation {status.current} serves (rebuilt); generation {status.previous} dropped"
        )
        return EXIT_OK

    return guarded(console, run)


def _rebuild_status(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        status = _ops(args).rebuilder.status()
        if args.json:
            print(json.dumps(status.__dict__, default=str, indent=2))
            return EXIT_OK
        console.print(
            f"phase [bold]{status.phase}[/bold]; generation {status.current} serves"
            + (f"; building {status.building}" if status.building else "")
        )
        if status.partitions_total:
            with _progress(console) as progress:
                progress.add_task(
                    status.phase, total=status.partitions_total, completed=status.partitions_done
                )
        return EXIT_OK

    return guarded(console, run)


def _rebuild_abort(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        status = _ops(args).rebuilder.abort()  # nothing running: Conflict, exit 1
        console.print(f"aborted; generation {status.current} keeps serving")
        return EXIT_OK

    return guarded(console, run)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("partitions"),
        console=console,
    )
