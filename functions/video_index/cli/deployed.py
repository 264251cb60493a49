"""``video-index reconcile|rebuild … --stack NAME``: the deployed state machines do the work.

The command finds the stack's state machines in its outputs, starts an execution
with the input the job's payload model defines (:mod:`video_index.ops.jobs`), and
follows it to the end (:mod:`video_index.cli.follow`): a progress bar, the
execution's status, then the report's summary and where it is. ``--no-follow``
returns once the execution has started. Exit codes: 0 succeeded (or started, or
detached with Ctrl-C), 1 the execution failed or was refused, 2 bad usage or
configuration, 3 AWS unavailable, 130 interrupted (detached; the execution runs on).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.text import Text

from video_index.cli import follow as follow_cli
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK
from video_index.cli.follow import Following, follow_execution, outcome
from video_index.cli.reports import print_report
from video_index.cli.targets import open_stack, source_of


def _following(
    stack: Any, job: Any, execution: Any, progress: Any, interval: float, again: str, stop: str
) -> Following:
    executions = stack.executions(job.state_machine_output)
    return Following(
        job=job.name,
        execution=execution,
        describe=lambda: executions.describe(execution.arn),
        progress=progress,
        interval=interval,
        follow_again=again,
        stop=stop,
    )


# --- reconcile ------------------------------------------------------------------------------


def reconcile(args: argparse.Namespace, console: Console, name: str) -> int:
    from video_index.core.contract import reconcile_object_key
    from video_index.ops.follow import no_progress
    from video_index.ops.jobs import RECONCILE

    if args.json:  # stdout holds the report alone; what happens meanwhile goes to stderr
        console = Console(stderr=True)
    stack = open_stack(name)
    payload = RECONCILE.execution_input(
        source=source_of(args),
        manifest=args.manifest,
        dry_run=args.dry_run,
        force=args.force,
    )
    execution = RECONCILE.start(stack, payload)
    console.print(
        Text(f"started reconcile execution {execution.name} with {json.dumps(payload)}"),
        soft_wrap=True,
    )
    if not args.follow:
        console.print(Text(f"  execution: {execution.arn}"), soft_wrap=True)
        return EXIT_OK
    following = _following(
        stack,
        RECONCILE,
        execution,
        no_progress,
        args.interval,
        again=f"video-index status --stack {name}",
        stop="the Step Functions console (reconcile never leaves a half-done state)",
    )
    last = follow_execution(console, following)
    if last is None:
        return EXIT_INTERRUPTED
    code = outcome(console, "reconcile", last.execution)
    report = last.execution.output
    if code == EXIT_OK and isinstance(report, dict):
        print_report(console, report, args.json)
        location = stack.reports_uri(reconcile_object_key(str(report["run_id"]), "report.json"))
        console.print(Text(f"report: {location}"), soft_wrap=True)
    return code


# --- rebuild --------------------------------------------------------------------------------


def _rebuild_following(
    stack: Any, execution: Any, args: argparse.Namespace, earlier: str | None = None
) -> Following:
    from video_index.ops.jobs import REBUILD, rebuild_progress

    return _following(
        stack,
        REBUILD,
        execution,
        rebuild_progress(stack, earlier=earlier),
        args.interval,
        again=f"video-index rebuild status --stack {stack.name} --follow",
        stop=f"video-index rebuild abort --stack {stack.name}",
    )


def _rebuild_end(console: Console, stack: Any, execution: Any) -> int:
    from video_index.core.contract import rebuild_object_key
    from video_index.ops.jobs import rebuild_status

    code = outcome(console, "rebuild", execution)
    status = rebuild_status(stack)
    if code == EXIT_OK:
        console.print(
            Text(
                f"generation {status.current} serves (rebuilt, {status.partitions_total} "
                f"partitions); generation {status.previous} is no longer read"
            )
        )
        if status.rebuild_id:
            partitions = stack.reports_uri(rebuild_object_key(status.rebuild_id, "partitions.json"))
            console.print(Text(f"partition list: {partitions}"), soft_wrap=True)
    else:
        console.print(Text(f"generation {status.current} keeps serving (phase {status.phase})"))
    return code


def rebuild_start(args: argparse.Namespace, console: Console, name: str) -> int:
    from video_index.ops.jobs import REBUILD, rebuild_status, start_rebuild

    stack = open_stack(name)
    earlier = rebuild_status(stack).rebuild_id
    payload = REBUILD.execution_input(source=source_of(args), manifest=args.manifest)
    execution = start_rebuild(stack, payload)  # one already running: Conflict, exit 1
    console.print(
        Text(f"started rebuild execution {execution.name} with {json.dumps(payload)}"),
        soft_wrap=True,
    )
    if not args.follow:
        console.print(Text(f"  execution: {execution.arn}"), soft_wrap=True)
        return EXIT_OK
    last = follow_execution(console, _rebuild_following(stack, execution, args, earlier))
    if last is None:
        return EXIT_INTERRUPTED
    return _rebuild_end(console, stack, last.execution)


def rebuild_status(args: argparse.Namespace, console: Console, name: str) -> int:
    from video_index.ops.jobs import REBUILD, rebuild_status

    stack = open_stack(name)
    status = rebuild_status(stack)
    executions = stack.executions(REBUILD.state_machine_output)
    running = executions.running()
    latest = executions.last_finished()
    if args.json:
        document = {
            **status.__dict__,
            "running": [execution.as_dict() for execution in running],
            "last": latest.as_dict() if latest else None,
        }
        print(json.dumps(document, default=str, indent=2))
        return EXIT_OK
    console.print(
        f"phase [bold]{status.phase}[/bold]; generation {status.current} serves"
        + (f"; building {status.building}" if status.building else "")
        + (
            f"; {status.partitions_done}/{status.partitions_total} partitions"
            if status.partitions_total
            else ""
        )
    )
    for execution in running:
        console.print(Text(f"running: {execution.name} since {execution.started}"))
    if latest is not None:
        reason = ": ".join(part for part in (latest.error, latest.cause) if part)
        console.print(
            Text(
                f"last execution: {latest.name} {latest.status.lower()} at {latest.stopped}"
                + (f" ({reason})" if reason else "")
            )
        )
    if args.follow and running:
        last = follow_execution(console, _rebuild_following(stack, running[0], args))
        if last is None:
            return EXIT_INTERRUPTED
        return _rebuild_end(console, stack, last.execution)
    return EXIT_OK


def rebuild_abort(args: argparse.Namespace, console: Console, name: str) -> int:
    from video_index.ops.jobs import abort_rebuild

    stack = open_stack(name)
    result = abort_rebuild(  # nothing running: Conflict, exit 1
        stack,
        reason="stopped by an operator (video-index rebuild abort)",
        wait=lambda: follow_cli.pause(min(args.interval, 2.0)),
    )
    for execution in result.stopped:
        console.print(Text(f"stopped execution {execution.name} ({execution.status.lower()})"))
    console.print(Text(f"aborted; generation {result.status.current} keeps serving"))
    return EXIT_OK
