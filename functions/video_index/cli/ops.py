"""``video-index reconcile`` and ``video-index rebuild start|status|abort`` (docs/operations.md).

Where they work (:mod:`video_index.cli.targets`): with ``--stack NAME`` on the deployed
stack's state machines, followed here (:mod:`video_index.cli.deployed`); with
``--ready-file`` (a running ``video-index local``, found by itself at its default place)
or ``--in-process`` in this process, with the same code the ops Lambda runs under Step
Functions. Exit codes: :data:`DESCRIPTION_END`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from video_index.cli import deployed
from video_index.cli.console import make_console
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM, guarded
from video_index.cli.reports import print_report
from video_index.cli.targets import WHERE, add_target, open_stack, source_of, stack_name

#: Seconds between two looks at a deployed execution.
DEFAULT_INTERVAL = 5.0
#: How much longer than the local API's generation cache the local drop grace is.
LOCAL_GRACE_MARGIN_SECONDS: Final = 1.0

DESCRIPTION_END: Final = """\
Where: --stack NAME (or VIDEO_INDEX_STACK) starts and follows the deployed state machine
(Ctrl-C detaches: it keeps running); --ready-file PATH works on a running video-index
local (found by itself at its default place); --in-process runs the job in this process
(configured by VIDEO_INDEX_* variables, or on --stack's resources).

Exit codes: 0 done; 1 refused (safety threshold), a failed execution, a rebuild already
running or nothing to abort; 2 bad usage or missing configuration (no target, an unknown
stack, no credentials); 3 AWS unavailable; 130 interrupted with Ctrl-C (a job in this
process records it: a rebuild's phase reads "interrupted"; a deployed execution keeps
running).
"""

RECONCILE_DESCRIPTION: Final = (
    """\
Make the read model equal to S3 again: compare each partition (device, kind, UTC day)
of S3 (an S3 Inventory report, or a listing of v1/) with the read model and repair the
ones that differ. --dry-run reports what it would repair and changes nothing. The
default source is a listing on a local stack, the newest inventory report elsewhere.

"""
    + DESCRIPTION_END
)

REBUILD_DESCRIPTION: Final = (
    """\
Re-project S3 into a new read-model generation while the current one serves, then
switch to it and drop the old one. In this process the rebuild says what it waits for:
after the partitions, the settle (ingest batches that began before the rebuild must end:
on a local stack until none is in flight, else 120 s) and, after the switch, the grace
before the old generation is dropped (longer than the API's generation cache: 11 s on a
local stack, else 60 s).

"""
    + DESCRIPTION_END
)


def register(commands: Any) -> None:
    reconcile = commands.add_parser(
        "reconcile",
        help="make the read model equal to S3 again (from an inventory report or a listing)",
        description=RECONCILE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _source(reconcile)
    reconcile.add_argument(
        "--dry-run", action="store_true", help="report what would be repaired; write nothing"
    )
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
        description=REBUILD_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = rebuild.add_subparsers(dest="rebuild_command", metavar="ACTION", required=True)
    start = actions.add_parser(
        "start",
        help="start a rebuild and follow it with a progress bar",
        description=REBUILD_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _source(start, default="list")
    start.add_argument(
        "--settle-seconds",
        type=float,
        default=None,
        metavar="SECONDS",
        help="in this process: wait this long after the start before the final catch-up "
        "(default: on a local stack until no ingest batch is in flight, at most 120 s; "
        "else 120 s, longer than an ingest batch can run)",
    )
    start.add_argument(
        "--drop-grace-seconds",
        type=float,
        default=None,
        metavar="SECONDS",
        help="in this process: wait this long after the switch before deleting the old "
        "generation (default: 11 s on a local stack, its API's generation cache and a "
        "second; else 60 s)",
    )
    add_target(start)
    _following(start, follow=True)
    _route(start, _rebuild_start, deployed.rebuild_start, detachable=True)
    status = actions.add_parser(
        "status",
        help="phase, partitions done/total, executions",
        description="Show the rebuild's phase, the serving and building generations, the "
        "partitions done of the total and (deployed) the running and last executions.",
    )
    status.add_argument("--json", action="store_true", help="print JSON instead")
    add_target(status)
    _following(status, follow=False)
    _route(status, _rebuild_status, deployed.rebuild_status)
    abort = actions.add_parser(
        "abort",
        help="stop a running rebuild; the current generation keeps serving",
        description="Stop a running rebuild and drop what it built; the current generation "
        "keeps serving. Exit code 1 when no rebuild is running.",
    )
    add_target(abort)
    abort.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, help=argparse.SUPPRESS)
    _route(abort, _rebuild_abort, deployed.rebuild_abort)


def _source(parser: argparse.ArgumentParser, *, default: str | None = None) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--manifest",
        metavar="URI",
        help="s3://BUCKET/.../manifest.json of an S3 Inventory report",
    )
    shown = default or "list on a local stack (--ready-file), else inventory"
    where.add_argument(
        "--source",
        choices=("inventory", "list"),
        default=default,
        help=f"inventory (the newest report under the inventory destination) or list (a "
        f"listing of v1/: small buckets, before any report exists); default: {shown}",
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
            from video_index.cli.ready import missing_target_note

            parser.error(f"{WHERE}; {missing_target_note()}")
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
    return build_ops(ready.settings(), ready.clients(), clock=ready.clock())


def _reconcile(args: argparse.Namespace, console: Console) -> int:
    from video_index.ops.report import ReconcileRefused

    def run() -> int:
        ops = _ops(args)
        source = source_of(args)
        try:
            with console.status(f"reconciling the read model with S3 ({source})…"):
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
    def run() -> int:
        ops = _ops(args)
        source = source_of(args)
        objects = None if source == "list" else ops.objects(source, args.manifest)[0]
        try:
            status = _run_rebuild(args, console, ops, objects)
        except KeyboardInterrupt:
            after = ops.rebuilder.status()
            make_console(stderr=True).print(
                Text(f"rebuild {after.phase}: {after.error}"),
            )
            return EXIT_INTERRUPTED
        console.print(
            f"generation {status.current} serves (rebuilt); generation {status.previous} dropped"
        )
        return EXIT_OK

    return guarded(console, run)


def _run_rebuild(args: argparse.Namespace, console: Console, ops: Any, objects: Any) -> Any:
    """The rebuild in this process with a bar of partitions and its waits said."""
    from video_index.cli.waits import countdown
    from video_index.ops.rebuild import RebuildStatus

    settle, grace, settled = _waits(args, ops)
    wait = countdown(
        console,
        {
            "settle": "ingest batches that began before the rebuild must end (settle)",
            "drop-grace": "readers must let go of the old generation before it is dropped "
            "(the API's generation cache)",
        },
        {"settle": settled} if settled else None,
    )
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

        def quiet(what: str, seconds: float) -> None:
            progress.stop()  # the wait draws its own bar
            wait(what, seconds)

        # a rebuild already running: Conflict, exit 1
        return ops.rebuilder.run(
            objects, settle_seconds=settle, drop_grace_seconds=grace, progress=show, wait=quiet
        )


def _waits(args: argparse.Namespace, ops: Any) -> tuple[float, float, Any]:
    """Settle and drop grace, and (local stack) when the settle may end early: the given
    ones, else on a local stack the in-flight check and its API's cache plus a second."""
    from video_index.ops.rebuild import DEFAULT_DROP_GRACE_SECONDS, DEFAULT_SETTLE_SECONDS

    settle = DEFAULT_SETTLE_SECONDS if args.settle_seconds is None else args.settle_seconds
    grace = args.drop_grace_seconds
    settled = None
    if args.ready_file is not None:
        from video_index.local.ready import API_GENERATION_CACHE, ReadyStack

        ready = ReadyStack.read(args.ready_file)
        cache = ready.values.get(API_GENERATION_CACHE)
        if grace is None and cache is not None:
            grace = float(cache) + LOCAL_GRACE_MARGIN_SECONDS
        if args.settle_seconds is None:
            settled = _nothing_in_flight(ready.client("sqs"), str(ready["queue_url"]))
    return settle, DEFAULT_DROP_GRACE_SECONDS if grace is None else grace, settled


def _nothing_in_flight(sqs: Any, queue_url: str) -> Any:
    """True once no message of the notification queue is in flight: the local worker
    deletes a batch's messages when it returns, so every batch that began before the
    rebuild has ended (a failed one keeps its messages hidden: the settle runs out)."""

    def check() -> bool:
        attributes = sqs.get_queue_attributes(
            QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessagesNotVisible"]) == 0

    return check


def _rebuild_status(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        status = _ops(args).rebuilder.status()
        if args.json:
            print(json.dumps(status.__dict__, default=str, indent=2))
            return EXIT_OK
        console.print(
            Text.assemble(
                "phase ",
                (status.phase, "bold"),
                f"; generation {status.current} serves"
                + (f"; building {status.building}" if status.building else "")
                + (
                    f"; {status.partitions_done}/{status.partitions_total} partitions"
                    if status.building and status.partitions_total
                    else ""
                )
                + (f" ({status.error})" if status.error else ""),
            )
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
    """A bar of partitions on a terminal (elsewhere each step is a line of its own)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("partitions"),
        console=console,
        disable=not console.is_terminal,
    )
