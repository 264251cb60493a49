"""Asking S3 what is true now: the tie-breaker whenever an event cannot decide."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from video_index.projection import ABSENT, ObjectState


class ObjectStoreError(RuntimeError):
    """S3 refused a request for a reason retrying will not fix (e.g. permissions)."""


class TransientObjectStoreError(ObjectStoreError):
    """Throttling, a 5xx or a network error: retry later."""


class ObjectReader:
    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self.bucket = bucket

    def head(self, key: str) -> ObjectState:
        try:
            response = self._client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if status == 404 or code in ("404", "NoSuchKey", "NotFound"):
                return ABSENT
            if status >= 500 or status == 429 or code in ("SlowDown", "503", "500"):
                raise TransientObjectStoreError(f"S3 HEAD {key}: {code}") from exc
            if status == 403:
                raise ObjectStoreError(
                    f"S3 HEAD {key} was denied (403): the role needs s3:GetObject on the "
                    "key and s3:ListBucket on the bucket"
                ) from exc
            raise ObjectStoreError(f"S3 HEAD {key}: {code}") from exc
        except BotoCoreError as exc:
            raise TransientObjectStoreError(f"S3 unreachable: {exc}") from exc
        return ObjectState(
            present=True,
            size=int(response["ContentLength"]),
            etag=str(response.get("ETag", "")).strip('"'),
        )
