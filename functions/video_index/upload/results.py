"""What an upload ends in: a result, or an error naming what went wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from video_index.core.errors import BadInput, Conflict, ServiceError

Status = Literal["uploaded", "already-present"]
OutcomeStatus = Literal["uploaded", "already-present", "conflict", "failed", "skipped"]


@dataclass(frozen=True)
class UploadResult:
    """The key holds the segment's content: written now, or found already there."""

    key: str
    status: Status
    sha256: str
    size: int
    #: How many times the conditional write (``PutObject``, or
    #: ``CompleteMultipartUpload`` for a multipart upload) was sent; 0 when a large
    #: file was found already present before any part was uploaded.
    attempts: int


class UploadConflict(Conflict):
    """The key already holds different content; it was left untouched."""

    def __init__(self, key: str, local_sha256: str, remote_sha256: str, attempts: int = 0) -> None:
        super().__init__(
            f"conflict: {key} already holds different content "
            f"(local sha256 {local_sha256}, remote sha256 {remote_sha256})"
        )
        self.key = key
        self.local_sha256 = local_sha256
        self.remote_sha256 = remote_sha256
        #: Conditional writes sent (as in :attr:`UploadResult.attempts`).
        self.attempts = attempts


class UploadFailed(ServiceError):
    """S3 kept failing (retries exhausted) or refused in a way retrying cannot fix."""

    def __init__(
        self, key: str, operation: str, code: str, attempts: int, *, exhausted: bool, detail: str
    ) -> None:
        why = f"gave up after {attempts} attempts" if exhausted else "not retryable"
        super().__init__(f"{operation} of {key} failed with {code} ({why}): {detail}")
        self.key = key
        self.operation = operation
        self.code = code
        self.attempts = attempts
        #: True when the error was transient and ``max_attempts`` (or the time budget)
        #: ran out; False for an error that retrying cannot fix.
        self.exhausted = exhausted


class UploadArgumentError(BadInput):
    """An argument of the upload is invalid; ``argument`` names it (e.g. ``duration_ms``)."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(argument, reason)
        self.argument = argument
        self.reason = reason
