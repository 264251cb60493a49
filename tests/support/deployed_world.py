"""Buckets, a read-model table and real video behind local endpoints, for deployed functions.

S3 (and SQS) come from a moto server on a loopback port, DynamoDB from the session's
DynamoDB endpoint over HTTP (a second moto server, in its own process):
the functions under test reach them only through the standard ``AWS_ENDPOINT_URL_*``
variables, exactly as configuration reaches a deployed function. Every world has its
own bucket, reports bucket and table (a moto server's state is process-wide).

Given steps that are not about the function under test (uploading clips, writing the
read model) run here, in the test process, with the project's own code.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import boto3
from botocore.config import Config

from video_index.aws.audit import create_audit_trail
from video_index.aws.clients import Clients
from video_index.aws.kms import create_signing_key
from video_index.core.contract import (
    ENV_ANNOTATIONS_TABLE,
    ENV_AUDIT_BUCKET,
    ENV_AUDIT_TABLE,
    ENV_BUCKET,
    ENV_CURSOR_KEY_SECRET,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    ENV_DLQ_URL,
    ENV_EXPORT_QUEUE_URL,
    ENV_EXPORT_SIGNING_KEY,
    ENV_HOLDS_TABLE,
    ENV_INVENTORY_DESTINATION,
    ENV_REPORTS_BUCKET,
    ENV_RETENTION_DAYS,
    ENV_TABLE,
    INVENTORY_ID,
    INVENTORY_PREFIX,
)
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.settings import Settings
from video_index.core.silence import DEFAULT_RETENTION_DAYS
from video_index.core.table_schema import create_tables
from video_index.ingest.service import build_ingest_service
from video_index.local.resources import create_cursor_key_secret
from video_index.local.streams import StreamEventSource
from video_index.media.synthetic import ContainerName
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.media import clip

_LOCAL = Config(proxies={}, s3={"addressing_style": "path"})
_EXTENSIONS = {"ts": "ts", "fmp4": "mp4", "mp4": "mp4"}


@dataclass
class DeployedWorld:
    s3_endpoint: str
    dynamodb_endpoint: str
    bucket: str
    reports_bucket: str
    table: str
    #: What the other functions' specs name: the annotations, deletion requests and holds
    #: tables, and the ingest DLQ, export and deletion queues (URLs, set by create()).
    annotations_table: str = ""
    deletions_table: str = ""
    holds_table: str = ""
    queues: dict[str, str] = field(default_factory=dict)
    #: The API's cursor key (a Secrets Manager secret of the moto server; its ARN).
    cursor_key_secret: str = ""
    #: The export signing key (a KMS key of the moto server; its ARN).
    export_signing_key: str = ""
    #: The audit trail (docs/audit.md): its Object Lock bucket and its index.
    audit_bucket: str = ""
    audit_table: str = ""

    @classmethod
    def create(cls, s3_endpoint: str, dynamodb_endpoint: str) -> DeployedWorld:
        tag = uuid.uuid4().hex[:10]
        world = cls(
            s3_endpoint=s3_endpoint,
            dynamodb_endpoint=dynamodb_endpoint,
            bucket=f"segments-{tag}",
            reports_bucket=f"reports-{tag}",
            table=f"read-model-{tag}",
            annotations_table=f"annotations-{tag}",
            deletions_table=f"deletions-{tag}",
            holds_table=f"holds-{tag}",
            audit_bucket=f"audit-{tag}",
            audit_table=f"audit-{tag}",
        )
        s3 = world.client("s3")
        s3.create_bucket(Bucket=world.bucket)
        s3.create_bucket(Bucket=world.reports_bucket)
        create_tables(
            world.client("dynamodb"),
            world.table,
            world.annotations_table,
            world.deletions_table,
            world.holds_table,
        )
        create_audit_trail(s3, world.audit_bucket, world.client("dynamodb"), world.audit_table, 30)
        sqs = world.client("sqs")
        for setting in (ENV_DLQ_URL, ENV_EXPORT_QUEUE_URL, ENV_DELETION_QUEUE_URL):
            name = f"{setting.removeprefix('VIDEO_INDEX_').lower().replace('_', '-')}-{tag}"
            world.queues[setting] = sqs.create_queue(QueueName=name)["QueueUrl"]
        world.cursor_key_secret = create_cursor_key_secret(
            world.client("secretsmanager"), f"cursor-key-{tag}"
        )
        world.export_signing_key = create_signing_key(world.client("kms"), f"exports {tag}")
        return world

    def client(self, service: str) -> Any:
        on_dynamodb = service in ("dynamodb", "dynamodbstreams")
        endpoint = self.dynamodb_endpoint if on_dynamodb else self.s3_endpoint
        factory: Any = boto3.client
        return factory(service, endpoint_url=endpoint, region_name="us-east-1", config=_LOCAL)

    def clients(self) -> Clients:
        return Clients(
            dynamodb=self.client("dynamodb"), s3=self.client("s3"), sqs=self.client("sqs")
        )

    @property
    def inventory_destination(self) -> str:
        return f"s3://{self.reports_bucket}/{INVENTORY_PREFIX}/{self.bucket}/{INVENTORY_ID}/"

    def environ(self, **extra: str) -> dict[str, str]:
        """What a deployed function of this world gets: endpoints, and every name and setting
        a spec may declare (each function reads only its own: ``core/functions.py``)."""
        return {
            "AWS_ENDPOINT_URL_S3": self.s3_endpoint,
            "AWS_ENDPOINT_URL_SQS": self.s3_endpoint,
            "AWS_ENDPOINT_URL_SECRETS_MANAGER": self.s3_endpoint,
            "AWS_ENDPOINT_URL_KMS": self.s3_endpoint,
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb_endpoint,
            ENV_BUCKET: self.bucket,
            ENV_TABLE: self.table,
            ENV_REPORTS_BUCKET: self.reports_bucket,
            ENV_INVENTORY_DESTINATION: self.inventory_destination,
            ENV_ANNOTATIONS_TABLE: self.annotations_table,
            ENV_DELETIONS_TABLE: self.deletions_table,
            ENV_HOLDS_TABLE: self.holds_table,
            ENV_RETENTION_DAYS: json.dumps(DEFAULT_RETENTION_DAYS),
            ENV_CURSOR_KEY_SECRET: self.cursor_key_secret,
            ENV_EXPORT_SIGNING_KEY: self.export_signing_key,
            ENV_AUDIT_BUCKET: self.audit_bucket,
            ENV_AUDIT_TABLE: self.audit_table,
            **self.queues,
            **extra,
        }

    def put_clip(
        self, device: str, start: datetime, container: ContainerName, seconds: float = 1.0
    ) -> str:
        """A real H.264 clip of ``seconds`` uploaded under its key; the key."""
        content = clip(container, seconds, label=f"{device}-{start.isoformat()}")
        duration_ms = round(seconds * 1000)
        key = format_key(
            SegmentKey(
                kind="video",
                device=device,
                start=start,
                duration_ms=duration_ms,
                id=segment_id("video", device, start, duration_ms, content),
                ext=_EXTENSIONS[container],
            )
        )
        self.client("s3").put_object(Bucket=self.bucket, Key=key, Body=content)
        return key

    def created_event(self, *keys: str) -> dict[str, Any]:
        """The SQS batch the notification queue delivers for these new objects."""
        s3 = self.client("s3")
        records = []
        for key in keys:
            head = s3.head_object(Bucket=self.bucket, Key=key)
            record = ev.s3_record(
                key,
                size=head["ContentLength"],
                etag=head["ETag"].strip('"'),
                sequencer=uuid.uuid4().hex[:16].upper(),
                bucket=self.bucket,
            )
            records.append(ev.sqs_record(ev.s3_notification(record)))
        return ev.sqs_event(*records)

    def ingest_here(self, *keys: str) -> None:
        """Index ``keys`` with the project's ingest code, in this process."""
        service = build_ingest_service(
            Settings(bucket=self.bucket, table=self.table), self.clients()
        )
        response = service.handle(self.created_event(*keys), None)
        assert not (response or {}).get("batchItemFailures"), response
        self.aggregate_here()

    def aggregate_here(self) -> None:
        """Aggregate every change of the table's stream so far, in this process (the
        stream consumer's part of writing the read model)."""
        Aggregation(self.client("dynamodb"), self.table).drain()

    def stream_events(self) -> list[dict[str, Any]]:
        """The events Lambda's stream event source would deliver for every record of the
        table's stream so far (real records, read from TRIM_HORIZON)."""
        events: list[dict[str, Any]] = []

        def capture(event: dict[str, Any]) -> dict[str, Any]:
            events.append(event)
            return {"batchItemFailures": []}

        source = StreamEventSource(
            self.client("dynamodb"), self.client("dynamodbstreams"), self.table, capture
        )
        source.drain()
        return events
