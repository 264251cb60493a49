"""One upload's conversation with S3: a conditional PUT or a multipart upload, and the
checksum comparison when the key already exists.

Every object carries its content's SHA-256 in the user metadata ``sha256``: the
412 comparison reads it with one ``HeadObject``. For objects without it (written
by another tool) a single-part object's ETag is compared with the content's MD5,
and as a last resort the object is downloaded and hashed.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, BinaryIO, Final

from botocore.exceptions import ClientError

from video_index.upload.results import Status, UploadConflict, UploadFailed, UploadResult
from video_index.upload.retry import (
    TRANSPORT_ERRORS,
    RetryPolicy,
    failure_code,
    http_status,
    is_precondition_failed,
)

MiB: Final = 1024 * 1024
#: Metadata key holding the hex SHA-256 of the object's content.
SHA256_METADATA: Final = "sha256"
CONTENT_TYPES: Final[dict[str, str]] = {
    "mp4": "video/mp4",
    "ts": "video/mp2t",
    "json": "application/json",
}
_NOT_FOUND: Final = frozenset({"404", "NoSuchKey", "NotFound"})
_HEX64: Final = re.compile(r"^[0-9a-f]{64}$")
_CHUNK: Final = MiB


def read_chunks(stream: BinaryIO, offset: int, length: int) -> Iterator[bytes]:
    stream.seek(offset)
    remaining = length
    while remaining > 0:
        chunk = stream.read(min(_CHUNK, remaining))
        if not chunk:
            raise OSError(f"file ended {remaining} bytes early (was it truncated?)")
        remaining -= len(chunk)
        yield chunk


@dataclass
class Transfer:
    """One segment's upload: its key, content checksum and retry policy."""

    s3: Any
    bucket: str
    key: str
    sha256: str
    size: int
    ext: str
    policy: RetryPolicy

    def _result(self, status: Status, attempts: int) -> UploadResult:
        return UploadResult(self.key, status, self.sha256, self.size, attempts)

    def _decide(self, remote_sha256: str, attempts: int) -> UploadResult:
        if remote_sha256 == self.sha256:
            return self._result("already-present", attempts)
        raise UploadConflict(self.key, self.sha256, remote_sha256, attempts)

    # -- single PUT --

    def single(self, content: bytes) -> UploadResult:
        put = partial(
            self.s3.put_object,
            Bucket=self.bucket,
            Key=self.key,
            Body=content,
            IfNoneMatch="*",
            Metadata={SHA256_METADATA: self.sha256},
            ChecksumAlgorithm="SHA256",
            ContentType=CONTENT_TYPES.get(self.ext, "application/octet-stream"),
        )
        attempts = self.policy.attempts("PutObject")
        while True:
            attempts.count += 1
            try:
                put()
                return self._result("uploaded", attempts.count)
            except ClientError as exc:
                if not is_precondition_failed(exc):
                    attempts.failed(exc)
                    continue
                remote = self._remote_sha256(
                    hashlib.md5(content, usedforsecurity=False).hexdigest()
                )
                if remote is not None:
                    return self._decide(remote, attempts.count)
                # The object was deleted between our PUT and HEAD: try the PUT again.
                if attempts.count >= self.policy.max_attempts:
                    raise attempts.give_up(exc, "PreconditionFailed", exhausted=True) from exc
            except TRANSPORT_ERRORS as exc:
                attempts.failed(exc)

    # -- multipart --

    def multipart(self, stream: BinaryIO, part_size: int) -> UploadResult:
        # A retried camera should not send a large file again: look first. This is
        # only a shortcut — the conditional completion below is what guarantees
        # that nothing is overwritten — so any error here just means "upload".
        try:
            remote = self._remote_sha256(None)
        except (UploadFailed, ClientError):
            remote = None
        if remote is not None:
            return self._decide(remote, 0)
        created = self.policy.call(
            "CreateMultipartUpload",
            partial(
                self.s3.create_multipart_upload,
                Bucket=self.bucket,
                Key=self.key,
                Metadata={SHA256_METADATA: self.sha256},
                ChecksumAlgorithm="SHA256",
                ContentType=CONTENT_TYPES.get(self.ext, "application/octet-stream"),
            ),
        )
        upload_id: str = created["UploadId"]
        completed = False
        try:
            parts = self._upload_parts(stream, part_size, upload_id)
            result = self._complete(upload_id, parts)
            completed = result.status == "uploaded"
            return result
        finally:
            if not completed:
                self._abort(upload_id)

    def _upload_parts(
        self, stream: BinaryIO, part_size: int, upload_id: str
    ) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        sent = hashlib.sha256()
        for number, offset in enumerate(range(0, self.size, part_size), start=1):
            body = b"".join(read_chunks(stream, offset, min(part_size, self.size - offset)))
            sent.update(body)
            answer = self.policy.call(
                "UploadPart",
                partial(
                    self.s3.upload_part,
                    Bucket=self.bucket,
                    Key=self.key,
                    UploadId=upload_id,
                    PartNumber=number,
                    Body=body,
                    ChecksumAlgorithm="SHA256",
                ),
            )
            part = {"ETag": answer["ETag"], "PartNumber": number}
            if answer.get("ChecksumSHA256"):
                part["ChecksumSHA256"] = answer["ChecksumSHA256"]
            parts.append(part)
        if sent.hexdigest() != self.sha256:
            # The id and the sha256 metadata describe what was hashed, not what was sent.
            raise UploadFailed(
                self.key,
                "UploadPart",
                "LocalFileChanged",
                1,
                exhausted=False,
                detail="the file changed while it was being uploaded",
            )
        return parts

    def _complete(self, upload_id: str, parts: list[dict[str, Any]]) -> UploadResult:
        complete = partial(
            self.s3.complete_multipart_upload,
            Bucket=self.bucket,
            Key=self.key,
            UploadId=upload_id,
            MultipartUpload={"Parts": parts},
            IfNoneMatch="*",
        )
        attempts = self.policy.attempts("CompleteMultipartUpload")
        while True:
            attempts.count += 1
            try:
                complete()
                return self._result("uploaded", attempts.count)
            except ClientError as exc:
                code = failure_code(exc)
                if not (is_precondition_failed(exc) or code == "NoSuchUpload"):
                    attempts.failed(exc)
                    continue
                # 412: the key exists. NoSuchUpload on a retry: an earlier attempt
                # completed it and its answer was lost. Either way, look at the object.
                remote = self._remote_sha256(None)
                if remote is not None:
                    return self._decide(remote, attempts.count)
                if code == "NoSuchUpload" or attempts.count >= self.policy.max_attempts:
                    raise attempts.give_up(exc, code, exhausted=False) from exc
            except TRANSPORT_ERRORS as exc:
                attempts.failed(exc)

    def _abort(self, upload_id: str) -> None:
        """Best effort: a lifecycle rule for incomplete uploads is the safety net."""
        with contextlib.suppress(UploadFailed, ClientError):
            self.policy.call(
                "AbortMultipartUpload",
                partial(
                    self.s3.abort_multipart_upload,
                    Bucket=self.bucket,
                    Key=self.key,
                    UploadId=upload_id,
                ),
                passthrough=True,
            )

    # -- what the key holds --

    def _read(self, operation: str, method: Callable[..., Any]) -> dict[str, Any] | None:
        """``method`` on the key with the retry policy; None when the key holds nothing."""
        try:
            answer: dict[str, Any] = self.policy.call(
                operation,
                partial(method, Bucket=self.bucket, Key=self.key),
                passthrough=True,
            )
        except ClientError as exc:
            if failure_code(exc) in _NOT_FOUND or http_status(exc) == 404:
                return None
            raise UploadFailed(
                self.key, operation, failure_code(exc), 1, exhausted=False, detail=str(exc)
            ) from exc
        return answer

    def _remote_sha256(self, content_md5: str | None) -> str | None:
        """SHA-256 of the object under the key, or None when there is none."""
        head = self._read("HeadObject", self.s3.head_object)
        if head is None:
            return None
        recorded = str(head.get("Metadata", {}).get(SHA256_METADATA, "")).lower()
        if _HEX64.fullmatch(recorded):
            return recorded
        etag = str(head.get("ETag", "")).strip('"')
        if content_md5 is not None and etag == content_md5:
            return self.sha256  # same bytes: a single-part object's ETag is their MD5
        return self._download_sha256()

    def _download_sha256(self) -> str | None:
        """Last resort for objects written without the metadata: hash their content."""
        answer = self._read("GetObject", self.s3.get_object)
        if answer is None:
            return None
        digest = hashlib.sha256()
        body = answer["Body"]
        try:
            for chunk in iter(partial(body.read, _CHUNK), b""):
                digest.update(chunk)
        finally:
            body.close()
        return digest.hexdigest()
