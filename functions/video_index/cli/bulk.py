"""``video-index restore --stack NAME --from-bucket REPLICA``: restore at fleet size on
the deployed restore state machine (docs/bulk.md).

Starts an execution, follows it with the progress bar of :mod:`video_index.cli.follow`
(units done of the Distributed Map's items, from ``DescribeMapRun``), detaches on
Ctrl-C (the execution runs on), and prints what was copied, skipped (identical,
withheld by deletion requests) and failed (units, named in the report). A second run
copies nothing.
"""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

from rich.console import Console
from rich.text import Text

from video_index.bulk.names import OUTPUT_RESTORE_STATE_MACHINE
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM
from video_index.cli.follow import Following, follow_execution, outcome
from video_index.cli.targets import open_stack
from video_index.ops.follow import Progress


def map_progress(stepfunctions: Any, execution_arn: str) -> Progress | None:
    """Units done of the execution's Distributed Map (none before the map has started)."""
    runs = stepfunctions.list_map_runs(executionArn=execution_arn).get("mapRuns", [])
    if not runs:
        return Progress(phase="planning")
    counts = stepfunctions.describe_map_run(mapRunArn=runs[0]["mapRunArn"])["itemCounts"]
    done = int(counts.get("succeeded", 0)) + int(counts.get("failed", 0))
    return Progress(phase="copying units", done=done, total=int(counts.get("total", 0)) or None)


def summary(report: dict[str, Any]) -> str:
    verb = "would copy" if report.get("dry_run") else "copied"
    return (
        f"{verb} {report.get('copied', 0):,} ({report.get('bytes_copied', 0):,} bytes), "
        f"skipped {report.get('identical', 0):,} identical and {report.get('withheld', 0):,} "
        f"withheld by deletion requests ({report.get('held', 0):,} held copied back), "
        f"failed units {report.get('failed_batches', 0)}"
    )


def restore_deployed(args: argparse.Namespace, console: Console) -> int:
    stack = open_stack(args.stack)
    executions = stack.executions(OUTPUT_RESTORE_STATE_MACHINE)
    run_id = f"restore-{uuid.uuid4().hex[:12]}"
    payload = {
        "source_bucket": args.from_bucket,
        "manifest": args.manifest,
        "dry_run": args.dry_run,
        "run_id": run_id,
    }
    execution = executions.start(run_id, payload)
    console.print(Text(f"started restore {run_id} with {json.dumps(payload)}"), soft_wrap=True)
    following = Following(
        job="restore",
        execution=execution,
        describe=lambda: executions.describe(execution.arn),
        progress=lambda: map_progress(stack.client("stepfunctions"), execution.arn),
        interval=args.interval,
        follow_again=f"aws stepfunctions describe-execution --execution-arn {execution.arn}",
        stop="the Step Functions console (a restore stopped anywhere is continued by a new one)",
    )
    last = follow_execution(console, following)
    if last is None:
        return EXIT_INTERRUPTED
    code = outcome(console, "restore", last.execution)
    report = last.execution.output
    if isinstance(report, str):
        report = json.loads(report)
    if code == EXIT_OK and isinstance(report, dict):
        console.print(Text(summary(report)))
        if report.get("failed_batches"):
            for failure in report.get("failures", []):
                console.print(Text(f"  failed: {failure.get('cause')}", style="red"))
            return EXIT_PROBLEM
    return code
