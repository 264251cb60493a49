"""A small deployed-like world for API tests: bucket, read model, ingest, stream consumer,
API services.

Ingest writes segment items only; the bucket and device items the calendar, ranges
and totals read follow from the table's stream. The world drains the stream into
the consumer before every call, as Lambda would have delivered it by then.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from video_index.api.access import configure_policy
from video_index.app.routes import whole_app
from video_index.app.services import ApiServices, build_api_services, configure
from video_index.aws.audit import create_audit_trail
from video_index.aws.clients import S3_CONFIG, Clients
from video_index.aws.kms import create_signing_key
from video_index.core.access_policy import AccessPolicy
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.settings import Settings
from video_index.ingest.batches import IngestService
from video_index.ingest.service import build_ingest_service
from video_index.media.synthetic import ContainerName
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.media import video_with

NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
#: The world's audit trail (docs/audit.md): its Object Lock bucket and the days it keeps.
AUDIT_BUCKET = "video-index-audit"
AUDIT_RETENTION_DAYS = 400
#: How long after its end a world's camera's file reaches S3, unless a test says otherwise.
UPLOAD_DELAY = timedelta(seconds=1)
#: The access policy of the world's deployment: the default one (a JWT names its own
#: devices, an unscoped caller sees none), with the account's IAM users (the sample event's
#: ``user/viewer``, API Gateway's own example) and role sessions mapped to every camera, as
#: a deployment maps its IAM callers in ``iam_scopes`` (docs/access.md).
WORLD_POLICY = AccessPolicy(
    iam_scopes=(
        (f"arn:aws:iam::{ev.ACCOUNT}:user/*", ("*",)),
        (f"arn:aws:sts::{ev.ACCOUNT}:assumed-role/*", ("*",)),
    )
)


@dataclass
class ApiWorld:
    s3: Any
    dynamodb: Any
    table: str
    ingest: IngestService
    services: ApiServices
    #: The table's stream consumer; None for a read model loaded with its aggregates.
    aggregation: Aggregation | None
    sequencer: itertools.count[int] = field(default_factory=lambda: itertools.count(0x1000))
    #: The access policy the API decides with (set it to try another deployment's).
    policy: AccessPolicy = WORLD_POLICY

    def put(
        self,
        kind: str,
        device: str,
        start: datetime,
        duration_ms: int,
        *,
        size: int = 100,
        media: ContainerName | None = None,
        notify: bool = True,
        received: datetime | None = None,
        label: str = "",
        body: bytes | None = None,
        checksum: bool = True,
    ) -> SegmentKey:
        """Upload an object; with ``notify`` its S3 event is ingested too.

        The body is ``size`` filler bytes, or with ``media`` ("ts" or "fmp4") a real,
        playable video of its own size (``size`` is then ignored). Its event says S3
        received it at ``received``: by default :data:`UPLOAD_DELAY` after its end, a
        camera whose clock agrees with S3's uploading each file once it is done. ``label``
        makes the content (hence the id and key) differ from another upload of the moment.
        ``body``: these bytes instead (with ``media`` naming their container). Sent with its
        SHA-256 checksum, as the uploader sends it (S3 verifies and keeps it), unless
        ``checksum=False`` (an object uploaded by an older tool)."""
        tag = f"{device}{start}{duration_ms}{label}".encode()
        ext = "mp4" if kind == "video" else "json"
        if body is not None:
            ext = "ts" if media == "ts" else ext
        elif media is not None:
            body, ext = video_with(media, tag), "ts" if media == "ts" else "mp4"
        else:
            body = hashlib.sha256(tag).digest()[:1] * size
        segment = SegmentKey(
            kind=kind,
            device=device,
            start=start,
            duration_ms=duration_ms,
            id=segment_id(kind, device, start, duration_ms, body),
            ext=ext,
        )
        extra = {"ChecksumAlgorithm": "SHA256"} if checksum else {}
        etag = self.s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=body, **extra)["ETag"]
        if notify:
            self.notify(
                ev.s3_record(
                    segment.key,
                    size=len(body),
                    etag=etag.strip('"'),
                    sequencer=f"{next(self.sequencer):X}",
                    event_time=received or segment.end + UPLOAD_DELAY,
                )
            )
        return segment

    def delete(self, segment: SegmentKey, *, notify: bool = True) -> None:
        self.s3.delete_object(Bucket=ev.BUCKET, Key=segment.key)
        if notify:
            self.notify(
                ev.s3_record(
                    segment.key,
                    event_name="ObjectRemoved:Delete",
                    sequencer=f"{next(self.sequencer):X}",
                )
            )

    def notify(self, record: dict[str, Any]) -> None:
        response = self.ingest.handle(ev.sqs_event(ev.sqs_record(ev.s3_notification(record))), None)
        assert response == {"batchItemFailures": []}

    def drain(self) -> None:
        """Deliver the table's stream to the consumer (every call does it first)."""
        if self.aggregation is not None:
            self.aggregation.drain()

    def get(self, path: str, query: str = "") -> tuple[int, Any, dict[str, str]]:
        """Call the API like API Gateway does; returns (status, decoded body, headers)."""
        return self.call("GET", path, query)

    def call(
        self,
        method: str,
        path: str,
        query: str = "",
        *,
        body: str | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        authorizer: dict[str, Any] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """Any request, with a body, headers and an authorizer context; returns (status,
        decoded body, headers)."""
        self.drain()
        event = ev.http_request(path, query, method)
        if body is not None:
            event["body"] = body
            event["headers"]["content-type"] = content_type
        event["headers"].update({name.lower(): value for name, value in (headers or {}).items()})
        if authorizer is not None:
            event["requestContext"]["authorizer"] = authorizer
        services = self.services
        configure(lambda: services)  # this world's services, even if another was made since
        response = resolve(event, self.policy)
        headers = response.get("headers") or {}
        body = response["body"]
        if "json" in headers.get("Content-Type", "application/json"):
            body = json.loads(body) if body else None
        return response["statusCode"], body, headers


def resolve(event: dict[str, Any], policy: AccessPolicy = WORLD_POLICY) -> dict[str, Any]:
    """The whole API's answer to ``event``, decided with ``policy`` (for this request only):
    what a test sending its own event gets from the world's deployment."""
    configure_policy(policy)
    try:
        answer: dict[str, Any] = whole_app().resolve(event, None)
        return answer
    finally:
        configure_policy(None)


def make_world(
    dynamodb: Any,
    table: str,
    now: datetime = NOW,
    *,
    annotations_table: str | None = None,
    aggregate: bool = True,
    deletions_table: str | None = None,
    holds_table: str | None = None,
) -> ApiWorld:
    """A world on ``table``. ``aggregate=False`` for a read model loaded with its
    aggregates already (the consumer would add the loaded segments' records again).
    With a deletions or holds table (created on ``dynamodb`` by the caller), the API
    records requests and holds there, and its ranges answer reads them (docs/api.md#gaps)."""
    s3 = boto3.client("s3", config=S3_CONFIG)
    s3.create_bucket(Bucket=ev.BUCKET)
    secrets = boto3.client("secretsmanager")
    kms = boto3.client("kms")
    create_audit_trail(s3, AUDIT_BUCKET, dynamodb, f"{table}-audit", AUDIT_RETENTION_DAYS)
    settings = Settings(
        bucket=ev.BUCKET,
        table=table,
        annotations_table=annotations_table,
        cursor_key_secret=cursor_key_secret(secrets),
        deletions_table=deletions_table,
        holds_table=holds_table,
        export_signing_key=create_signing_key(kms, "test: signs export manifests"),
        audit_bucket=AUDIT_BUCKET,
        audit_table=f"{table}-audit",
        audit_retention_days=AUDIT_RETENTION_DAYS,
    )
    clients = Clients(
        dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs"), secretsmanager=secrets, kms=kms
    )
    services = build_api_services(settings, clients, clock=now.timestamp)
    configure(lambda: services)
    aggregation = None
    if aggregate:
        # The consumer is another function: its own client, so a test counting the
        # API's requests on ``dynamodb`` does not count the consumer's.
        consumer = boto3.client(
            "dynamodb",
            endpoint_url=dynamodb.meta.endpoint_url,
            region_name=dynamodb.meta.region_name,
        )
        aggregation = Aggregation(consumer, table, gap_tolerance_ms=settings.gap_tolerance_ms)
    return ApiWorld(
        s3, dynamodb, table, build_ingest_service(settings, clients), services, aggregation
    )


def cursor_key_secret(secrets: Any) -> str:
    """The ARN of a cursor key secret as the stack makes one (a random string of 64
    letters and digits), created on first use."""
    name = "video-index-cursor-key"
    try:
        return str(secrets.describe_secret(SecretId=name)["ARN"])
    except secrets.exceptions.ResourceNotFoundException:
        value = secrets.get_random_password(PasswordLength=64, ExcludePunctuation=True)
        made = secrets.create_secret(Name=name, SecretString=value["RandomPassword"])
        return str(made["ARN"])


def at(day: int, hour: int, minute: int = 0, second: int = 0, ms: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, second, tzinfo=UTC) + timedelta(milliseconds=ms)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def address(segment: SegmentKey, device: str | None = None) -> str:
    """``GET /devices/{device}/segments/{kind}/{name}`` of a segment (of its own device
    unless another is given): the address its entry's ``kind`` and ``name`` make."""
    return f"/devices/{device or segment.device}/segments/{segment.kind}/{segment.filename}"


__all__ = [
    "NOW",
    "UPLOAD_DELAY",
    "WORLD_POLICY",
    "ApiWorld",
    "address",
    "at",
    "format_key",
    "iso",
    "make_world",
    "resolve",
]
