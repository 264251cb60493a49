"""Where moto's S3 differs from S3 in what the product relies on, made to behave like S3.

The local bucket is versioned like the deployed one (delete markers, undelete,
erasure). moto's S3 (checked with moto 5.2) differs from S3 there in two ways.

**Notifications.** moto notifies only part of what S3 does in a versioned bucket:

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

**ListObjectVersions with a KeyMarker alone.** S3 lists from the first key after the
marker; moto also drops the first version of that next key when the marker is not
itself a key (a folder name, as deletion jobs pass). With a KeyMarker and no
VersionIdMarker the listing is recomputed here the S3 way.

**Checksums on upload.** S3 computes the checksum of what it received and refuses a PUT
whose ``x-amz-checksum-sha256`` differs (400 ``BadDigest``; "If the values don't match,
the request is rejected", S3 User Guide, *Checking object integrity for data uploads*);
moto stores whatever value the client sent (moto 5.2: "TODO: AWS computes the provided
value and verifies it's the same"). A PUT naming SHA-256 is checked here the S3 way.

:func:`install` wraps moto's backend (process-wide) while a local stack runs; tests
on ``mock_aws`` install it too where they rely on these behaviours.
``tests/aws/test_s3_contract.py`` holds each patch to S3's documented behaviour and
checks that moto still deviates without it: when a moto release fixes one, that test
fails and names the part of this module to remove.
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
    """Patch moto's S3 (process-wide); returns the function that undoes it."""
    undo = [_install_notifications(), _install_checksums()]

    def uninstall() -> None:
        for step in reversed(undo):
            step()

    return uninstall


def _install_checksums() -> Callable[[], None]:
    from moto.s3 import responses

    with _lock:
        original = responses.S3Response._get_checksum
        responses.S3Response._get_checksum = _checked(original)  # type: ignore[method-assign]

    def uninstall() -> None:
        with _lock:
            responses.S3Response._get_checksum = original  # type: ignore[method-assign]

    return uninstall


def _install_notifications() -> Callable[[], None]:
    """The delete notifications and the versions listing (the module's docstring)."""
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

        original_versions = models.S3Backend.list_object_versions

        def list_object_versions(
            self: Any,
            bucket_name: str,
            delimiter: str | None = None,
            key_marker: str | None = None,
            max_keys: int | None = 1000,
            prefix: str = "",
            version_id_marker: str | None = None,
        ) -> Any:
            if key_marker is None or version_id_marker or delimiter:
                return original_versions(
                    self, bucket_name, delimiter, key_marker, max_keys, prefix, version_id_marker
                )
            versions, _, markers, _, _ = original_versions(
                self, bucket_name, None, None, None, prefix, None
            )
            listed: list[Any] = [*versions, *markers]
            after = sorted(
                (v for v in listed if v.name > key_marker),
                key=lambda v: (v.name, -v.last_modified.timestamp()),
            )
            page = after[:max_keys] if max_keys is not None else after
            truncated = len(page) < len(after)
            last: Any = page[-1] if truncated and page else None
            return (
                [v for v in page if isinstance(v, models.FakeKey)],
                [],
                [v for v in page if not isinstance(v, models.FakeKey)],
                last.name if last else None,
                last.version_id if last else None,
            )

        models.S3Backend.delete_object = delete_object  # type: ignore[method-assign]
        models.S3Backend.list_object_versions = list_object_versions  # type: ignore[method-assign]
        notifications._get_s3_event = get_s3_event

    def uninstall() -> None:
        with _lock:
            models.S3Backend.delete_object = original_delete  # type: ignore[method-assign]
            models.S3Backend.list_object_versions = original_versions  # type: ignore[method-assign]
            notifications._get_s3_event = original_event

    return uninstall


def _checked(original: Callable[..., tuple[str, str | None]]) -> Callable[..., Any]:
    """moto's reading of a PUT's checksum, refusing a SHA-256 that is not the body's."""
    import base64
    import hashlib

    from moto.s3.exceptions import S3ClientError

    def get_checksum(self: Any, response_headers: dict[str, Any]) -> tuple[str, str | None]:
        algorithm, value = original(self, response_headers)
        # The header (a precomputed value) or the aws-chunked trailer moto read.
        claimed = self.headers.get("x-amz-checksum-sha256") or (
            value if algorithm.upper() == "SHA256" else None
        )
        if claimed is not None:
            actual = base64.b64encode(hashlib.sha256(self.body or b"").digest()).decode()
            if claimed != actual:
                raise S3ClientError(
                    "BadDigest",
                    "The SHA256 you specified did not match the calculated checksum.",
                )
        return algorithm, value

    return get_checksum
