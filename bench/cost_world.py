"""The cost benchmark's world: the stack's resources on moto, the sample's cameras, and the
components' clients (each counted under its own name by a :class:`bench.cost_meter.Ledger`).

Resources are made by the code ``video-index local`` makes them with
(:mod:`video_index.local.resources`, :func:`video_index.core.table_schema.create_tables`):
the versioned segment bucket notifying the queue of what :data:`NOTIFIED_EVENTS` names
under ``v1/``, the queue and its dead-letter queue, the read-model, annotations,
deletion-requests and holds tables (the read model's stream included), the reports bucket.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any, Final

import boto3

from bench.cost_meter import REGION, Ledger
from video_index.aws.audit import create_audit_trail
from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
from video_index.core.audit import DEFAULT_AUDIT_RETENTION_DAYS
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.queue_settings import MAX_RECEIVE_COUNT, VISIBILITY_TIMEOUT_SECONDS
from video_index.core.settings import Settings
from video_index.core.table_schema import create_tables
from video_index.local.resources import create_bucket, create_queue
from worlds.inventory_fixtures import destination_uri

BUCKET: Final = "cost-segments"
REPORTS: Final = "cost-reports"
TABLE: Final = "cost-read-model"
ANNOTATIONS: Final = "cost-annotations"
DELETIONS: Final = "cost-deletions"
HOLDS: Final = "cost-holds"
#: The audit trail (docs/audit.md): every footage read of the day leaves a record.
AUDIT: Final = "cost-audit"
#: The sample starts on an hour, so its aggregates fall in whole UTC hours.
START: Final = datetime(2026, 11, 2, 10, tzinfo=UTC)
#: The camera hands a segment over this long after it ends (cut, close, connect).
UPLOAD_DELAY: Final = timedelta(milliseconds=900)


@dataclass(frozen=True)
class Camera:
    """A recording camera: its bitrate and the length of its segments."""

    name: str
    segment_s: int
    bitrate_bps: int = 2_000_000
    retention_days: int = 30

    @property
    def segment_bytes(self) -> int:
        return self.bitrate_bps * self.segment_s // 8

    @property
    def segments_per_day(self) -> int:
        return 86_400 // self.segment_s


@dataclass(frozen=True)
class Upload:
    segment: SegmentKey
    key: str
    at: datetime  # when the camera uploads it


@dataclass(frozen=True)
class Sample:
    """``cameras`` cameras like ``camera`` recording ``minutes`` minutes from :data:`START`."""

    camera: Camera
    cameras: int
    minutes: int

    @property
    def end(self) -> datetime:
        return START + timedelta(minutes=self.minutes)

    def devices(self) -> list[str]:
        return [f"{self.camera.name}-{number:02d}" for number in range(self.cameras)]

    def uploads(self) -> list[Upload]:
        """Every segment of every camera, in the order they are uploaded (cameras start a
        little apart, as a fleet's do)."""
        step = self.camera.segment_s * 1000
        out: list[Upload] = []
        for number, device in enumerate(self.devices()):
            offset = timedelta(milliseconds=number * step // self.cameras)
            for index in range(self.minutes * 60 // self.camera.segment_s):
                start = START + offset + timedelta(milliseconds=index * step)
                if start >= self.end:
                    break
                segment = SegmentKey(
                    kind="video",
                    device=device,
                    start=start,
                    duration_ms=step,
                    id=segment_id("video", device, start, step, f"{device}/{index}".encode()),
                    ext="mp4",
                )
                out.append(Upload(segment, format_key(segment), segment.end + UPLOAD_DELAY))
        return sorted(out, key=lambda u: (u.at, u.key))


@dataclass
class World:
    """The resources, the settings the functions are built with, and the ledger."""

    ledger: Ledger
    settings: Settings = field(init=False)

    def __post_init__(self) -> None:
        admin = self.admin
        queue_url, dlq_url = create_queue(
            admin.sqs,
            "cost-notifications",
            "cost-notifications-dlq",
            visibility_timeout=VISIBILITY_TIMEOUT_SECONDS,
            max_receive_count=MAX_RECEIVE_COUNT,
        )
        create_bucket(admin.s3, admin.sqs, BUCKET, queue_url)
        admin.s3.create_bucket(Bucket=REPORTS)
        create_tables(admin.dynamodb, TABLE, ANNOTATIONS, DELETIONS, HOLDS)
        create_audit_trail(admin.s3, AUDIT, admin.dynamodb, AUDIT, DEFAULT_AUDIT_RETENTION_DAYS)
        self.settings = Settings(
            bucket=BUCKET,
            table=TABLE,
            annotations_table=ANNOTATIONS,
            queue_url=queue_url,
            dlq_url=dlq_url,
            reports_bucket=REPORTS,
            inventory_destination=destination_uri(REPORTS, "inventory", BUCKET, "daily"),
            deletions_table=DELETIONS,
            holds_table=HOLDS,
            audit_bucket=AUDIT,
            audit_table=AUDIT,
        )

    @cached_property
    def admin(self) -> Clients:
        """Uncounted clients: what the bench does itself (set-up, checks)."""
        return Clients(
            dynamodb=boto3.client("dynamodb", region_name=REGION, config=CLIENT_CONFIG),
            s3=boto3.client("s3", region_name=REGION, config=S3_CONFIG),
            sqs=boto3.client("sqs", region_name=REGION, config=CLIENT_CONFIG),
        )

    def clients(self, component: str) -> Clients:
        """A component's clients, every call counted under its name."""
        ledger = self.ledger
        return Clients(
            dynamodb=ledger.client(component, "dynamodb", config=CLIENT_CONFIG),
            s3=ledger.client(component, "s3", config=S3_CONFIG),
            sqs=ledger.client(component, "sqs", config=CLIENT_CONFIG),
        )

    def streams(self, component: str) -> Any:
        return self.ledger.client(component, "dynamodbstreams", config=CLIENT_CONFIG)
