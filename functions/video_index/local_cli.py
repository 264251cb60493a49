"""``video-index local`` and ``video-index status``: the system on one machine (SPEC §10).

``video-index local [--ready-file PATH] [--dynamodb local|moto] [--api-port N]
[--visibility-timeout S] [--bucket …] [--table …] [--annotations-table …] [--queue …]
[--dlq …] [--verbose]`` runs :class:`video_index.local.stack.LocalStack` until
SIGINT (Ctrl-C) or SIGTERM, then stops everything and removes the ready file.
Exit codes: 0 after a clean shutdown, 1 the stack failed, 2 bad usage or DynamoDB
Local cannot run (no Java, not installed; the message says how to fix it).

``video-index status [--ready-file PATH | --queue-url URL --dlq-url URL --table NAME]
[--json]``: exit 0 when healthy, 1 when the dead-letter queue holds messages (or a
figure could not be read), 2 bad usage.

AWS modules are imported inside the handlers, so importing the CLI stays cheap.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.queue_settings import VISIBILITY_TIMEOUT_SECONDS

EXIT_OK: Final = 0
EXIT_PROBLEM: Final = 1
EXIT_USAGE: Final = 2
#: SQS accepts visibility timeouts of 0 s to 12 h.
MAX_VISIBILITY_TIMEOUT: Final = 12 * 60 * 60


def register(commands: Any) -> None:
    """Add this module's subcommands to the ``video-index`` parser."""
    from video_index.local.names import DYNAMODB_ENGINES, LocalNames

    defaults = LocalNames()
    local = commands.add_parser(
        "local",
        help="run the whole system on this machine (moto, DynamoDB Local, worker, API)",
        description=(
            "Start a moto server (S3, SQS, CloudWatch) and DynamoDB Local on free loopback "
            "ports, create the bucket, the queue with its dead-letter queue and the tables "
            "like the CDK stack, route S3 events to the queue, feed them to the ingest "
            "handler like Lambda's SQS event source and serve the HTTP API on 127.0.0.1. "
            "Runs until Ctrl-C or SIGTERM. Exit code 0 after a clean shutdown, 1 when the "
            "stack failed, 2 on bad usage or when DynamoDB Local cannot run."
        ),
    )
    local.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help=(
            "once everything answers, write the endpoints, names and credentials here as "
            "JSON (removed at shutdown)"
        ),
    )
    local.add_argument(
        "--dynamodb",
        choices=DYNAMODB_ENGINES,
        default="local",
        help=(
            "local: AWS's DynamoDB Local (needs Java 17+, `make install`); moto: moto's "
            "emulation, no Java needed (default: local)"
        ),
    )
    local.add_argument(
        "--api-port", type=_port, metavar="N", help="port of the HTTP API (default: a free one)"
    )
    local.add_argument(
        "--visibility-timeout",
        type=_visibility,
        default=VISIBILITY_TIMEOUT_SECONDS,
        metavar="S",
        help=(
            "seconds a received message stays hidden before it is redelivered "
            f"(default: {VISIBILITY_TIMEOUT_SECONDS}, 6 × the ingest timeout, like the "
            "stack; lower it to see retries and the DLQ sooner)"
        ),
    )
    local.add_argument("--bucket", default=defaults.bucket, help="default: %(default)s")
    local.add_argument("--table", default=defaults.table, help="default: %(default)s")
    local.add_argument(
        "--annotations-table", default=defaults.annotations_table, help="default: %(default)s"
    )
    local.add_argument("--queue", default=defaults.queue, help="default: %(default)s")
    local.add_argument("--dlq", default=defaults.dlq, help="default: %(default)s")
    local.add_argument(
        "--verbose", action="store_true", help="log every API request and ingest batch"
    )
    local.add_argument(
        "--demo",
        action="store_true",
        help="simulated cameras upload through the uploader; print calendars, ranges, totals",
    )
    local.add_argument(
        "--once",
        action="store_true",
        help="with --demo: stop after printing (exit code of the demo)",
    )
    local.set_defaults(handler=lambda args, console, _: _local(args, console), parser=local)

    status = commands.add_parser(
        "status",
        help="queue and DLQ depth, oldest message age, read-model generation, last reconcile",
        description=(
            "Show whether ingest keeps up, for the local stack (--ready-file) or a deployed "
            "one (--queue-url, --dlq-url, --table, or VIDEO_INDEX_QUEUE_URL, "
            "VIDEO_INDEX_DLQ_URL, VIDEO_INDEX_TABLE; AWS credentials and endpoints from the "
            "usual boto3 configuration). Read-only. Exit code 0 when healthy, 1 when the "
            "dead-letter queue is not empty or a figure could not be read, 2 on bad usage."
        ),
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


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def _visibility(text: str) -> int:
    try:
        seconds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 0 <= seconds <= MAX_VISIBILITY_TIMEOUT:
        raise argparse.ArgumentTypeError(f"{seconds} is out of range (0-{MAX_VISIBILITY_TIMEOUT})")
    return seconds


# --- local -------------------------------------------------------------------------------


class _Shutdown(BaseException):
    """Raised by the signal handler while the stack is starting, to abandon the start.

    A BaseException, so no `except Exception` on the way swallows it.
    """


def _local(args: argparse.Namespace, console: Console) -> int:
    from video_index.dynamodb_local import DynamoDBLocalError
    from video_index.local.names import LocalNames
    from video_index.local.stack import LocalStack, write_ready_file

    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stack = LocalStack(
        dynamodb=args.dynamodb,
        api_port=args.api_port,
        names=LocalNames(
            bucket=args.bucket,
            table=args.table,
            annotations_table=args.annotations_table,
            queue=args.queue,
            dlq=args.dlq,
        ),
        visibility_timeout_seconds=args.visibility_timeout,
    )
    stop = threading.Event()
    phase = {"starting": True}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        if phase["starting"]:
            phase["starting"] = False  # a second signal must not interrupt the cleanup
            raise _Shutdown(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    ready_file: Path | None = args.ready_file
    started = False
    try:
        try:
            with console.status("starting the local stack…"):
                stack.start()
            started = True
        finally:
            phase["starting"] = False
        endpoints = stack.endpoints
        _print_endpoints(console, endpoints)
        if ready_file is not None:
            write_ready_file(ready_file, endpoints)
            console.print(Text(f"ready file: {ready_file}"))
        if args.demo:
            from video_index.local.demo import run_demo

            outcome = run_demo(stack, console)
            if args.once or outcome != EXIT_OK:
                return outcome
        console.print("[green]ready[/green] — Ctrl-C or SIGTERM stops everything")
        while not stop.wait(0.5):
            if not stack.worker.running:
                console.print(Text("error: the ingest worker stopped", style="red"))
                return EXIT_PROBLEM
        return EXIT_OK
    except _Shutdown:
        console.print("interrupted while starting")
        return EXIT_OK
    except DynamoDBLocalError as exc:
        console.print(Text(f"error: {exc}", style="bold red"))
        console.print(
            "To run without Java and DynamoDB Local, use moto's DynamoDB instead: "
            "video-index local --dynamodb moto",
            markup=False,
        )
        return EXIT_USAGE
    except Exception as exc:
        console.print(Text(f"error: the local stack failed: {exc}", style="red"))
        return EXIT_PROBLEM
    finally:
        phase["starting"] = False
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
        if started:
            console.print("stopping…")
        stack.stop()  # idempotent: also after a failed start
        if started:
            console.print("stopped")
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _print_endpoints(console: Console, endpoints: dict[str, Any]) -> None:
    table = Table(title="video-index local", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for name in (
        "api",
        "s3",
        "sqs",
        "dynamodb",
        "bucket",
        "table",
        "annotations_table",
        "queue_url",
        "dlq_url",
        "region",
        "aws_access_key_id",
        "aws_secret_access_key",
    ):
        table.add_row(name, Text(str(endpoints[name])))
    console.print(table)
    console.print(
        Text(
            f"Upload with: AWS_ENDPOINT_URL_S3={endpoints['s3']} "
            f"AWS_ACCESS_KEY_ID={endpoints['aws_access_key_id']} "
            f"AWS_SECRET_ACCESS_KEY={endpoints['aws_secret_access_key']} "
            f"AWS_DEFAULT_REGION={endpoints['region']} "
            f"VIDEO_INDEX_BUCKET={endpoints['bucket']} video-index upload …"
        )
    )


# --- status ------------------------------------------------------------------------------


def _status(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    from video_index.local.status import StatusTarget, collect
    from video_index.settings import ENV_DLQ_URL, ENV_QUEUE_URL, ENV_TABLE

    if args.ready_file is not None:
        if args.queue_url or args.dlq_url or args.table:
            parser.error("argument --ready-file: not allowed with --queue-url, --dlq-url, --table")
        target = _ready_file_target(args.ready_file, console)
        if target is None:
            return EXIT_PROBLEM
    else:
        import boto3

        from video_index.services import CLIENT_CONFIG

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
            parser.error(f"give --ready-file, or all of: {', '.join(missing)}")
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
    status = collect(target)
    if args.json:
        print(json.dumps(status, indent=2, default=str))
    else:
        _print_status(console, status)
    return EXIT_OK if status["healthy"] else EXIT_PROBLEM


def _ready_file_target(path: Path, console: Console) -> Any:
    from video_index.local.aws import client, isolated_session
    from video_index.local.stack import read_ready_file
    from video_index.local.status import StatusTarget

    try:
        ready = read_ready_file(path)
        session = isolated_session(
            ready["aws_access_key_id"], ready["aws_secret_access_key"], ready["region"]
        )
        return StatusTarget(
            queue_url=ready["queue_url"],
            dlq_url=ready["dlq_url"],
            table=ready["table"],
            sqs=client(session, "sqs", ready["sqs"]),
            dynamodb=client(session, "dynamodb", ready["dynamodb"]),
            cloudwatch=client(session, "cloudwatch", ready.get("cloudwatch", ready["sqs"])),
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
        if rebuild.get("partitions_total"):
            text += f" {rebuild.get('partitions_done', 0)}/{rebuild['partitions_total']} partitions"
    table.add_row("read-model generation", Text(text))
    reconcile = status["last_reconcile"]
    table.add_row(
        "last reconcile",
        Text("none yet" if reconcile is None else json.dumps(reconcile, sort_keys=True)),
    )
    for error in status["errors"]:
        table.add_row("error", Text(error, style="red"))
    console.print(table)
