"""moto's S3 events made like S3's for the cost benchmark, counted, and lifecycle's events.

Three differences from S3 matter to what the pipeline costs, and are closed here while a
:func:`s3_events` block runs (process-wide, like :mod:`video_index.local.s3_fidelity`,
which it installs too for the delete markers moto does not notify):

* **Sequencers.** S3's event records carry ``s3.object.sequencer`` (and ``versionId`` in
  a versioned bucket); moto's carry neither, and an event without a sequencer makes
  ingest ask S3 (HEAD, and a strongly consistent read of the item) instead of deciding
  from the event (docs/ingest.md). Each record gets the next value of one increasing
  counter (18 upper-case hex digits, S3's form) and the object's version id.
* **Counting.** Every message moto's S3 puts into an SQS queue is counted by event name:
  the S3 → SQS messages (S3 sends them; the bucket owner pays SQS for them).
* **Lifecycle.** moto runs no lifecycle rules. :func:`expire_noncurrent` sends, through
  moto's own notification code, the ``s3:LifecycleExpiration:Delete`` event S3 sends
  when the undelete window's rule permanently deletes a noncurrent version ("also
  notifies you when an object version is permanently deleted by an S3 Lifecycle
  configuration", S3 User Guide, *Configuring S3 Lifecycle event notifications*): the
  bucket's notification configuration decides whether it reaches the queue, as on AWS.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from video_index.local import s3_fidelity

#: S3's sequencers are hex strings; these start above any moto could be compared with.
_FIRST_SEQUENCER: Final = 0x0055AED6DCD9028100
LIFECYCLE_DELETE: Final = "s3:LifecycleExpiration:Delete"


@dataclass(frozen=True)
class _Version:
    """What moto's event builder reads of an object version no longer in the bucket."""

    name: str
    version_id: str
    etag: str = ""
    size: int = 0


@contextmanager
def s3_events(messages: Counter[str]) -> Iterator[None]:
    """S3-like event records (sequencer, versionId) while the block runs; every message
    sent to SQS counted in ``messages`` by event name (``ObjectCreated:Put`` ...)."""
    from moto.s3 import notifications

    undo_fidelity = s3_fidelity.install()
    built, sent = notifications._get_s3_event, notifications._send_sqs_message
    counter = itertools.count()

    def get_s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> Any:
        event = built(event_name, bucket, key, notification_id)
        for record in event["Records"]:
            obj = record["s3"]["object"]
            obj["sequencer"] = f"{_FIRST_SEQUENCER + next(counter) * 0x1F3:018X}"
            if bucket.is_versioned and str(key.version_id) != "null":
                obj["versionId"] = str(key.version_id)
            if not getattr(key, "etag", ""):  # a delete marker: S3 sends no size, no ETag
                obj.pop("size", None)
                obj.pop("eTag", None)
        return event

    def send_sqs_message(account_id: str, body: Any, queue: str, region: str) -> None:
        for record in body.get("Records", []):
            messages[record["eventName"]] += 1
        sent(account_id, body, queue, region)

    notifications._get_s3_event = get_s3_event
    notifications._send_sqs_message = send_sqs_message  # type: ignore[assignment]
    try:
        yield
    finally:
        notifications._get_s3_event = built
        notifications._send_sqs_message = sent
        undo_fidelity()


def expire_noncurrent(bucket: str, versions: list[tuple[str, str]]) -> None:
    """What S3 sends when lifecycle permanently deletes these noncurrent ``(key,
    version id)`` versions (the undelete window ending): one ``LifecycleExpiration:Delete``
    each, if the bucket subscribes to it. The versions themselves stay in moto (nothing
    the pipeline reads sees them: each key's current version is a delete marker)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.s3 import notifications
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    fake_bucket = backend.get_bucket(bucket)
    for key, version_id in versions:
        subject = _Version(key, version_id)
        notifications.send_event(
            DEFAULT_ACCOUNT_ID,
            notifications.S3NotificationEvent(LIFECYCLE_DELETE),
            fake_bucket,
            subject,
        )


def message_bodies(body: str) -> list[dict[str, Any]]:
    """The S3 records in one SQS message body."""
    return list(json.loads(body).get("Records", []))
