"""``video-index demo``: the real ingest code on one machine, with nothing to deploy.

What runs:

* **S3 and SQS** — moto, in-process (``mock_aws``): a versioned segment bucket.
* **DynamoDB** — AWS's DynamoDB Local (the real engine: conditional writes,
  transactions), started on a free loopback port and stopped at the end.
* **Cameras** — three simulated cameras upload about two hours of 10 s video
  segments each over the last two complete UTC days, with realistic gaps (a
  reboot, a lost upload, motion-triggered clips), plus sensor and analysis JSON
  sidecars. One segment is deleted afterwards, and one camera uploads a key whose
  hour folder is in local time (invalid: never indexed).
* **Events** — for every upload and delete, the S3 event notification S3 would
  send (URL-encoded key, size, eTag, version id, sequencer increasing per key),
  wrapped in SQS messages and delivered in Lambda-style batches of 10 to
  :class:`~video_index.ingest_batches.IngestService`, exactly the object the
  ingest Lambda calls. One message is delivered twice and one arrives late, after
  the delete of its key, as SQS and S3 allow.

Then it reads the read model back (bucket items for totals, segment items for
continuous ranges), checks it against a fresh listing of the bucket — the
source of truth (SPEC §1) — and prints it all.

Nothing here reaches AWS: credentials, region and config files are replaced in
``os.environ`` for the duration of :func:`run_demo` only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from unittest import mock
from urllib.parse import quote_plus

import boto3
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from video_index.dynamodb_local import DynamoDBLocal, DynamoDBLocalError
from video_index.ingest import Outcome
from video_index.ingest_batches import IngestService
from video_index.keys import (
    KEY_PREFIX,
    KINDS,
    SegmentKey,
    ValidKey,
    classify_key,
    format_key,
    from_epoch_ms,
    segment_id,
)
from video_index.layout import QUARTERS, bucket_pk, devices_pk, segment_pk
from video_index.ranges import merge_ranges
from video_index.services import Clients, build_ingest_service
from video_index.settings import Settings
from video_index.store import ReadModelStore
from video_index.table_schema import create_tables

REGION: Final = "us-east-1"
BUCKET: Final = "video-index-demo-segments"
TABLE: Final = "video-index-demo-read-model"
QUEUE: Final = "video-index-demo-notifications"
ACCOUNT: Final = "123456789012"
BATCH_SIZE: Final = 10
#: Receives before a message would go to the DLQ (the stack's default max_receive_count).
MAX_RECEIVES: Final = 5
SEGMENT_MS: Final = 10_000
SENSOR_MS: Final = 60_000
SEED: Final = 20261130
_FAKE_ENV: Final = {
    "AWS_ACCESS_KEY_ID": "demo",
    "AWS_SECRET_ACCESS_KEY": "demo",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    # No profile, config or credentials file of the user's may redirect a client.
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "POWERTOOLS_TRACE_DISABLED": "1",
}


# --- the cameras ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """One stretch of recording: ``segments`` video segments of 10 s from ``start``."""

    start: datetime
    segments: int
    #: Milliseconds between one segment's end and the next one's start (encoder jitter).
    jitter_ms: int = 0
    #: Indexes of segments whose upload was lost (a real hole in the footage).
    lost: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Camera:
    device: str
    description: str
    sessions: tuple[Session, ...]


def cameras(day_a: datetime, day_b: datetime) -> tuple[Camera, ...]:
    """The three simulated cameras; ``day_a`` and ``day_b`` are consecutive UTC midnights."""
    hours = timedelta(hours=1)
    return (
        Camera(
            "cam-001",
            "entrance: reboots once (3 min gap); one segment is deleted later",
            (
                Session(day_a + 7 * hours, 240),
                Session(day_a + 7 * hours + timedelta(minutes=43), 120),
                Session(day_b + 7 * hours, 360),
            ),
        ),
        Camera(
            "cam-002",
            "parking: records across UTC midnight with 250 ms gaps; one upload lost",
            (
                Session(day_a + 23.5 * hours, 360, jitter_ms=250),
                Session(day_b + 12 * hours, 360, lost=frozenset({120})),
            ),
        ),
        Camera(
            "cam-003",
            "loading dock: motion-triggered 20 min clips; one key has a local-time folder",
            tuple(Session(day_b + (6 + 2 * i) * hours, 120) for i in range(6)),
        ),
    )


# --- S3 and the events it sends ------------------------------------------------------------


def _iso(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def s3_record(
    *,
    event_name: str,
    key: str,
    event_time: datetime,
    sequencer: str,
    version_id: str | None,
    size: int | None = None,
    etag: str | None = None,
) -> dict[str, Any]:
    """One S3 event notification record, shaped as S3 sends it (event structure 2.1).

    The key is URL-encoded form style, as S3 does; removals carry no size or eTag.
    """
    obj: dict[str, Any] = {"key": quote_plus(key, safe="/")}
    if size is not None:
        obj["size"] = size
    if etag is not None:
        obj["eTag"] = etag
    if version_id is not None:
        obj["versionId"] = version_id
    obj["sequencer"] = sequencer
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": REGION,
        "eventTime": _iso(event_time),
        "eventName": event_name,
        "userIdentity": {"principalId": "AWS:AIDADEMOCAMERAUPLOADER"},
        "requestParameters": {"sourceIPAddress": "203.0.113.10"},
        "responseElements": {
            "x-amz-request-id": uuid.uuid4().hex[:16].upper(),
            "x-amz-id-2": uuid.uuid4().hex,
        },
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": "video-index-notifications",
            "bucket": {
                "name": BUCKET,
                "ownerIdentity": {"principalId": "A3DEMOOWNER"},
                "arn": f"arn:aws:s3:::{BUCKET}",
            },
            "object": obj,
        },
    }


def s3_test_event_body() -> str:
    """What S3 sends once when a notification configuration is saved."""
    return json.dumps(
        {
            "Service": "Amazon S3",
            "Event": "s3:TestEvent",
            "Time": _iso(datetime.now(UTC)),
            "Bucket": BUCKET,
            "RequestId": uuid.uuid4().hex[:16].upper(),
            "HostId": uuid.uuid4().hex,
        }
    )


def sqs_record(body: str, *, sent: datetime, receive_count: int = 1) -> dict[str, Any]:
    """One record of the event Lambda's SQS event source passes to the function."""
    sent_ms = str(int(sent.timestamp() * 1000))
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": f"AQEB{uuid.uuid4().hex}",
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": sent_ms,
            "SenderId": "AIDAIENQZJOLO23YVJ4VO",
            "ApproximateFirstReceiveTimestamp": sent_ms,
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode()).hexdigest(),  # SQS's own checksum
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{QUEUE}",
        "awsRegion": REGION,
    }


@dataclass
class Message:
    """One SQS message on its way to ingest: the S3 notification body and who sent it."""

    device: str
    body: str
    sent: datetime
    receive_count: int = 1


@dataclass
class Uploads:
    """What the simulation did to the bucket, and the notifications S3 sent for it."""

    messages: list[Message] = field(default_factory=list)
    objects: Counter[str] = field(default_factory=Counter)  # per kind
    deleted: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)


class Simulation:
    """Uploads to the (moto) bucket and records the S3 event S3 sends for each change."""

    def __init__(self, s3: Any, rng: random.Random) -> None:
        self.s3 = s3
        self.rng = rng
        self.uploads = Uploads()
        self._sequencer = 0x0062D6F4A91B3C0000

    def _next_sequencer(self) -> str:
        # S3 sequencers grow for a key; a global counter keeps that true for every key.
        self._sequencer += self.rng.randint(1, 4096)
        return f"{self._sequencer:018X}"

    def put(self, device: str, key: str, body: bytes, at: datetime) -> Message:
        response = self.s3.put_object(Bucket=BUCKET, Key=key, Body=body)
        record = s3_record(
            event_name="ObjectCreated:Put",
            key=key,
            event_time=at,
            sequencer=self._next_sequencer(),
            version_id=response.get("VersionId"),
            size=len(body),
            etag=str(response["ETag"]).strip('"'),
        )
        return self._send(device, record, at)

    def delete(self, device: str, key: str, at: datetime) -> Message:
        response = self.s3.delete_object(Bucket=BUCKET, Key=key)
        record = s3_record(
            event_name="ObjectRemoved:DeleteMarkerCreated",
            key=key,
            event_time=at,
            sequencer=self._next_sequencer(),
            version_id=response.get("VersionId"),
        )
        self.uploads.deleted.append(key)
        return self._send(device, record, at)

    def _send(self, device: str, record: dict[str, Any], at: datetime) -> Message:
        message = Message(device, json.dumps({"Records": [record]}), at)
        self.uploads.messages.append(message)
        return message


def _segment(kind: str, device: str, start: datetime, duration_ms: int, body: bytes) -> str:
    ext = "mp4" if kind == "video" else "json"
    segment = SegmentKey(
        kind=kind,
        device=device,
        start=start,
        duration_ms=duration_ms,
        id=segment_id(kind, device, start, duration_ms, body),
        ext=ext,
    )
    return format_key(segment)


def _plan(cams: tuple[Camera, ...], rng: random.Random) -> list[tuple[datetime, str, str, bytes]]:
    """Every upload as (upload time, device, key, body), in no particular order."""
    plan: list[tuple[datetime, str, str, bytes]] = []
    for camera in cams:
        for session in camera.sessions:
            start = session.start
            for index in range(session.segments):
                end = start + timedelta(milliseconds=SEGMENT_MS)
                uploaded = end + timedelta(milliseconds=rng.randint(300, 2500))
                if index not in session.lost:
                    # Placeholder bytes: a few KiB instead of megabytes of H.264.
                    body = rng.randbytes(rng.randint(6_000, 12_000))
                    key = _segment("video", camera.device, start, SEGMENT_MS, body)
                    plan.append((uploaded, camera.device, key, body))
                if index % 6 == 5:  # a sensor reading file per recorded minute
                    minute = end - timedelta(milliseconds=SENSOR_MS)
                    reading = {
                        "device": camera.device,
                        "temperature_c": round(rng.uniform(3, 24), 1),
                        "humidity_pct": rng.randint(35, 80),
                        "lux": rng.randint(5, 900),
                    }
                    body = json.dumps(reading).encode()
                    key = _segment("sensor", camera.device, minute, SENSOR_MS, body)
                    plan.append((uploaded, camera.device, key, body))
                if index % 40 == 17:  # the analysis job found something in this segment
                    detection = {
                        "device": camera.device,
                        "labels": [rng.choice(["person", "car", "forklift", "bicycle"])],
                        "confidence": round(rng.uniform(0.6, 0.99), 2),
                    }
                    body = json.dumps(detection).encode()
                    key = _segment("analysis", camera.device, start, 0, body)
                    plan.append((uploaded + timedelta(seconds=5), camera.device, key, body))
                start = end + timedelta(milliseconds=session.jitter_ms)
    return plan


def simulate(s3: Any, day_a: datetime, day_b: datetime, rng: random.Random) -> Uploads:
    cams = cameras(day_a, day_b)
    sim = Simulation(s3, rng)
    by_key: dict[str, Message] = {}
    for uploaded, device, key, body in sorted(_plan(cams, rng)):
        by_key[key] = sim.put(device, key, body, uploaded)
        sim.uploads.objects[key.split("/")[1]] += 1

    # A camera whose firmware names the hour folder in local time (UTC+1): the key is
    # under v1/ but breaks a rule, so it is never indexed (SPEC §2).
    start = day_b + timedelta(hours=18)
    body = rng.randbytes(8_000)
    filename = _segment("video", "cam-003", start, SEGMENT_MS, body).rsplit("/", 1)[1]
    local = start + timedelta(hours=1)
    bad = f"{KEY_PREFIX}video/cam-003/{local:%Y/%m/%d/%H}/{filename}"
    sim.put("cam-003", bad, body, start + timedelta(seconds=11))
    sim.uploads.invalid.append(bad)

    # An operator deletes one cam-001 segment (say, for privacy) the next morning.
    victim = next(
        k for k in by_key if "/cam-001/" in k and f"/{day_b:%Y/%m/%d}/07/" in k and "T0730" in k
    )
    sim.delete("cam-001", victim, day_b + timedelta(hours=9))

    # At-least-once delivery: one message arrives twice ...
    twice = next(k for k in by_key if k.startswith(f"{KEY_PREFIX}video/cam-002/"))
    again = by_key[twice]
    sim.uploads.messages.append(Message(again.device, again.body, again.sent))
    sim.uploads.duplicated.append(twice)
    # ... and one is redelivered late, after the delete of its key: it must not revive it.
    late = by_key[victim]
    sim.uploads.messages.append(
        Message(late.device, late.body, day_b + timedelta(hours=9, minutes=1))
    )
    sim.uploads.late.append(victim)
    return sim.uploads


# --- delivery: SQS -> ingest, the way Lambda's event source does it ------------------------


@dataclass
class Delivery:
    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    batches: int = 0
    messages: int = 0
    workers: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def deliver(services: Callable[[], IngestService], messages: list[Message]) -> Delivery:
    """Feed the messages in batches of 10, redelivering batch item failures.

    One worker per camera, each with its own :class:`IngestService` (as concurrent
    Lambda instances each have their own), takes that camera's messages in the
    order they were sent. So the ingest outcome counts (``IngestService``'s
    per-batch figures, the ones published as metrics) can be attributed to a
    camera; ingest itself does not care how batches are made up.
    """
    pending: dict[str, list[Message]] = defaultdict(list)
    for message in sorted(messages, key=lambda m: m.sent):
        pending[message.device].append(message)
    result = Delivery(messages=len(messages), workers=len(pending))
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, len(pending))) as pool:
        runs = [
            pool.submit(_deliver_device, services(), device, queued, result)
            for device, queued in pending.items()
        ]
        for run in runs:
            run.result()
    result.seconds = time.perf_counter() - began
    return result


def _deliver_device(
    service: IngestService, device: str, messages: list[Message], result: Delivery
) -> None:
    queue = [messages[i : i + BATCH_SIZE] for i in range(0, len(messages), BATCH_SIZE)]
    while queue:
        batch = queue.pop(0)
        records = {}
        for message in batch:
            record = sqs_record(
                message.body, sent=message.sent, receive_count=message.receive_count
            )
            records[record["messageId"]] = (record, message)
        response = service.handle({"Records": [r for r, _ in records.values()]}, None)
        retry = []
        for failure in (response or {}).get("batchItemFailures", []):
            _, message = records[failure["itemIdentifier"]]
            message.receive_count += 1
            if message.receive_count <= MAX_RECEIVES:
                retry.append(message)
            else:
                with result._lock:
                    result.failed[device] += 1  # SQS would move it to the DLQ
        if retry:
            queue.append(retry)
        with result._lock:
            result.batches += 1
            for outcome, count in service.ingestor.stats.outcomes.items():
                result.outcomes[device][str(outcome)] += count


# --- reading the read model back -----------------------------------------------------------


@dataclass
class Totals:
    segments: int = 0
    bytes: int = 0
    duration_ms: int = 0


def _pk(value: str) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": value}},
    }


def read_devices(store: ReadModelStore, generation: int) -> list[str]:
    return sorted(str(item["sk"]) for item in store.query(**_pk(devices_pk(generation))))


def read_totals(store: ReadModelStore, generation: int, device: str) -> dict[str, Totals]:
    """Per-kind totals of a device: one Query of its bucket items, summed."""
    totals: dict[str, Totals] = {kind: Totals() for kind in KINDS}
    for item in store.query(**_pk(bucket_pk(generation, device))):
        kind = str(item["sk"]).split("#", 1)[0]
        figures = totals[kind]
        for q in range(QUARTERS):
            figures.segments += int(item.get(f"n{q}", 0))
            figures.bytes += int(item.get(f"b{q}", 0))
            figures.duration_ms += int(item.get(f"d{q}", 0))
    return totals


def read_ranges(
    store: ReadModelStore, generation: int, device: str, tolerance_ms: int
) -> list[tuple[int, int]]:
    """Continuous video ranges of a device from its segment items (tombstones skipped)."""
    intervals = [
        (int(item["start"]), int(item["end"]))
        for item in store.query(**_pk(segment_pk(generation, device, "video")))
        if item.get("present")
    ]
    return merge_ranges(intervals, tolerance_ms)


def list_totals(s3: Any) -> dict[tuple[str, str], Totals]:
    """The same totals computed from a listing of the bucket: P(S3), the truth."""
    totals: dict[tuple[str, str], Totals] = defaultdict(Totals)
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=KEY_PREFIX):
        for obj in page.get("Contents", []):
            result = classify_key(obj["Key"])
            if isinstance(result, ValidKey):
                segment = result.segment
                figures = totals[(segment.device, segment.kind)]
                figures.segments += 1
                figures.bytes += int(obj["Size"])
                figures.duration_ms += segment.duration_ms
    return totals


# --- output ------------------------------------------------------------------------------


class _IngestLog(logging.Handler):
    """Collects what the product's loggers say during the run, to print it tidily."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "video_index" in record.name:
            self.records.append(record)


@contextmanager
def _captured_logs() -> Iterator[_IngestLog]:
    handler = _IngestLog()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@contextmanager
def _offline_environment() -> Iterator[None]:
    """Fake credentials and region, no endpoint overrides: for this run only."""
    with mock.patch.dict(os.environ):
        for name in [n for n in os.environ if n.startswith("AWS_")]:
            del os.environ[name]
        os.environ.update(_FAKE_ENV)
        yield


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _duration(ms: int) -> str:
    """``1h 01m 29s``, ``40m 00s``, ``10s``, ``0.25s``."""
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{ms / 1000:g}s"


def _clock(ms: int, day: datetime) -> str:
    """Time of day (UTC), with ``+1d`` when it falls after ``day``."""
    moment = from_epoch_ms(ms)
    days = (moment.date() - day.date()).days
    return f"{moment:%H:%M:%S}" + (f" +{days}d" if days else "")


def _print_plan(console: Console, cams: tuple[Camera, ...], uploads: Uploads) -> None:
    console.print()
    table = Table(title="Simulated cameras", title_justify="left")
    table.add_column("device")
    table.add_column("what happens")
    for camera in cams:
        table.add_row(camera.device, camera.description)
    console.print(table)
    kinds = ", ".join(f"{uploads.objects[k]:,} {k}" for k in KINDS)
    sent = len(uploads.messages) - len(uploads.duplicated) - len(uploads.late)
    console.print(
        f"Uploaded {sum(uploads.objects.values()):,} objects to s3://{BUCKET} ({kinds}) and "
        f"{len(uploads.invalid)} with an invalid key; deleted {len(uploads.deleted)}.\n"
        f"S3 sent {sent:,} event notifications (plus its s3:TestEvent). SQS delivers "
        f"{len(uploads.duplicated)} of them twice and {len(uploads.late)} late, after the "
        "delete of its key.",
        highlight=False,
    )


def _print_delivery(console: Console, delivery: Delivery, log: _IngestLog) -> None:
    console.print(
        f"\nIngest: {delivery.messages:,} SQS messages in {delivery.batches:,} batches of up to "
        f"{BATCH_SIZE}, {delivery.workers} concurrent workers, {delivery.seconds:.1f} s.",
        highlight=False,
    )
    present = [o for o in Outcome if any(c.get(str(o)) for c in delivery.outcomes.values())]
    table = Table(title="Ingest outcomes per device", title_justify="left")
    table.add_column("device")
    for outcome in present:
        table.add_column(str(outcome), justify="right")
    table.add_column("failed", justify="right")
    for device in sorted(delivery.outcomes):
        counts = delivery.outcomes[device]
        table.add_row(
            device,
            *(f"{counts.get(str(o), 0):,}" for o in present),
            str(delivery.failed.get(device, 0)),
        )
    console.print(table)
    console.print(
        "Applied: the read model changed. Duplicate: an event already applied (same "
        "sequencer). StaleIgnored: older than the state already stored. Invalid: the key "
        "breaks a rule (logged, never indexed). failed: retried by SQS, then parked in the DLQ.",
        style="dim",
        highlight=False,
    )
    for record in log.records:
        if record.levelno < logging.WARNING:
            continue
        line = Text.assemble(
            ("Ingest logged ", "dim"), (record.levelname, "yellow"), f" {record.getMessage()}"
        )
        for name in ("key", "reason", "bucket"):
            if hasattr(record, name):
                line.append(f"\n  {name}: ", style="dim")
                line.append(str(getattr(record, name)))
        console.print(line)


def _print_totals(
    console: Console,
    devices: list[str],
    totals: dict[str, dict[str, Totals]],
    matches: bool,
) -> None:
    console.print()
    table = Table(title="Read model: totals per device and kind", title_justify="left")
    for name, justify in (
        ("device", "left"),
        ("kind", "left"),
        ("segments", "right"),
        ("bytes", "right"),
        ("video minutes", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for device in devices:
        for kind in KINDS:
            figures = totals[device][kind]
            if not figures.segments:
                continue
            minutes = f"{figures.duration_ms / 60_000:,.1f}" if kind == "video" else "—"
            table.add_row(device, kind, f"{figures.segments:,}", _size(figures.bytes), minutes)
        table.add_section()
    console.print(table)
    if matches:
        console.print(
            "[green]✓[/] equal to the same totals computed from a listing of the bucket "
            "(the source of truth)"
        )
    else:
        console.print("[bold red]✗ the read model differs from the bucket listing[/]")


def _print_ranges(
    console: Console, ranges: dict[str, list[tuple[int, int]]], tolerance_ms: int
) -> None:
    console.print()
    table = Table(
        title=f"Read model: continuous video ranges (UTC; gaps up to {tolerance_ms} ms merge)",
        title_justify="left",
    )
    table.add_column("device")
    table.add_column("day")
    table.add_column("from")
    table.add_column("to")
    table.add_column("length", justify="right")
    table.add_column("gap before", justify="right")
    for device, merged in ranges.items():
        previous_end: int | None = None
        for start, end in merged:
            day = from_epoch_ms(start)
            gap = "" if previous_end is None else _duration(start - previous_end)
            table.add_row(
                device,
                f"{day:%Y-%m-%d}",
                _clock(start, day),
                _clock(end, day),
                _duration(end - start),
                gap,
            )
            previous_end = end
        table.add_section()
    console.print(table)


# --- the demo ----------------------------------------------------------------------------


def run_demo(console: Console) -> int:
    """Run the demo end to end; 0 when the read model equals the bucket's projection."""
    try:
        from moto import mock_aws
    except ImportError:
        console.print(
            "[bold red]error:[/] the demo needs moto, a development dependency: "
            "run `make install` (or pip install -e '.[dev]')"
        )
        return 1
    began = time.perf_counter()
    try:
        server = DynamoDBLocal()
    except DynamoDBLocalError as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return 1
    try:
        with console.status("Starting DynamoDB Local ..."):
            server.start()
        with _offline_environment(), mock_aws(), _captured_logs() as log:
            return _run(console, server.endpoint, log, began)
    except DynamoDBLocalError as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return 1
    finally:
        server.stop()


def _run(console: Console, dynamodb_endpoint: str, log: _IngestLog, began: float) -> int:
    session = boto3.session.Session(region_name=REGION)
    clients = Clients(
        dynamodb=session.client("dynamodb", endpoint_url=dynamodb_endpoint),
        s3=session.client("s3"),
        sqs=session.client("sqs"),
    )
    settings = Settings(bucket=BUCKET, table=TABLE)
    clients.s3.create_bucket(Bucket=BUCKET)
    clients.s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    create_tables(clients.dynamodb, TABLE)
    console.print(
        Panel.fit(
            f"S3 and SQS: moto, in-process; versioned bucket [bold]{BUCKET}[/]\n"
            f"DynamoDB:   DynamoDB Local at {dynamodb_endpoint}\n"
            f"            read-model table [bold]{TABLE}[/]\n"
            "Ingest:     the IngestService the ingest Lambda runs, fed SQS-shaped batches",
            title="video-index demo",
            title_align="left",
        ),
        highlight=False,
    )

    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day_a, day_b = today - timedelta(days=2), today - timedelta(days=1)
    rng = random.Random(SEED)
    with console.status("Cameras uploading ..."):
        uploads = simulate(clients.s3, day_a, day_b, rng)
    _print_plan(console, cameras(day_a, day_b), uploads)

    def service() -> IngestService:
        return build_ingest_service(settings, clients)

    # S3 sends s3:TestEvent when the notification configuration is saved: acknowledged.
    service().handle({"Records": [sqs_record(s3_test_event_body(), sent=day_a)]}, None)
    with console.status("Ingesting ..."):
        delivery = deliver(service, uploads.messages)
    _print_delivery(console, delivery, log)

    store = ReadModelStore(clients.dynamodb, TABLE, tombstone_days=settings.tombstone_days)
    generation = store.generations()[0]
    devices = read_devices(store, generation)
    totals = {device: read_totals(store, generation, device) for device in devices}
    truth = list_totals(clients.s3)
    matches = all(
        (t.segments, t.bytes, t.duration_ms)
        == (truth[(d, k)].segments, truth[(d, k)].bytes, truth[(d, k)].duration_ms)
        for d in devices
        for k, t in totals[d].items()
    ) and {d for d, _ in truth} == set(devices)
    _print_totals(console, devices, totals, matches)

    ranges = {
        device: read_ranges(store, generation, device, settings.gap_tolerance_ms)
        for device in devices
    }
    _print_ranges(console, ranges, settings.gap_tolerance_ms)
    ok = matches and not sum(delivery.failed.values())
    elapsed = time.perf_counter() - began
    console.print(
        f"\n[green]Demo finished in {elapsed:.0f} s: the read model equals the projection of "
        "the bucket.[/]"
        if ok
        else f"\n[bold red]Demo finished in {elapsed:.0f} s with differences (see above).[/]",
        highlight=False,
    )
    return 0 if ok else 1
