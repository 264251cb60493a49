"""``video-index status``: is ingest keeping up? For the local stack or a deployed one.

``video-index status [--stack NAME | --ready-file PATH | --queue-url URL --dlq-url URL
--table NAME] [--json]``: exit 0 when healthy, 1 when the dead-letter queue holds
messages, the last reconcile or rebuild execution failed (or a figure could not be
read), 2 bad usage or configuration (an unknown stack, no credentials), 3 AWS
unavailable. The figures are :mod:`video_index.ops.status`'s.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, guarded


def register(commands: Any) -> None:
    """Add ``status`` to the ``video-index`` parser."""
    status = commands.add_parser(
        "status",
        help=(
            "queue and DLQ depth, oldest message age, read-model generation, aggregation "
            "lag, last reconcile"
        ),
        description=(
            "Show whether ingest keeps up, for a deployed stack (--stack NAME, or "
            "VIDEO_INDEX_STACK: everything is found in its outputs, with its reconcile and "
            "rebuild executions), the local stack (--ready-file) or explicit resources "
            "(--queue-url, --dlq-url, --table, or VIDEO_INDEX_QUEUE_URL, "
            "VIDEO_INDEX_DLQ_URL, VIDEO_INDEX_TABLE; AWS credentials and endpoints from the "
            "usual boto3 configuration). Read-only. Exit code 0 when healthy, 1 when the "
            "dead-letter queue is not empty, the last execution failed or a figure could "
            "not be read, 2 on bad usage or configuration, 3 when AWS is unavailable."
        ),
    )
    status.add_argument(
        "--stack",
        metavar="NAME",
        help="the deployed stack (its CloudFormation name; default $VIDEO_INDEX_STACK)",
    )
    status.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="the ready file of `video-index local` (its endpoints and credentials)",
    )
    status.add_argument("--queue-url", metavar="URL", help="notification queue URL")
    status.add_argument("--dlq-url", metavar="URL", help="dead-letter queue URL")
    status.add_argument("--table", metavar="NAME", help="read-model table name")
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")
    status.set_defaults(
        handler=lambda args, console, parser: _status(args, console, parser), parser=status
    )


# --- status ------------------------------------------------------------------------------


def _status(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    from video_index.cli.targets import ENV_STACK
    from video_index.core.contract import ENV_DLQ_URL, ENV_QUEUE_URL, ENV_TABLE
    from video_index.ops.status import StatusTarget

    explicit = args.ready_file is not None or args.queue_url or args.dlq_url or args.table
    stack = args.stack or (None if explicit else os.environ.get(ENV_STACK))
    if stack:
        if explicit:
            parser.error(
                "argument --stack: not allowed with --ready-file, --queue-url, --dlq-url, --table"
            )
        return guarded(console, lambda: _show(args, console, _stack_target(stack)))
    if args.ready_file is not None:
        if args.queue_url or args.dlq_url or args.table:
            parser.error("argument --ready-file: not allowed with --queue-url, --dlq-url, --table")
        target = _ready_file_target(args.ready_file, console)
        if target is None:
            return EXIT_PROBLEM
    else:
        import boto3

        from video_index.aws.clients import CLIENT_CONFIG

        queue_url = args.queue_url or os.environ.get(ENV_QUEUE_URL)
        dlq_url = args.dlq_url or os.environ.get(ENV_DLQ_URL)
        table = args.table or os.environ.get(ENV_TABLE)
        missing = [
            f"{flag} (or {env})"
            for flag, env, value in (
                ("--queue-url", ENV_QUEUE_URL, queue_url),
                ("--dlq-url", ENV_DLQ_URL, dlq_url),
                ("--table", ENV_TABLE, table),
            )
            if not value
        ]
        if missing:
            from video_index.cli.ready import missing_target_note

            parser.error(
                f"give --stack NAME, --ready-file PATH, or all of: {', '.join(missing)}; "
                f"{missing_target_note()}"
            )
        assert queue_url and dlq_url and table
        session = boto3.session.Session()
        target = StatusTarget(
            queue_url=queue_url,
            dlq_url=dlq_url,
            table=table,
            sqs=session.client("sqs", config=CLIENT_CONFIG),
            dynamodb=session.client("dynamodb", config=CLIENT_CONFIG),
            cloudwatch=session.client("cloudwatch", config=CLIENT_CONFIG),
        )
    return _show(args, console, target)


def _show(args: argparse.Namespace, console: Console, target: Any) -> int:
    from video_index.ops.status import collect

    status = collect(target)
    if args.json:
        print(json.dumps(status, indent=2, default=str))
    else:
        _print_status(console, status)
    return EXIT_OK if status["healthy"] else EXIT_PROBLEM


def _stack_target(name: str) -> Any:
    """Everything the status reads, from the deployed stack's outputs."""
    from video_index.cli.targets import open_stack
    from video_index.ops.jobs import REBUILD, RECONCILE
    from video_index.ops.status import StatusTarget

    stack = open_stack(name)
    settings = stack.settings()
    return StatusTarget(
        queue_url=settings.queue_url,
        dlq_url=settings.dlq_url,
        table=settings.table,
        sqs=stack.client("sqs"),
        dynamodb=stack.client("dynamodb"),
        cloudwatch=stack.client("cloudwatch"),
        stepfunctions=stack.client("stepfunctions"),
        state_machines={job.name: stack[job.state_machine_output] for job in (RECONCILE, REBUILD)},
    )


def _ready_file_target(path: Path, console: Console) -> Any:
    from video_index.local.ready import ReadyStack
    from video_index.ops.status import StatusTarget

    try:
        ready = ReadyStack.read(path)
        return StatusTarget(
            queue_url=ready["queue_url"],
            dlq_url=ready["dlq_url"],
            table=ready["table"],
            sqs=ready.client("sqs"),
            dynamodb=ready.client("dynamodb"),
            cloudwatch=ready.client("cloudwatch"),
            api_clock=ready.clock(),
        )
    except FileNotFoundError:
        console.print(
            Text(f"error: no ready file at {path}: is `video-index local` running?", style="red")
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        console.print(Text(f"error: cannot use the ready file {path}: {exc!r}", style="red"))
    return None


def _print_status(console: Console, status: dict[str, Any]) -> None:
    table = Table(title="video-index status", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")

    def depth(queue: dict[str, Any]) -> Text:
        if queue.get("depth") is None:
            return Text("unavailable", style="red")
        return Text(
            f"{queue['depth']} ({queue['visible']} visible, {queue['in_flight']} in flight, "
            f"{queue['delayed']} delayed)"
        )

    table.add_row("queue depth", depth(status["queue"]))
    dlq = status["dlq"]
    dlq_text = depth(dlq)
    if dlq.get("depth"):
        dlq_text.stylize("bold red")
    table.add_row("DLQ depth", dlq_text)
    age = status["oldest_message_age_seconds"]
    table.add_row("oldest message age", Text("unknown" if age is None else f"{age:.0f} s"))
    model = status["read_model"]
    generation = model.get("generation")
    text = "unavailable" if generation is None else f"g{generation}"
    if model.get("building") is not None:
        text += f" (building g{model['building']})"
    rebuild = model.get("rebuild")
    if rebuild:
        text += f"; rebuild {rebuild.get('phase', '?')}"
        if rebuild.get("partitions_total") and model.get("building") is not None:
            text += f" {rebuild.get('partitions_done', 0)}/{rebuild['partitions_total']} partitions"
        if rebuild.get("error"):
            text += f" ({rebuild['error']})"
    table.add_row("read-model generation", Text(text))
    aggregation = status.get("aggregation")
    table.add_row(
        "aggregation",
        Text(
            "nothing aggregated yet"
            if aggregation is None
            else f"last batch applied {aggregation['applied_ago_seconds']:.0f} s ago "
            f"({aggregation['applied_at']}), lag {aggregation['lag_seconds']:.1f} s"
        ),
    )
    reconcile = status["last_reconcile"]
    table.add_row(
        "last reconcile",
        Text("none yet" if reconcile is None else _reconcile_text(reconcile)),
    )
    silent = status.get("silent") or []
    table.add_row(
        "silent cameras",
        Text(
            ", ".join(f"{s['device']} (since {s['silent_since']})" for s in silent[:20])
            + (f" and {len(silent) - 20} more" if len(silent) > 20 else "")
            or "none",
            style="yellow" if silent else "",
        ),
    )
    _clock_rows(table, status.get("clocks") or {})
    for job, executions in (status.get("executions") or {}).items():
        table.add_row(f"{job} executions", _executions_text(executions))
    for problem in status.get("problems", []):
        table.add_row("problem", Text(problem, style="bold red"))
    for error in status["errors"]:
        table.add_row("error", Text(error, style="red"))
    console.print(table)


def _clock_rows(table: Table, clocks: dict[str, Any]) -> None:
    """The cameras whose clock runs ahead, and the largest upload delays
    (docs/operations.md#camera-clocks)."""
    ahead, late = clocks.get("ahead") or [], clocks.get("upload_delay") or []
    table.add_row(
        "clocks ahead",
        Text(
            ", ".join(f"{c['device']} ({c['ahead_ms'] / 1000:.1f} s)" for c in ahead[:20])
            + (f" and {len(ahead) - 20} more" if len(ahead) > 20 else "")
            or "none",
            style="yellow" if ahead else "",
        ),
    )
    table.add_row(
        "upload delays",
        Text(
            ", ".join(f"{c['device']} ({c['upload_delay_ms'] / 1000:.1f} s)" for c in late[:5])
            or "none",
        ),
    )


def _executions_text(executions: dict[str, Any]) -> Text:
    if executions.get("running") is None:
        return Text("unavailable", style="red")
    lines = [
        f"running: {execution['name']} since {execution['started']}"
        for execution in executions["running"]
    ] or ["none running"]
    last = executions.get("last")
    if last is None:
        lines.append("none finished yet")
    else:
        line = f"last: {last['name']} {last['status'].lower()} at {last['stopped']}"
        if last.get("error") or last.get("cause"):
            line += f" ({last.get('error')}: {last.get('cause')})"
        output = last.get("output") or {}
        if "partitions_checked" in output:  # a reconcile report
            line += (
                f"; {output['partitions_checked']} partitions checked, "
                f"{output['partitions_repaired']} repaired"
            )
        if "current" in output:  # a rebuild's finish
            line += f"; generation {output['current']} serves"
        lines.append(line)
    return Text("\n".join(lines))


def _reconcile_text(reconcile: dict[str, Any]) -> str:
    """The last reconcile in words (its JSON is ``status --json``'s)."""
    return (
        f"{reconcile.get('run_id')} ({reconcile.get('source')}) at {reconcile.get('finished_at')}: "
        f"{reconcile.get('partitions_checked', 0)} partitions checked, "
        f"{reconcile.get('partitions_repaired', 0)} repaired (entries +"
        f"{reconcile.get('entries_added', 0)} -{reconcile.get('entries_removed', 0)} ~"
        f"{reconcile.get('entries_fixed', 0)})"
    )
