"""The one S3 adapter: listing (objects and versions), HEAD, GET (whole, ranged, streamed),
JSON, copies, batched deletes, presigned URLs.

S3 is the truth (docs/invariants.md): whenever an event cannot decide, the code
asks S3 through here. Every ``ClientError``/``BotoCoreError`` is mapped once, in
:func:`s3_error`: a missing key or bucket is :class:`ObjectMissing`, throttling,
5xx and network failures are :class:`TransientObjectStoreError` (retry later),
anything else (permissions, a malformed request) is :class:`ObjectStoreError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from video_index.core.errors import ServiceError, TransientError
from video_index.core.projection import ABSENT, ObjectState

_MISSING_CODES: Final = frozenset({"404", "NoSuchKey", "NotFound"})
_TRANSIENT_CODES: Final = frozenset(
    {"SlowDown", "503", "500", "InternalError", "ServiceUnavailable", "RequestTimeout"}
)


class ObjectStoreError(ServiceError):
    """S3 refused a request for a reason retrying will not fix (e.g. permissions)."""


class TransientObjectStoreError(ObjectStoreError, TransientError):
    """Throttling, a 5xx or a network error: retry later."""


class ObjectMissing(ObjectStoreError):
    """The key does not exist."""


@dataclass(frozen=True, slots=True)
class ListedObject:
    """One object of a listing: what P(S3) is computed from."""

    key: str
    size: int
    etag: str
    #: ``LastModified`` (epoch ms): when S3 received the object.
    received_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ObjectVersion:
    """One version or delete marker of a versioned listing."""

    key: str
    version_id: str
    is_marker: bool
    is_latest: bool
    size: int = 0
    etag: str = ""


@dataclass(frozen=True, slots=True)
class CheckedObject:
    """An object's bytes read with ``ChecksumMode=ENABLED``: the version read, and S3's stored
    SHA-256 checksum (base64) with its type, when the object has one (the SDK has checked the
    bytes against a full-object checksum)."""

    body: bytes
    version_id: str
    checksum_sha256: str | None
    checksum_type: str | None


#: The largest object one CopyObject request copies; larger ones go part by part.
MAX_SINGLE_COPY_BYTES: Final = 5 * 1024**3


def _version(entry: dict[str, Any], *, marker: bool) -> tuple[ObjectVersion, float]:
    """A ``Versions`` or ``DeleteMarkers`` entry, with its time for ordering."""
    version = ObjectVersion(
        key=entry["Key"],
        version_id=str(entry.get("VersionId") or "null"),
        is_marker=marker,
        is_latest=bool(entry.get("IsLatest")),
        size=0 if marker else int(entry.get("Size", 0)),
        etag="" if marker else etag_of(entry.get("ETag")),
    )
    return version, entry["LastModified"].timestamp()


def s3_error(exc: ClientError | BotoCoreError, what: str) -> ObjectStoreError:
    """The one mapping of S3 failures to the product's errors; ``what`` names the request."""
    if isinstance(exc, BotoCoreError):
        return TransientObjectStoreError(f"S3 unreachable ({what}): {exc}")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    code = str(exc.response.get("Error", {}).get("Code", "")) or str(status)
    if code == "NoSuchBucket":  # never "absent": a missing bucket must not empty the index
        return ObjectStoreError(f"{what}: the bucket does not exist")
    if status == 404 or code in _MISSING_CODES:
        return ObjectMissing(f"{what}: {code}")
    if status >= 500 or status == 429 or code in _TRANSIENT_CODES:
        return TransientObjectStoreError(f"{what}: {code}")
    if status == 403:
        return ObjectStoreError(
            f"{what} was denied (403): the role needs s3:GetObject on the key and "
            "s3:ListBucket on the bucket"
        )
    return ObjectStoreError(f"{what}: {code}")


def _epoch_ms(moment: Any) -> int | None:
    """S3's ``LastModified`` (a datetime from boto3) in epoch ms."""
    return int(moment.timestamp() * 1000) if moment is not None else None


def etag_of(raw: object) -> str:
    """An ETag without the quotes S3 puts around it."""
    return str(raw or "").strip('"')


class ObjectStore:
    """The objects of one bucket, as S3 reports them now."""

    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    # -- metadata --------------------------------------------------------------------------

    def head(self, key: str) -> ObjectState:
        """The key's current object: present with size and ETag, or :data:`ABSENT`."""
        try:
            response = self.client.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            error = s3_error(exc, f"S3 HEAD {key}")
            if isinstance(error, ObjectMissing):
                return ABSENT
            raise error from exc
        return ObjectState(
            present=True,
            size=int(response["ContentLength"]),
            etag=etag_of(response.get("ETag")),
            received_ms=_epoch_ms(response.get("LastModified")),
        )

    def exists(self, key: str) -> bool:
        return self.head(key).present

    def list(self, prefix: str, start_after: str | None = None) -> Iterator[ListedObject]:
        """Every current object under ``prefix`` (after ``start_after``), in key order, a
        page (1,000 keys) at a time."""
        request = {"Bucket": self.bucket, "Prefix": prefix}
        if start_after:
            request["StartAfter"] = start_after
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(**request):
                for obj in page.get("Contents", []):
                    yield ListedObject(
                        obj["Key"],
                        int(obj["Size"]),
                        etag_of(obj.get("ETag")),
                        _epoch_ms(obj.get("LastModified")),
                    )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST {self.uri(prefix)}") from exc

    def list_shallow(self, prefix: str) -> Iterator[ListedObject]:
        """The current objects right under ``prefix``, not in a "folder" below it."""
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, Delimiter="/"
            ):
                for obj in page.get("Contents", []):
                    yield ListedObject(
                        obj["Key"],
                        int(obj["Size"]),
                        etag_of(obj.get("ETag")),
                        _epoch_ms(obj.get("LastModified")),
                    )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST {self.uri(prefix)}") from exc

    def versions(self, prefix: str, after_key: str | None = None) -> Iterator[ObjectVersion]:
        """Every version and delete marker under ``prefix`` (keys after ``after_key``), in
        key order and, within a key, newest first (``ListObjectVersions``)."""
        request = {"Bucket": self.bucket, "Prefix": prefix}
        if after_key:
            request["KeyMarker"] = after_key
        try:
            for page in self.client.get_paginator("list_object_versions").paginate(**request):
                versions = [_version(v, marker=False) for v in page.get("Versions", [])]
                markers = [_version(m, marker=True) for m in page.get("DeleteMarkers", [])]
                # A page lists versions and markers apart, each by key and newest first.
                merged = sorted(
                    versions + markers, key=lambda e: (e[0].key, -e[1], not e[0].is_latest)
                )
                yield from (entry for entry, _ in merged)
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST versions {self.uri(prefix)}") from exc

    def folders(self, prefix: str) -> Iterator[str]:
        """The names of the "folders" right under ``prefix`` (``Delimiter="/"``)."""
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, Delimiter="/"
            ):
                for common in page.get("CommonPrefixes", []):
                    yield str(common["Prefix"])[len(prefix) :].rstrip("/")
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST {self.uri(prefix)}") from exc

    # -- content ---------------------------------------------------------------------------

    def open(
        self,
        key: str,
        byte_range: tuple[int, int] | None = None,
        version_id: str | None = None,
    ) -> Any:
        """The streaming body of the key (``byte_range``: first and last byte, inclusive;
        ``version_id``: that version rather than the current one)."""
        request: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        if byte_range is not None:
            request["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
        if version_id is not None and version_id != "null":
            request["VersionId"] = version_id
        try:
            return self.client.get_object(**request)["Body"]
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 GET {self.uri(key)}") from exc

    def get_bytes(
        self,
        key: str,
        byte_range: tuple[int, int] | None = None,
        version_id: str | None = None,
    ) -> bytes:
        body = self.open(key, byte_range, version_id)
        try:
            return bytes(body.read())
        except BotoCoreError as exc:
            raise s3_error(exc, f"S3 GET {self.uri(key)}") from exc
        finally:
            body.close()

    def get_checked(self, key: str) -> CheckedObject:
        """The key's current bytes with S3's stored checksum (one GET, docs/playback.md)."""
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
            body = bytes(answer["Body"].read())
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 GET {self.uri(key)}") from exc
        return CheckedObject(
            body,
            str(answer.get("VersionId") or "null"),
            answer.get("ChecksumSHA256"),
            answer.get("ChecksumType"),
        )

    def get_optional_bytes(self, key: str) -> bytes | None:
        try:
            return self.get_bytes(key)
        except ObjectMissing:
            return None

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key))

    def metadata(self, key: str) -> dict[str, str] | None:
        """The key's user metadata, or None when it holds no object."""
        try:
            response = self.client.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            error = s3_error(exc, f"S3 HEAD {key}")
            if isinstance(error, ObjectMissing):
                return None
            raise error from exc
        return {str(k).lower(): str(v) for k, v in response.get("Metadata", {}).items()}

    def put_bytes(
        self, key: str, body: bytes, content_type: str, metadata: dict[str, str] | None = None
    ) -> None:
        extra = {"Metadata": metadata} if metadata else {}
        try:
            self.client.put_object(
                Bucket=self.bucket, Key=key, Body=body, ContentType=content_type, **extra
            )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 PUT {self.uri(key)}") from exc

    def put_checked(self, key: str, body: bytes, content_type: str) -> None:
        """Write ``body`` with its SHA-256 checksum (S3 refuses it when the bytes differ)."""
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=body,
                ContentType=content_type,
                ChecksumAlgorithm="SHA256",
            )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 PUT {self.uri(key)}") from exc

    def put_json(self, key: str, document: Any) -> dict[str, str]:
        """Write ``document`` as JSON; returns its location as Step Functions names it."""
        self.put_bytes(key, json.dumps(document, default=str).encode(), "application/json")
        return {"Bucket": self.bucket, "Key": key}

    def put_file(self, key: str, path: str, content_type: str) -> None:
        """Upload a local file (multipart when large, by boto3's transfer manager)."""
        try:
            self.client.upload_file(path, self.bucket, key, ExtraArgs={"ContentType": content_type})
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 PUT {self.uri(key)}") from exc
        except Exception as exc:  # boto3's S3UploadFailedError wraps the ClientError
            cause = exc.__cause__ if isinstance(exc.__cause__, ClientError) else None
            if cause is None:
                raise
            raise s3_error(cause, f"S3 PUT {self.uri(key)}") from exc

    def delete(self, keys: Sequence[str]) -> None:
        """Delete (the current versions of) ``keys``, 1,000 per request; missing keys are fine."""
        self._delete_objects([{"Key": key} for key in keys])

    def delete_versions(self, versions: Sequence[tuple[str, str]]) -> None:
        """Delete these ``(key, version id)`` versions or delete markers for good, 1,000
        per request."""
        self._delete_objects([{"Key": key, "VersionId": version} for key, version in versions])

    def _delete_objects(self, objects: Sequence[dict[str, str]]) -> None:
        for start in range(0, len(objects), 1000):
            chunk = objects[start : start + 1000]
            try:
                answer = self.client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": chunk, "Quiet": True}
                )
            except (ClientError, BotoCoreError) as exc:
                raise s3_error(exc, f"S3 DELETE {len(chunk)} keys in {self.uri('')}") from exc
            if answer.get("Errors"):
                first = answer["Errors"][0]
                code = str(first.get("Code", ""))
                message = f"S3 DELETE {first.get('Key')}: {code} {first.get('Message', '')}"
                if code in _TRANSIENT_CODES:
                    raise TransientObjectStoreError(message)
                raise ObjectStoreError(message)

    def copy_in(
        self, source_bucket: str, key: str, size: int, version_id: str | None = None
    ) -> None:
        """Copy ``key`` (that version) of ``source_bucket`` to the same key here: one
        CopyObject up to 5 GiB, part by part above."""
        source: dict[str, str] = {"Bucket": source_bucket, "Key": key}
        if version_id is not None and version_id != "null":
            source["VersionId"] = version_id
        try:
            if size <= MAX_SINGLE_COPY_BYTES:
                self.client.copy_object(Bucket=self.bucket, Key=key, CopySource=source)
            else:
                self.client.copy(source, self.bucket, key)
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 COPY s3://{source_bucket}/{key} to {self.uri(key)}") from exc

    def presign_get(self, key: str, expires_seconds: int, download_as: str | None = None) -> str:
        """A SigV4 URL that GETs the key for ``expires_seconds`` (no request is made);
        ``download_as``: answered as an attachment of that file name (a browser saves it)."""
        params = {"Bucket": self.bucket, "Key": key}
        if download_as is not None:
            params["ResponseContentDisposition"] = f'attachment; filename="{download_as}"'
        url: str = self.client.generate_presigned_url(
            "get_object", Params=params, ExpiresIn=expires_seconds
        )
        return url
