"""``video-index local``: the system on one machine (docs/local.md).

``video-index local [--ready-file PATH] [--dynamodb-endpoint URL] [--api-port N]
[--visibility-timeout S] [--now ISO] [--bucket …] [--table …] [--annotations-table …]
[--queue …] [--dlq …] [--verbose] [--demo [--once]]`` runs
:class:`video_index.local.stack.LocalStack` until SIGINT (Ctrl-C) or SIGTERM, then stops
everything and removes its ready file. The ready file goes to ``--ready-file`` or the
default place (:mod:`video_index.cli.ready`), where the other commands find it; with
``--demo`` it is written once the demo's footage is in. Exit codes: 0 after a clean
shutdown, 1 the stack failed (an endpoint that does not answer included), 2 bad usage
(another running stack's ready file at the place).

AWS modules are imported inside the handlers, so importing the CLI stays cheap.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, Final
from urllib.parse import urlsplit

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE
from video_index.core.queue_settings import VISIBILITY_TIMEOUT_SECONDS

#: SQS accepts visibility timeouts of 0 s to 12 h.
MAX_VISIBILITY_TIMEOUT: Final = 12 * 60 * 60


# long: one parser's options, each with its help text; splitting it only scatters them
def register(commands: Any) -> None:
    """Add this module's subcommands to the ``video-index`` parser."""
    from video_index.local.names import LocalNames

    defaults = LocalNames()
    local = commands.add_parser(
        "local",
        help="run the whole system on this machine (moto server, workers, API)",
        description=(
            "Start a moto server (S3, SQS, CloudWatch, DynamoDB) on a free loopback "
            "port, create the bucket, the queue with its dead-letter queue and the tables "
            "like the CDK stack, route S3 events to the queue, feed them to the ingest "
            "handler like Lambda's SQS event source and serve the HTTP API on 127.0.0.1. "
            "Runs until Ctrl-C or SIGTERM. Exit code 0 after a clean shutdown, 1 when the "
            "stack failed, 2 on bad usage."
        ),
    )
    local.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help=(
            "once everything answers (with --demo: once the demo's footage is in), write the "
            "endpoints, names and credentials here as JSON, removed at shutdown; default: "
            "$VIDEO_INDEX_READY_FILE, else $XDG_RUNTIME_DIR/video-index/ready.json, else "
            "~/.cache/video-index/ready.json, where every other command finds it by itself"
        ),
    )
    local.add_argument(
        "--dynamodb-endpoint",
        type=_endpoint,
        metavar="URL",
        help=(
            "keep the tables (and read the stream) at this DynamoDB-compatible endpoint, "
            "one you run yourself, instead of the stack's moto server; the tables must not "
            "exist there yet (default: the moto server)"
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
    local.add_argument(
        "--now",
        type=_instant,
        metavar="ISO",
        help=(
            "the API's clock starts at this instant (with an offset, e.g. "
            "2026-10-26T09:00:00Z) and runs on: what is fresh, and the demo's day, follow "
            "it (default: the real clock)"
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


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def _endpoint(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an endpoint URL (http://host:port or https://host)"
        )
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has no valid port") from None
    return text


def _visibility(text: str) -> int:
    try:
        seconds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 0 <= seconds <= MAX_VISIBILITY_TIMEOUT:
        raise argparse.ArgumentTypeError(f"{seconds} is out of range (0-{MAX_VISIBILITY_TIMEOUT})")
    return seconds


def _instant(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 instant") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no offset (add Z or +HH:MM)")
    return moment


def running_from(moment: datetime) -> Callable[[], float]:
    """A clock (epoch seconds) that reads ``moment`` now and runs on at the real pace."""
    offset = moment.timestamp() - time.time()
    return lambda: time.time() + offset


# --- local -------------------------------------------------------------------------------


class _Shutdown(BaseException):
    """Raised by the signal handler while the stack is starting, to abandon the start.

    A BaseException, so no `except Exception` on the way swallows it.
    """


def _local(args: argparse.Namespace, console: Console) -> int:
    from video_index.local.names import LocalNames
    from video_index.local.ready import write_ready_file
    from video_index.local.stack import LocalStack

    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stack = LocalStack(
        dynamodb_endpoint=args.dynamodb_endpoint,
        api_port=args.api_port,
        names=LocalNames(
            bucket=args.bucket,
            table=args.table,
            annotations_table=args.annotations_table,
            queue=args.queue,
            dlq=args.dlq,
        ),
        visibility_timeout_seconds=args.visibility_timeout,
        clock=time.time if args.now is None else running_from(args.now),
    )
    stop = threading.Event()
    phase = {"starting": True}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        if phase["starting"]:
            phase["starting"] = False  # a second signal must not interrupt the cleanup
            raise _Shutdown(signal.Signals(signum).name)

    # --demo --once prints and stops: it writes no ready file, so it never competes for one
    once = args.demo and args.once
    ready_file = args.ready_file if once else _ready_file(args.ready_file, console)
    if ready_file is None and not once:
        return EXIT_USAGE
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    started = written = False
    try:
        try:
            with console.status("starting the local stack…"):
                stack.start()
            started = True
        finally:
            phase["starting"] = False
        endpoints = stack.endpoints
        _print_endpoints(console, endpoints)
        if args.demo:
            from video_index.local.demo import run_demo

            demo_now = datetime.fromtimestamp(stack.clock(), tz=UTC)
            outcome = run_demo(stack, console, demo_now)
            if args.once or outcome != EXIT_OK:
                return outcome
        # With --demo only now: a command that finds the file finds the demo's footage.
        assert ready_file is not None
        write_ready_file(ready_file, endpoints)
        written = True
        console.print(Text(f"ready file: {ready_file} (other commands find the stack there)"))
        console.print("[green]ready[/green] — Ctrl-C or SIGTERM stops everything")
        while not stop.wait(0.5):
            if not stack.worker.running:
                console.print(Text("error: the ingest worker stopped", style="red"))
                return EXIT_PROBLEM
        return EXIT_OK
    except _Shutdown:
        console.print("interrupted while starting")
        return EXIT_OK
    except Exception as exc:
        console.print(Text(f"error: the local stack failed: {exc}", style="red"))
        return EXIT_PROBLEM
    finally:
        phase["starting"] = False
        if written and ready_file is not None:
            ready_file.unlink(missing_ok=True)
        if started:
            console.print("stopping…")
        stack.stop()  # idempotent: also after a failed start
        if started:
            console.print("stopped")
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ready_file(given: Path | None, console: Console) -> Path | None:
    """Where this stack's ready file goes: ``--ready-file`` or the default place; None
    (a usage error, said) while another running stack's file is there. A stale file of
    a stack that is gone is replaced, and said so."""
    from video_index.cli.ready import default_ready_file, running, writer_pid

    path = given or default_ready_file()
    pid = writer_pid(path) if path.exists() else None
    if pid is not None and pid != os.getpid() and running(pid):
        console.print(
            Text(
                f"error: another `video-index local` (process {pid}) is running with the "
                f"ready file {path}: stop it first, or give this one --ready-file PATH",
                style="red",
            ),
            soft_wrap=True,
        )
        return None
    if pid is not None and pid != os.getpid():
        console.print(Text(f"replacing the stale ready file {path} of process {pid} (gone)"))
    return path


def _print_endpoints(console: Console, endpoints: dict[str, Any]) -> None:
    table = Table(title="video-index local", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for name in (
        "api",
        "viewer",
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
