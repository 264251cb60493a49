"""The S3 notifications moto leaves out for a versioned bucket, sent the way S3 sends them.

The local bucket is versioned like the deployed one (delete markers, undelete,
erasure), but moto's S3 (checked with moto 5.2) notifies only part of what S3 does
in a versioned bucket:

* a delete that creates a **delete marker** sends nothing (S3 sends
  ``s3:ObjectRemoved:DeleteMarkerCreated``);
* deleting one **version or delete marker** sends nothing while the key has other
  versions left (S3 sends ``s3:ObjectRemoved:Delete`` for each) — so removing a
  delete marker, which brings the previous version back, would go unnoticed;
* deleting the key's last version when that is a delete marker fails inside moto
  (its event builder reads an ETag a marker does not have).

Without these events the read model would never see a delete, so
:func:`install` wraps moto's backend while a local stack runs: after each such
delete it sends the missing event through moto's own notification code (so the
bucket's notification configuration — events, ``v1/`` prefix, queue — decides as
for every other event), in moto's own shape: no ``sequencer``, no ``versionId``,
which makes ingest ask S3 (HEAD) for the key's state, as it must without a
sequencer. Nothing is sent that S3 would not send.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()


@dataclass(frozen=True)
class _EventObject:
    """What moto's event builder reads of an object, for a delete marker."""

    name: str
    version_id: str
    etag: str = ""
    size: int = 0


def install() -> Callable[[], None]:
    """Patch moto's S3 backend (process-wide); returns the function that undoes it."""
    from moto.s3 import models, notifications

    with _lock:
        original_delete = models.S3Backend.delete_object
        original_event = notifications._get_s3_event

        def delete_object(
            self: Any,
            bucket_name: str,
            key_name: str,
            version_id: str | None = None,
            bypass: bool = False,
        ) -> tuple[bool, dict[str, Any]]:
            bucket = self.get_bucket(bucket_name)
            success, meta = original_delete(self, bucket_name, key_name, version_id, bypass)
            if not (success and bucket.is_versioned):
                return success, meta
            if version_id is None:
                event = notifications.S3NotificationEvent.OBJECT_REMOVED_DELETE_MARKER_CREATED_EVENT
            elif bucket.keys.getlist(key_name, []):
                event = notifications.S3NotificationEvent.OBJECT_REMOVED_DELETE_EVENT
            else:
                return success, meta  # the last version: moto notifies itself
            subject = _EventObject(key_name, str(meta.get("version-id", version_id)))
            notifications.send_event(self.account_id, event, bucket, subject)
            return success, meta

        def get_s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> Any:
            if not hasattr(key, "etag"):  # a delete marker, the key's last version
                key = _EventObject(key.name, str(key.version_id))
            return original_event(event_name, bucket, key, notification_id)

        models.S3Backend.delete_object = delete_object  # type: ignore[method-assign]
        notifications._get_s3_event = get_s3_event

    def uninstall() -> None:
        with _lock:
            models.S3Backend.delete_object = original_delete  # type: ignore[method-assign]
            notifications._get_s3_event = original_event

    return uninstall
