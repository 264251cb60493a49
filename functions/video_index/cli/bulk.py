"""``video-index restore --stack NAME --from-bucket REPLICA`` and ``video-index delete
--stack NAME --device D [--device D2 …] --from ISO --to ISO``: restore and deletion at
fleet size on the deployed stack's state machines (docs/bulk.md).

Each starts an execution, follows it with the progress bar of
:mod:`video_index.cli.follow` (units done of the Distributed Map's items, from
``DescribeMapRun``), detaches on Ctrl-C (the execution runs on), and prints the report:
for a restore what was copied, skipped (identical, withheld by deletion requests) and
failed (units, named in the report), a second run copying nothing; for a deletion its
jobs done, keys deleted and versions erased, and its failed units.
"""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

from rich.console import Console
from rich.text import Text

from video_index.bulk.names import (
    OUTPUT_BULK_DELETE_STATE_MACHINE,
    OUTPUT_RESTORE_STATE_MACHINE,
)
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM
from video_index.cli.follow import Following, follow_execution, outcome
from video_index.cli.targets import open_stack
from video_index.core.timeunits import to_epoch_ms
from video_index.ops.follow import Progress


def map_progress(stepfunctions: Any, execution_arn: str) -> Progress | None:
    """Units done of the execution's Distributed Map (none before the map has started)."""
    runs = stepfunctions.list_map_runs(executionArn=execution_arn).get("mapRuns", [])
    if not runs:
        return Progress(phase="planning")
    counts = stepfunctions.describe_map_run(mapRunArn=runs[0]["mapRunArn"])["itemCounts"]
    done = int(counts.get("succeeded", 0)) + int(counts.get("failed", 0))
    return Progress(phase="copying units", done=done, total=int(counts.get("total", 0)) or None)


def restore_summary(report: dict[str, Any]) -> str:
    verb = "would copy" if report.get("dry_run") else "copied"
    return (
        f"{verb} {report.get('copied', 0):,} ({report.get('bytes_copied', 0):,} bytes), "
        f"skipped {report.get('identical', 0):,} identical and {report.get('withheld', 0):,} "
        f"withheld by deletion requests ({report.get('held', 0):,} held copied back), "
        f"failed units {report.get('failed_batches', 0)}"
    )


def delete_summary(report: dict[str, Any]) -> str:
    return (
        f"{report.get('done', 0):,} of {report.get('units', 0):,} deletion jobs done: deleted "
        f"{report.get('deleted', 0):,} keys ({report.get('versions_deleted', 0):,} versions "
        f"erased), failed units {report.get('failed_batches', 0)}"
    )


def restore_deployed(args: argparse.Namespace, console: Console) -> int:
    """``video-index restore --stack``: the replica copied back on the restore machine."""
    payload = {
        "source_bucket": args.from_bucket,
        "manifest": args.manifest,
        "dry_run": args.dry_run,
    }
    return _run_machine(args, console, OUTPUT_RESTORE_STATE_MACHINE, "restore", payload)


def delete_deployed(args: argparse.Namespace, console: Console, created_by: str) -> int:
    """``video-index delete --stack``: a deletion of any length over several devices on the
    bulk deletion machine (one recorded, checkpointed request per device and 31 days)."""
    payload = {
        "devices": args.device,
        "from_ms": to_epoch_ms(args.start),
        "to_ms": to_epoch_ms(args.end),
        "kind": args.kind,
        "erase": args.erase,
        "created_by": created_by,
    }
    return _run_machine(args, console, OUTPUT_BULK_DELETE_STATE_MACHINE, "delete", payload)


def _run_machine(
    args: argparse.Namespace, console: Console, output: str, job: str, payload: dict[str, Any]
) -> int:
    """Start the machine the stack names under ``output``, follow its map's units with the
    progress bar (Ctrl-C detaches; the run goes on), print its report's summary."""
    stack = open_stack(args.stack)
    executions = stack.executions(output)
    run_id = f"{job}-{uuid.uuid4().hex[:12]}"
    payload = {**payload, "run_id": run_id}
    execution = executions.start(run_id, payload)
    console.print(Text(f"started {job} {run_id} with {json.dumps(payload)}"), soft_wrap=True)
    following = Following(
        job=job,
        execution=execution,
        describe=lambda: executions.describe(execution.arn),
        progress=lambda: map_progress(stack.client("stepfunctions"), execution.arn),
        interval=args.interval,
        follow_again=f"aws stepfunctions describe-execution --execution-arn {execution.arn}",
        stop=f"the Step Functions console (a {job} stopped anywhere is continued by a new one)",
    )
    last = follow_execution(console, following)
    if last is None:
        return EXIT_INTERRUPTED
    code = outcome(console, job, last.execution)
    report = last.execution.output
    if isinstance(report, str):
        report = json.loads(report)
    if code == EXIT_OK and isinstance(report, dict):
        console.print(Text(restore_summary(report) if job == "restore" else delete_summary(report)))
        if report.get("failed_batches"):
            for failure in report.get("failures", []):
                console.print(Text(f"  failed: {failure.get('cause')}", style="red"))
            return EXIT_PROBLEM
    return code
