"""``video-index reconcile`` and ``video-index rebuild start|status|abort`` (SPEC §8).

Both run in this process with the same code the reconcile Lambda runs under
Step Functions. Configuration comes from the environment (``VIDEO_INDEX_*`` and
the standard boto3 variables) or, with ``--ready-file``, from a running
``video-index local``.

Exit codes: 0 done; 1 refused (safety threshold), a rebuild already running or
nothing to abort; 2 bad usage or missing configuration; 3 AWS unavailable.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNAVAILABLE: Final = 3


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
    from video_index.operations import build_ops
    from video_index.services import Clients
    from video_index.settings import Settings

    if args.ready_file is None:
        return build_ops(Settings.from_env(), Clients.default())
    from video_index.local.aws import isolated_session, local_clients
    from video_index.local.stack import read_ready_file

    ready = read_ready_file(args.ready_file)
    session = isolated_session(
        ready["aws_access_key_id"], ready["aws_secret_access_key"], ready["region"]
    )
    clients = local_clients(session, s3=ready["s3"], sqs=ready["sqs"], dynamodb=ready["dynamodb"])
    return build_ops(Settings(bucket=ready["bucket"], table=ready["table"]), clients)


def _guarded(console: Console, action: Any) -> int:
    """Run ``action``; map the failures every ops command shares to exit codes."""
    from video_index.operations import OperationError
    from video_index.settings import ConfigurationError
    from video_index.store import StoreError

    try:
        result: int = action()
        return result
    except (ConfigurationError, OperationError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return EXIT_USAGE
    except StoreError as exc:
        console.print(f"[red]read model unavailable:[/red] {exc}")
        return EXIT_UNAVAILABLE


def _reconcile(args: argparse.Namespace, console: Console) -> int:
    from video_index.reconcile import ReconcileRefused

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
            return EXIT_REFUSED
        _print_report(console, report.as_dict(), args.json)
        return EXIT_OK

    return _guarded(console, run)


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
    from video_index.rebuild import (
        DEFAULT_DROP_GRACE_SECONDS,
        DEFAULT_SETTLE_SECONDS,
        RebuildInProgress,
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

            try:
                status = ops.rebuilder.run(
                    settle_seconds=(
                        DEFAULT_SETTLE_SECONDS
                        if args.settle_seconds is None
                        else args.settle_seconds
                    ),
                    drop_grace_seconds=(
                        DEFAULT_DROP_GRACE_SECONDS
                        if args.drop_grace_seconds is None
                        else args.drop_grace_seconds
                    ),
                    progress=show,
                )
            except RebuildInProgress as exc:
                console.print(f"[red]{exc}[/red]")
                return EXIT_REFUSED
        console.print(
            f"generation {status.current} serves (rebuilt); generation {status.previous} dropped"
        )
        return EXIT_OK

    return _guarded(console, run)


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

    return _guarded(console, run)


def _rebuild_abort(args: argparse.Namespace, console: Console) -> int:
    from video_index.rebuild import RebuildError

    def run() -> int:
        try:
            status = _ops(args).rebuilder.abort()
        except RebuildError as exc:
            console.print(f"[red]{exc}[/red]")
            return EXIT_REFUSED
        console.print(f"aborted; generation {status.current} keeps serving")
        return EXIT_OK

    return _guarded(console, run)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("partitions"),
        console=console,
    )
