"""The one S3 adapter: listing, HEAD, GET (whole, ranged, streamed), JSON, presigned URLs.

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
            present=True, size=int(response["ContentLength"]), etag=etag_of(response.get("ETag"))
        )

    def exists(self, key: str) -> bool:
        return self.head(key).present

    def list(self, prefix: str) -> Iterator[ListedObject]:
        """Every current object under ``prefix``, in key order, a page (1,000 keys) at a time."""
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            ):
                for obj in page.get("Contents", []):
                    yield ListedObject(obj["Key"], int(obj["Size"]), etag_of(obj.get("ETag")))
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST {self.uri(prefix)}") from exc

    def list_shallow(self, prefix: str) -> Iterator[ListedObject]:
        """The current objects right under ``prefix``, not in a "folder" below it."""
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, Delimiter="/"
            ):
                for obj in page.get("Contents", []):
                    yield ListedObject(obj["Key"], int(obj["Size"]), etag_of(obj.get("ETag")))
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, f"S3 LIST {self.uri(prefix)}") from exc

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

    def get_optional_bytes(self, key: str) -> bytes | None:
        try:
            return self.get_bytes(key)
        except ObjectMissing:
            return None

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key))

    def put_bytes(self, key: str, body: bytes, content_type: str) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType=content_type)
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
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            try:
                answer = self.client.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": [{"Key": key} for key in chunk], "Quiet": True},
                )
            except (ClientError, BotoCoreError) as exc:
                raise s3_error(exc, f"S3 DELETE {len(chunk)} keys in {self.uri('')}") from exc
            if answer.get("Errors"):
                first = answer["Errors"][0]
                raise ObjectStoreError(
                    f"S3 DELETE {first.get('Key')}: {first.get('Code')} {first.get('Message', '')}"
                )

    def presign_get(self, key: str, expires_seconds: int) -> str:
        """A SigV4 URL that GETs the key for ``expires_seconds`` (no request is made)."""
        url: str = self.client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_seconds
        )
        return url
