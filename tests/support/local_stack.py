"""A ``video-index local`` subprocess for tests, and helpers to use it as other programs do.

Tests talk to it only through its ready file: S3/SQS/DynamoDB with boto3, the API
over HTTP, other commands as subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import boto3
from botocore.config import Config

from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.media.synthetic import synthetic_clip

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "worlds" / "events"
READY_TIMEOUT = 120.0
EVENT_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0
READY_KEYS = {
    "s3",
    "sqs",
    "dynamodb",
    "api",
    "viewer",
    "bucket",
    "table",
    "annotations_table",
    "queue_url",
    "dlq_url",
    "region",
    "aws_access_key_id",
    "aws_secret_access_key",
}
CLI = (sys.executable, "-m", "video_index.cli")
#: Loopback calls never go through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

T = TypeVar("T")


# --- running `video-index local` ---------------------------------------------------------


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class RunningStack:
    """A ``video-index local`` subprocess that has written its ready file."""

    ready: dict[str, Any]
    process: subprocess.Popen[bytes]
    ready_file: Path
    log: Path
    children: list[int] = field(default_factory=list)

    def client(self, service: str) -> Any:
        """A boto3 client of the stack (``s3``, ``sqs``, ``dynamodb``), as another program."""
        endpoint = self.ready["dynamodb" if service == "dynamodb" else service]
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=endpoint,
            region_name=self.ready["region"],
            aws_access_key_id=self.ready["aws_access_key_id"],
            aws_secret_access_key=self.ready["aws_secret_access_key"],
            config=Config(proxies={}, s3={"addressing_style": "path"}),
        )

    def env(self) -> dict[str, str]:
        """Environment for another program (e.g. the uploader CLI) to use this stack's S3."""
        return {
            **child_env(),
            "AWS_ENDPOINT_URL_S3": self.ready["s3"],
            "AWS_ACCESS_KEY_ID": self.ready["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": self.ready["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": self.ready["region"],
            "VIDEO_INDEX_BUCKET": self.ready["bucket"],
        }

    def get(self, path: str, **params: str) -> tuple[int, Any]:
        """``GET {api}{path}?{params}``: (status, parsed JSON body)."""
        url = f"{self.ready['api']}{path}"
        if params:
            url += "?" + urlencode(params)
        try:
            with _OPENER.open(url, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """Any request (a body is sent as JSON): (status, parsed JSON body or None, headers)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.ready['api']}{path}", data=data, method=method, headers=headers or {}
        )
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None, dict(response.headers)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            return exc.code, json.loads(raw) if raw else None, dict(exc.headers)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def start_local(directory: Path, *args: str) -> RunningStack:
    """Start ``video-index local --ready-file …`` and wait for its ready file."""
    directory.mkdir(parents=True, exist_ok=True)
    ready_file = directory / "ready.json"
    log = directory / "local.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*CLI, "local", "--ready-file", str(ready_file), *args],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready_file.exists():
        if process.poll() is not None:
            raise AssertionError(f"exited {process.returncode}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            stop(process)
            raise AssertionError(f"no ready file in {READY_TIMEOUT:.0f} s:\n{log.read_text()}")
        time.sleep(0.1)
    ready = json.loads(ready_file.read_text())
    return RunningStack(ready, process, ready_file, log, children=children_of(process.pid))


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- helpers -----------------------------------------------------------------------------


def poll(probe: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s; last: {value!r}")
        time.sleep(0.25)


def iso(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def put_segments(
    stack: RunningStack,
    device: str,
    first: datetime,
    count: int,
    duration_ms: int = 10_000,
    *,
    playable: bool = False,
) -> list[str]:
    """``count`` back-to-back video segments from ``first``; their keys. Their content is a
    line of text, or with ``playable`` real H.264 in MP4 (a page that shows frames needs it)."""
    s3 = stack.client("s3")
    keys = []
    for n in range(count):
        start = first + timedelta(milliseconds=n * duration_ms)
        content = (
            synthetic_clip(seconds=duration_ms / 1000, container="mp4", label=device, start=start)
            if playable
            else f"{device} segment {n} at {start.isoformat()}".encode()
        )
        key = format_key(
            SegmentKey(
                kind="video",
                device=device,
                start=start,
                duration_ms=duration_ms,
                id=segment_id("video", device, start, duration_ms, content),
                ext="mp4",
            )
        )
        s3.put_object(Bucket=stack.ready["bucket"], Key=key, Body=content)
        keys.append(key)
    return keys


def indexed(stack: RunningStack, device: str, count: int, timeout: float = 60) -> None:
    """Wait until the API counts ``count`` segments of ``device``."""

    def segments() -> int:
        status, body = stack.get(f"/devices/{device}")
        return sum(k["segments"] for k in body["kinds"].values()) if status == 200 else 0

    poll(segments, lambda found: found == count, f"{device} indexed", timeout)


def listed(stack: RunningStack, device: str, start: datetime, end: datetime) -> set[str]:
    status, body = stack.get(f"/devices/{device}/segments", **{"from": iso(start), "to": iso(end)})
    assert status == 200, body
    return {item["key"] for item in body["items"]}


def queue_depth(stack: RunningStack, url_key: str) -> int:
    attributes = stack.client("sqs").get_queue_attributes(
        QueueUrl=stack.ready[url_key],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def accepts(endpoint: str) -> bool:
    parts = urlsplit(endpoint)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=1):
            return True
    except OSError:
        return False


def _cmdline(pid: int) -> str | None:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None


def children_of(pid: int) -> list[int]:
    """Child processes of ``pid`` (Linux /proc; empty elsewhere)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.extend(int(child) for child in task.read_text().split())
        except OSError:
            continue
    return found


def assert_nothing_left(stack: RunningStack, started_elsewhere: tuple[str, ...] = ()) -> None:
    """No ready file, child process or port of the stack is left; the endpoints named in
    ``started_elsewhere`` (e.g. ``dynamodb`` given with ``--dynamodb-endpoint``) are not
    the stack's to close."""
    ready = stack.ready
    assert not stack.ready_file.exists(), "the ready file was not removed"
    for pid in stack.children:
        assert _cmdline(pid) is None, f"child {pid} still runs: {_cmdline(pid)}"
    for name in ("s3", "dynamodb", "api"):
        if name in started_elsewhere:
            continue
        assert not accepts(ready[name]), f"{name} ({ready[name]}) still accepts connections"
