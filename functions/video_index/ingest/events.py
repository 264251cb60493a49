"""S3 event messages -> :class:`ObjectEvent`: what happened to which key, in S3's order.

Accepted shapes (docs/ingest.md): S3 event notifications (``Records``), the same events
delivered by EventBridge (``detail-type`` ``Object Created`` / ``Object Deleted``),
and ``s3:TestEvent`` (acknowledged, no events). Parsing uses the Powertools parser
models, so a message of any other shape is rejected with a reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.parser.models import (
    S3EventNotificationEventBridgeModel,
    S3Model,
    S3RecordModel,
)
from aws_lambda_powertools.utilities.parser.models.s3 import (
    S3Bucket,
    S3Identity,
    S3Message,
    S3OwnerIdentify,
    S3RequestParameters,
    S3ResponseElements,
)
from pydantic import ValidationError

SEQUENCER_WIDTH: Final = 32
_HEX: Final = re.compile(r"^[0-9A-Fa-f]{1,32}$")


class _Bucket(S3Bucket):
    ownerIdentity: S3OwnerIdentify | None = None  # type: ignore[assignment]


class _Message(S3Message):
    bucket: _Bucket


class S3Record(S3RecordModel):
    """An S3 notification record; the fields ingest never reads may be missing, as
    emulators (moto) omit them."""

    s3: _Message
    userIdentity: S3Identity | None = None  # type: ignore[assignment]
    requestParameters: S3RequestParameters | None = None  # type: ignore[assignment]
    responseElements: S3ResponseElements | None = None  # type: ignore[assignment]


class S3Notification(S3Model):
    Records: list[S3Record]  # type: ignore[assignment]


class Action(StrEnum):
    CREATED = "created"
    #: The key's current version is gone (delete marker, unversioned delete, expiry).
    REMOVED = "removed"
    #: One version was deleted permanently: the key may still have a current version.
    VERSION_REMOVED = "version-removed"


class MalformedMessage(ValueError):
    """A message that is not an S3 event in any accepted shape."""


@dataclass(frozen=True, slots=True)
class ObjectEvent:
    bucket: str
    key: str
    action: Action
    event_name: str
    sequencer: str | None = None
    size: int | None = None
    etag: str | None = None
    version_id: str | None = None
    event_time: datetime | None = None


def normalize_sequencer(raw: str | None) -> str | None:
    """S3's rule made comparable as strings: upper-case hex right-padded with zeros.

    Returns ``None`` for a missing or unusable sequencer; the caller then asks S3.
    """
    if not raw or not _HEX.fullmatch(raw):
        return None
    return raw.upper().ljust(SEQUENCER_WIDTH, "0")


def normalize_etag(raw: str | None) -> str | None:
    return raw.strip('"') if raw else raw


def is_test_event(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("Event") == "s3:TestEvent"


def is_s3_notification(payload: Any) -> bool:
    records = payload.get("Records") if isinstance(payload, dict) else None
    return (
        isinstance(records, list)
        and bool(records)
        and all(isinstance(r, dict) and r.get("eventSource") == "aws:s3" for r in records)
    )


def is_eventbridge_s3(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("source") == "aws.s3" and "detail" in payload


def events_from_body(body: str) -> list[ObjectEvent]:
    """Events carried by one SQS message body; ``[]`` for ``s3:TestEvent``."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, TypeError) as exc:
        raise MalformedMessage(f"body is not JSON: {exc}") from None
    return events_from_payload(payload)


def events_from_payload(payload: Any) -> list[ObjectEvent]:
    if is_test_event(payload):
        return []
    try:
        if is_s3_notification(payload):
            return _from_notification(S3Notification.model_validate(payload))
        if is_eventbridge_s3(payload):
            return _from_eventbridge(S3EventNotificationEventBridgeModel.model_validate(payload))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise MalformedMessage(f"S3 event field {where}: {first['msg']}") from None
    except (AttributeError, TypeError, KeyError) as exc:  # the models' own validators
        raise MalformedMessage(f"S3 event fields missing or mistyped: {exc}") from None
    raise MalformedMessage(
        "message is neither an S3 event notification, an EventBridge S3 event nor an s3:TestEvent"
    )


def _from_notification(model: S3Notification) -> list[ObjectEvent]:
    events = []
    for record in model.Records:
        obj = record.s3.object
        if obj is None:
            raise MalformedMessage("S3 event record has no s3.object")
        action = _notification_action(record.eventName, obj.versionId)
        if action is None:
            continue
        events.append(
            ObjectEvent(
                bucket=record.s3.bucket.name,
                key=unquote_plus(obj.key),
                action=action,
                event_name=record.eventName,
                sequencer=normalize_sequencer(obj.sequencer),
                size=int(obj.size) if obj.size is not None else None,
                etag=normalize_etag(obj.eTag),
                version_id=obj.versionId,
                event_time=record.eventTime,
            )
        )
    return events


def _notification_action(event_name: str, version_id: str | None) -> Action | None:
    family, _, detail = event_name.partition(":")
    if family == "ObjectCreated":
        return Action.CREATED
    if family in ("ObjectRemoved", "LifecycleExpiration"):
        if detail == "DeleteMarkerCreated":
            return Action.REMOVED
        if detail == "Delete":
            return Action.VERSION_REMOVED if _is_version(version_id) else Action.REMOVED
    return None  # tagging, ACL, restore, transition...: presence unchanged


def _from_eventbridge(model: S3EventNotificationEventBridgeModel) -> list[ObjectEvent]:
    detail = model.detail
    obj = detail.object
    kind = model.detail_type
    if kind == "Object Created":
        action: Action | None = Action.CREATED
    elif kind == "Object Deleted":
        permanent = (detail.deletion_type or "") == "Permanently Deleted"
        action = (
            Action.VERSION_REMOVED
            if permanent and _is_version(obj.version_id)
            else (Action.REMOVED)
        )
    else:
        action = None
    if action is None:
        return []
    return [
        ObjectEvent(
            bucket=detail.bucket.name,
            key=unquote_plus(obj.key),
            action=action,
            event_name=f"EventBridge:{kind}",
            sequencer=normalize_sequencer(obj.sequencer),
            size=int(obj.size) if obj.size is not None else None,
            etag=normalize_etag(obj.etag) or None,
            version_id=obj.version_id,
            event_time=model.time,
        )
    ]


def _is_version(version_id: str | None) -> bool:
    return bool(version_id) and version_id != "null"
