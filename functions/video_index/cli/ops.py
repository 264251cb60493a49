"""``video-index reconcile`` and ``video-index rebuild start|status|abort`` (docs/operations.md).

Where they work (:mod:`video_index.cli.targets`): with ``--stack NAME`` on the deployed
stack's state machines, followed here (:mod:`video_index.cli.deployed`); with
``--ready-file`` (a running ``video-index local``) or ``--in-process`` in this process,
with the same code the ops Lambda runs under Step Functions.

Exit codes (:mod:`video_index.cli.exits`): 0 done; 1 refused (safety threshold), a
failed execution, a rebuild already running or nothing to abort; 2 bad usage or
missing configuration (no target, an unknown stack, a stack without the outputs, no
credentials); 3 AWS unavailable, for every service; 130 detached with Ctrl-C (a
deployed execution keeps running).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from video_index.cli import deployed
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, guarded
from video_index.cli.reports import print_report
from video_index.cli.targets import WHERE, add_target, open_stack, stack_name

#: Seconds between two looks at a deployed execution.
DEFAULT_INTERVAL = 5.0


def register(commands: Any) -> None:
    reconcile = commands.add_parser(
        "reconcile",
        help="make the read model equal to S3 again (from an inventory report or a listing)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _source(reconcile, default="inventory")
    reconcile.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    reconcile.add_argument(
        "--force", action="store_true", help="apply even above the safety threshold"
    )
    reconcile.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target(reconcile)
    _following(reconcile, follow=True)
    _route(reconcile, _reconcile, deployed.reconcile, detachable=True)

    rebuild = commands.add_parser(
        "rebuild",
        help="re-project S3 into a new read-model generation and switch to it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = rebuild.add_subparsers(dest="rebuild_command", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start a rebuild and follow it with a progress bar")
    _source(start, default="list")
    start.add_argument(
        "--settle-seconds",
        type=float,
        default=None,
        help="in process: wait this long after the start before the final catch-up "
        "(default: longer than an ingest batch can run)",
    )
    start.add_argument(
        "--drop-grace-seconds",
        type=float,
        default=None,
        help="in process: wait this long after the switch before deleting the old generation",
    )
    add_target(start)
    _following(start, follow=True)
    _route(start, _rebuild_start, deployed.rebuild_start, detachable=True)
    status = actions.add_parser("status", help="phase, partitions done/total, executions")
    status.add_argument("--json", action="store_true")
    add_target(status)
    _following(status, follow=False)
    _route(status, _rebuild_status, deployed.rebuild_status)
    abort = actions.add_parser(
        "abort", help="stop a running rebuild; the current generation keeps serving"
    )
    add_target(abort)
    abort.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, help=argparse.SUPPRESS)
    _route(abort, _rebuild_abort, deployed.rebuild_abort)


def _source(parser: argparse.ArgumentParser, *, default: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--manifest", help="s3://BUCKET/.../manifest.json of an S3 Inventory report")
    where.add_argument(
        "--source",
        choices=("inventory", "list"),
        default=default,
        help=f"inventory (the newest report under the inventory destination) or list (a "
        f"listing of v1/: small buckets, before any report exists); default {default}",
    )


def _following(parser: argparse.ArgumentParser, *, follow: bool) -> None:
    parser.add_argument(
        "--follow",
        action=argparse.BooleanOptionalAction,
        default=follow,
        help="with --stack: follow the execution to its end (Ctrl-C detaches; it keeps "
        f"running){' (default)' if follow else ''}",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help="with --stack: seconds between two looks at the execution "
        f"(default {DEFAULT_INTERVAL:g})",
    )


def _route(
    parser: argparse.ArgumentParser, in_process: Any, on_stack: Any, *, detachable: bool = False
) -> None:
    """Deployed (``--stack`` without ``--in-process``) or in this process; neither is a
    usage error."""

    def handler(args: argparse.Namespace, console: Console, _: Any) -> int:
        name = stack_name(args)
        if name is not None and not getattr(args, "in_process", False):
            if (
                getattr(args, "settle_seconds", None) is not None
                or getattr(args, "drop_grace_seconds", None) is not None
            ):
                parser.error(
                    "--settle-seconds and --drop-grace-seconds are for a rebuild in this "
                    "process (--in-process); the deployed state machine has its own"
                )
            return guarded(console, lambda: int(on_stack(args, console, name)))
        if args.ready_file is None and not getattr(args, "in_process", False):
            parser.error(WHERE)
        if detachable and not args.follow:
            parser.error("--no-follow needs --stack: a job in this process runs while you wait")
        return int(in_process(args, console))

    parser.set_defaults(handler=handler)


def _ops(args: argparse.Namespace) -> Any:
    """Ops wired from a ready file, a stack's outputs or the environment (AWS imports here)."""
    from video_index.aws.clients import Clients
    from video_index.core.settings import Settings
    from video_index.ops.service import build_ops

    if args.ready_file is None:
        if args.stack:  # --stack NAME --in-process: this process, on the stack's resources
            stack = open_stack(args.stack)
            return build_ops(stack.settings(), stack.clients())
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
            print_report(console, refused.report.as_dict(), args.json)
            console.print(f"[red]refused:[/red] {refused}")
            return EXIT_PROBLEM
        print_report(console, report.as_dict(), args.json)
        return EXIT_OK

    return guarded(console, run)


def _rebuild_start(args: argparse.Namespace, console: Console) -> int:
    from video_index.ops.rebuild import (
        DEFAULT_DROP_GRACE_SECONDS,
        DEFAULT_SETTLE_SECONDS,
        RebuildStatus,
    )

    def run() -> int:
        ops = _ops(args)
        source = "inventory" if args.manifest else args.source
        objects = None if source == "list" else ops.objects(source, args.manifest)[0]
        with _progress(console) as progress:
            task = progress.add_task("building", total=None)

            def show(status: RebuildStatus) -> None:
                progress.update(
                    task,
                    description=status.phase,
                    total=status.partitions_total or None,
                    completed=status.partitions_done,
                )
                if not console.is_terminal:  # a log or a pipe: one line per step
                    console.print(
                        f"rebuild in process · {status.phase} · "
                        f"{status.partitions_done}/{status.partitions_total} partitions"
                    )

            status = ops.rebuilder.run(  # a rebuild already running: Conflict, exit 1
                objects,
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
