"""A versioned segment bucket, a deletion requests table and a holds table, for the
deletion tests.

In-process on moto (S3) and either DynamoDB engine; objects are written straight to
S3; a fake clock drives leases. :func:`versions` reads the bucket back as the tests
compare it: every version and delete marker of every key. Jobs read the real holds
table (a test places a hold with :meth:`World.hold`): nothing deletes without holds.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.support.tables import engine_client
from video_index.aws.clients import S3_CONFIG
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.keys import SegmentKey, format_key, parse_key, segment_id
from video_index.core.table_schema import deletions_table_definition, holds_table_definition
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.enforcement import Enforcer
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.model import Hold
from video_index.holds.service import Holds, HoldsHeldWindows

BUCKET = "video-index-deletion-tests"
REPLICA = "video-index-deletion-replica"


@dataclass
class Clock:
    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def deletions_table(engine: str, request: pytest.FixtureRequest) -> tuple[Any, str]:
    """A fresh deletion requests table on ``engine`` (moto: inside ``mock_aws``)."""
    client = engine_client(engine, request)
    name = f"deletions-{uuid.uuid4().hex[:12]}"
    client.create_table(**deletions_table_definition(name))
    client.get_waiter("table_exists").wait(TableName=name)
    return client, name


def versioned_bucket(s3: Any, name: str = BUCKET) -> None:
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})


def segment_key(
    device: str, start: datetime, duration_ms: int = 10_000, kind: str = "video", tag: str = ""
) -> str:
    body = body_of(device, start, kind, tag)
    ext = "mp4" if kind == "video" else "json"
    return format_key(
        SegmentKey(
            kind=kind,
            device=device,
            start=start,
            duration_ms=duration_ms,
            id=segment_id(kind, device, start, duration_ms, body),
            ext=ext,
        )
    )


def body_of(device: str, start: datetime, kind: str, tag: str = "") -> bytes:
    return hashlib.sha256(f"{device}{start}{kind}{tag}".encode()).digest() * 4


def put(
    s3: Any,
    device: str,
    start: datetime,
    duration_ms: int = 10_000,
    kind: str = "video",
    bucket: str = BUCKET,
) -> str:
    key = segment_key(device, start, duration_ms, kind)
    s3.put_object(Bucket=bucket, Key=key, Body=body_of(device, start, kind))
    return key


def put_run(
    s3: Any, device: str, first: datetime, count: int, step_s: int = 10, kind: str = "video"
) -> list[str]:
    """``count`` back-to-back segments from ``first``."""
    return [
        put(s3, device, first + timedelta(seconds=i * step_s), step_s * 1000, kind)
        for i in range(count)
    ]


@dataclass(frozen=True, order=True)
class Version:
    key: str
    marker: bool
    latest: bool
    etag: str = ""


def versions(s3: Any, bucket: str = BUCKET, prefix: str = "v1/") -> dict[str, list[Version]]:
    """Every key's versions and delete markers (newest first: latest, then the rest)."""
    found: dict[str, list[Version]] = defaultdict(list)
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        for v in page.get("Versions", []):
            found[v["Key"]].append(Version(v["Key"], False, v["IsLatest"], v["ETag"].strip('"')))
        for m in page.get("DeleteMarkers", []):
            found[m["Key"]].append(Version(m["Key"], True, m["IsLatest"]))
    return {k: sorted(vs, key=lambda v: not v.latest) for k, vs in found.items()}


def current(s3: Any, bucket: str = BUCKET, prefix: str = "v1/") -> dict[str, str]:
    """The current objects: key → ETag."""
    return {
        o["Key"]: o["ETag"].strip('"')
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for o in page.get("Contents", [])
    }


def meets(
    keys: list[str], device: str, low: datetime, high: datetime, kind: str | None = None
) -> set[str]:
    """Independent reference: the keys of ``device`` whose interval meets ``[low, high)``
    (an instant counts where it lies)."""
    found = set()
    for key in keys:
        segment = parse_key(key)
        if segment.device != device or (kind and segment.kind != kind):
            continue
        start, end = segment.start, segment.start + timedelta(milliseconds=segment.duration_ms)
        if (low <= start < high) if start == end else (start < high and end > low):
            found.add(key)
    return found


def expected_versions(
    keys: list[str], covered: set[str], *, erase: bool
) -> dict[str, list[Version]]:
    """What a bucket holding ``keys`` (one version each) holds once ``covered`` is deleted:
    a delete marker over the version, or with ``erase`` nothing."""
    expected: dict[str, list[Version]] = {}
    for key in keys:
        version = Version(key, False, key not in covered)
        if key not in covered:
            expected[key] = [version]
        elif not erase:
            expected[key] = [Version(key, True, True), version]
    return expected


def shape(found: dict[str, list[Version]]) -> dict[str, list[Version]]:
    """Versions without their ETags."""
    return {k: [Version(v.key, v.marker, v.latest) for v in vs] for k, vs in found.items()}


@dataclass
class World:
    s3: Any
    dynamodb: Any
    table: str
    holds_table: str
    clock: Clock = field(default_factory=Clock)

    @property
    def holds(self) -> Holds:
        """The holds service over the world's holds table, on the world's clock."""
        return Holds(HoldStore(self.dynamodb, self.holds_table), clock=self.clock)

    def hold(self, device: str, low: datetime, high: datetime) -> Hold:
        """Place a hold over ``[low, high)`` of ``device`` (in force at once)."""
        return self.holds.create(device, to_epoch_ms(low), to_epoch_ms(high), "case", "tester")

    def jobs(self, *, batch_size: int = 1000, replica: str | None = None) -> DeletionJobs:
        queued: list[str] = []
        return DeletionJobs(
            DeletionTable(self.dynamodb, self.table),
            ObjectStore(self.s3, BUCKET),
            enqueue=queued.append,
            holds=HoldsHeldWindows(self.holds),
            replica=ObjectStore(self.s3, replica) if replica else None,
            clock=self.clock,
            batch_size=batch_size,
        )

    def enforcer(self) -> Enforcer:
        """The windows in force around the world's holds."""
        return Enforcer(
            DeletionTable(self.dynamodb, self.table),
            ObjectStore(self.s3, BUCKET),
            HoldsHeldWindows(self.holds),
        )


def make_world(dynamodb: Any, table: str) -> World:
    """A world around the deletion requests ``table``, with a holds table beside it."""
    s3 = boto3.client("s3", config=S3_CONFIG)
    versioned_bucket(s3)
    holds = f"holds-{uuid.uuid4().hex[:12]}"
    dynamodb.create_table(**holds_table_definition(holds))
    dynamodb.get_waiter("table_exists").wait(TableName=holds)
    return World(s3, dynamodb, table, holds)


def at(day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, second, tzinfo=UTC)


class Killed(BaseException):
    """The process died here (not an error any handler of the product catches)."""


class Killer:
    """Kills the "process" at its ``at_call``-th AWS request of ``clients`` — before the
    request is sent, or with ``after`` once it took effect but before its answer is read —
    and every request after that fails too, until :meth:`disarm` (a new process).

    With ``at_call`` None it kills nothing and only records: ``operations`` lists every
    request's operation name in order, the kill points a property test draws from."""

    def __init__(self, clients: list[Any], at_call: int | None, *, after: bool = False) -> None:
        self.clients = clients
        self.at_call = at_call
        self.after = after
        self.calls = 0
        self.operations: list[str] = []
        self.dead = False
        for client in clients:
            client.meta.events.register("before-call", self._before)
            client.meta.events.register("after-call", self._after)

    def _before(self, model: Any = None, **_: Any) -> None:
        if self.dead:
            raise Killed()
        self.calls += 1
        self.operations.append(getattr(model, "name", "?"))
        if not self.after and self.calls == self.at_call:
            self.dead = True
            raise Killed()

    def _after(self, **_: Any) -> None:
        if self.after and not self.dead and self.calls == self.at_call:
            self.dead = True
            raise Killed()

    def disarm(self) -> None:
        for client in self.clients:
            client.meta.events.unregister("before-call", self._before)
            client.meta.events.unregister("after-call", self._after)
