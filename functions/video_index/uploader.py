"""The camera uploader (SPEC §3): put one segment under its key, safely and idempotently.

The key is built from ``(kind, device, start, duration, content)`` (SPEC §2), so a
retried upload of the same segment produces the same key. Every write is
conditional (``If-None-Match: *``): S3 answers 412 when the key already exists,
and the uploader then compares checksums —

* same content: success, reported as ``already-present`` (an idempotent retry, or
  an earlier attempt whose response was lost);
* different content: :class:`UploadConflict`, naming both SHA-256 checksums. The
  existing object is never overwritten.

Small files go up in one ``PutObject`` (S3 verifies the SHA-256 checksum sent
with it); files of ``multipart_threshold`` bytes or more are hashed first, in
chunks, and then sent as a multipart upload whose completion carries
``If-None-Match: *``. A multipart upload that does not complete is always
aborted, so no orphan parts are left (and billed). Before uploading a large
file the uploader looks whether the key already exists, so a retried camera
does not send gigabytes for nothing.

Every object carries its content's SHA-256 in the user metadata ``sha256``: the
412 comparison reads it with one ``HeadObject``. For objects without it (written
by another tool) a single-part object's ETag is compared with the content's MD5,
and as a last resort the object is downloaded and hashed.

409 ``ConditionalRequestConflict`` / ``OperationAborted``, throttling (429/503
``SlowDown`` …), 500 ``InternalError`` and connection errors are retried with
exponential backoff and jitter (base 0.1 s, cap 5 s) up to ``max_attempts``
requests; then, or at once for an error that retrying cannot fix (e.g.
``AccessDenied``, ``NoSuchBucket``), :class:`UploadFailed` names the S3 error code.

The uploader writes to S3 only — never to DynamoDB (the read model follows from S3
events). The S3 client is passed in; nothing here reads AWS configuration.

Directory mode (:func:`upload_directory`): every regular file of a directory
named ``<start>_<duration_ms>.<ext>`` — start as in keys, ``YYYYMMDDTHHMMSS.fffZ``,
e.g. ``20261130T120000.000Z_10000.mp4`` — is uploaded; other files are skipped
with the reason. One bad file never stops the others.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, TypeVar

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from video_index.keys import (
    EXTENSIONS,
    MAX_DURATION_MS,
    MIN_DURATION_MS,
    InvalidKeyError,
    SegmentKey,
    format_key,
    format_start,
    parse_start,
    segment_id,
    validate_device,
    validate_kind,
)

MiB: Final = 1024 * 1024
#: S3's smallest part (all but the last), most parts and largest single PUT.
MIN_PART_SIZE: Final = 5 * MiB
MAX_PARTS: Final = 10_000
MAX_SINGLE_PUT: Final = 5 * 1024 * MiB

BACKOFF_BASE_S: Final = 0.1
BACKOFF_CAP_S: Final = 5.0
#: Metadata key holding the hex SHA-256 of the object's content.
SHA256_METADATA: Final = "sha256"
CONTENT_TYPES: Final[dict[str, str]] = {
    "mp4": "video/mp4",
    "ts": "video/mp2t",
    "json": "application/json",
}

#: Error codes worth another attempt: conflicting conditional writes, throttling and
#: transient server errors. Any 429/5xx answer is retried whatever its code.
RETRYABLE_CODES: Final = frozenset(
    {
        "ConditionalRequestConflict",
        "OperationAborted",
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "InternalError",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
        "BadDigest",  # the bytes were damaged on the way: sending them again fixes it
    }
)
_RETRYABLE_STATUS: Final = frozenset({429, 500, 502, 503, 504})
_NOT_FOUND: Final = frozenset({"404", "NoSuchKey", "NotFound"})
_HEX64: Final = re.compile(r"^[0-9a-f]{64}$")
_CHUNK: Final = MiB

Status = Literal["uploaded", "already-present"]
OutcomeStatus = Literal["uploaded", "already-present", "conflict", "failed", "skipped"]
T = TypeVar("T")


# --- results and errors ------------------------------------------------------------------


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


class UploadConflict(Exception):
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


class UploadFailed(Exception):
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


class UploadArgumentError(ValueError):
    """An argument of the upload is invalid; ``argument`` names it (e.g. ``duration_ms``)."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(f"{argument}: {reason}")
        self.argument = argument
        self.reason = reason


# --- the segment id, incrementally -------------------------------------------------------


def segment_id_hasher(kind: str, device: str, start: datetime, duration_ms: int) -> Any:
    """A SHA-256 primed exactly as :func:`video_index.keys.segment_id` primes it.

    Feed it the content (in any number of ``update`` calls); the first 16 hex digits
    of its digest are then the segment id, without holding the content in memory.
    """
    digest = hashlib.sha256()
    for part in (kind, device, format_start(start), str(duration_ms)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest


# --- retries -----------------------------------------------------------------------------


def _error_code(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or _http_status(exc) or "Unknown")
    return type(exc).__name__


def _http_status(exc: ClientError) -> int | None:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else None


def _is_retryable(exc: Exception) -> bool:
    if isinstance(exc, ClientError):
        return _error_code(exc) in RETRYABLE_CODES or _http_status(exc) in _RETRYABLE_STATUS
    return isinstance(exc, BotoConnectionError | HTTPClientError)


def _is_precondition_failed(exc: ClientError) -> bool:
    return _error_code(exc) == "PreconditionFailed" or _http_status(exc) == 412


_TRANSPORT_ERRORS: Final = (BotoConnectionError, HTTPClientError)


@dataclass
class _Policy:
    """Backoff settings shared by every request of one upload."""

    key: str
    max_attempts: int
    sleep: Callable[[float], object]
    clock: Callable[[], float]
    jitter: Callable[[], float]
    timeout_s: float | None
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def delay(self, attempt: int) -> float:
        """Exponential backoff with "equal jitter": half fixed, half random."""
        ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** (attempt - 1))
        return ceiling / 2 + self.jitter() * ceiling / 2

    def attempts(self, operation: str) -> _Attempts:
        return _Attempts(self, operation)

    def call(self, operation: str, request: Callable[[], T], *, passthrough: bool = False) -> T:
        """``request()`` with retries. ``passthrough``: re-raise non-retryable
        ``ClientError``s as they are (the caller handles 404, 412 …)."""
        attempts = self.attempts(operation)
        while True:
            attempts.count += 1
            try:
                return request()
            except ClientError as exc:
                if passthrough and not _is_retryable(exc):
                    raise
                attempts.failed(exc)
            except _TRANSPORT_ERRORS as exc:
                attempts.failed(exc)


@dataclass
class _Attempts:
    """The attempts of one request: count them, back off, or give up."""

    policy: _Policy
    operation: str
    count: int = 0

    def failed(self, exc: Exception) -> None:
        """Sleep before the next attempt, or raise :class:`UploadFailed`."""
        policy, code = self.policy, _error_code(exc)
        if not _is_retryable(exc):
            raise self.give_up(exc, code, exhausted=False) from exc
        if self.count >= policy.max_attempts:
            raise self.give_up(exc, code, exhausted=True) from exc
        delay = policy.delay(self.count)
        if policy.timeout_s is not None and (
            policy.clock() - policy.started + delay > policy.timeout_s
        ):
            raise self.give_up(exc, code, exhausted=True) from exc
        policy.sleep(delay)

    def give_up(self, exc: Exception, code: str, *, exhausted: bool) -> UploadFailed:
        return UploadFailed(
            self.policy.key, self.operation, code, self.count, exhausted=exhausted, detail=str(exc)
        )


# --- arguments ---------------------------------------------------------------------------


def _check_arguments(
    kind: str, device: str, start: datetime, duration_ms: int, ext: str
) -> SegmentKey:
    """The segment's key with a placeholder id, or :class:`UploadArgumentError`."""
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise UploadArgumentError("kind", exc.reason) from None
    try:
        validate_device(device)
    except InvalidKeyError as exc:
        raise UploadArgumentError("device", exc.reason) from None
    if not isinstance(start, datetime):
        raise UploadArgumentError("start", f"must be a datetime, not {type(start).__name__}")
    if start.tzinfo is None or start.utcoffset() is None:
        raise UploadArgumentError("start", "must be timezone-aware (e.g. tzinfo=UTC)")
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, int):
        raise UploadArgumentError("duration_ms", "must be a whole number of milliseconds")
    low, high = MIN_DURATION_MS[kind], MAX_DURATION_MS[kind]
    if not low <= duration_ms <= high:
        raise UploadArgumentError(
            "duration_ms", f"{duration_ms} ms is out of range for {kind} ({low}..{high})"
        )
    if ext not in EXTENSIONS[kind]:
        raise UploadArgumentError(
            "ext",
            f"extension {ext or '(none)'!r} is not allowed for {kind} "
            f"(allowed: {', '.join(EXTENSIONS[kind])})",
        )
    try:  # the key schema itself is the final judge (precision, year range …)
        return SegmentKey(
            kind=kind, device=device, start=start, duration_ms=duration_ms, id="0", ext=ext
        )
    except ValueError as exc:
        raise UploadArgumentError("start", _reason(exc)) from None


def _reason(exc: ValueError) -> str:
    if isinstance(exc, InvalidKeyError):
        return exc.reason
    errors = getattr(exc, "errors", None)
    if callable(errors):
        for error in errors():
            inner = error.get("ctx", {}).get("error")
            return inner.reason if isinstance(inner, InvalidKeyError) else str(error["msg"])
    return str(exc)


# --- one segment -------------------------------------------------------------------------


def upload_segment(
    s3: Any,
    bucket: str,
    path_or_bytes: str | os.PathLike[str] | bytes,
    *,
    kind: str,
    device: str,
    start: datetime,
    duration_ms: int,
    ext: str | None = None,
    multipart_threshold: int = 64 * MiB,
    part_size: int = 16 * MiB,
    max_attempts: int = 6,
    sleep: Callable[[float], object] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    jitter: Callable[[], float] = random.random,
    retry_timeout_s: float | None = None,
) -> UploadResult:
    """Upload one segment under its key (SPEC §2) with a conditional write.

    ``path_or_bytes``: a file (read in chunks when large) or the content itself.
    ``ext`` defaults to the file's extension (required for bytes). Files of
    ``multipart_threshold`` bytes or more go up in ``part_size`` parts.
    ``max_attempts`` bounds the requests of each S3 operation; ``retry_timeout_s``
    (measured with ``clock``) optionally bounds the whole upload's retrying.
    ``sleep``/``clock``/``jitter`` are injectable for tests.

    Returns an :class:`UploadResult` (``uploaded`` or ``already-present``); raises
    :class:`UploadConflict`, :class:`UploadFailed` or :class:`UploadArgumentError`.
    """
    tuning = _Tuning(
        multipart_threshold, part_size, max_attempts, sleep, clock, jitter, retry_timeout_s
    )
    if isinstance(path_or_bytes, bytes | bytearray | memoryview):
        if ext is None:
            raise UploadArgumentError("ext", "is required when uploading bytes")
        draft = _check_arguments(kind, device, start, duration_ms, ext)
        tuning.check()
        content = bytes(path_or_bytes)
        return _upload_stream(s3, bucket, io.BytesIO(content), len(content), draft, tuning)
    path = Path(path_or_bytes)
    if ext is None:
        ext = path.suffix.lstrip(".").lower()
    # Check the arguments before touching the file, so their errors come first.
    draft = _check_arguments(kind, device, start, duration_ms, ext)
    tuning.check()
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            return _upload_stream(s3, bucket, stream, size, draft, tuning)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UploadArgumentError("path", f"cannot read {str(path)!r}: {reason}") from None


@dataclass(frozen=True)
class _Tuning:
    multipart_threshold: int
    part_size: int
    max_attempts: int
    sleep: Callable[[float], object]
    clock: Callable[[], float]
    jitter: Callable[[], float]
    retry_timeout_s: float | None

    def check(self) -> None:
        if self.multipart_threshold < 1:
            raise UploadArgumentError("multipart_threshold", "must be at least 1 byte")
        if self.part_size < MIN_PART_SIZE:
            raise UploadArgumentError(
                "part_size",
                f"{self.part_size} bytes is below S3's minimum part size ({MIN_PART_SIZE})",
            )
        if self.max_attempts < 1:
            raise UploadArgumentError("max_attempts", "must be at least 1")

    def policy(self, key: str) -> _Policy:
        return _Policy(
            key, self.max_attempts, self.sleep, self.clock, self.jitter, self.retry_timeout_s
        )


def _upload_stream(
    s3: Any, bucket: str, stream: BinaryIO, size: int, draft: SegmentKey, tuning: _Tuning
) -> UploadResult:
    """Hash, name and upload ``size`` bytes of ``stream`` (``draft``: the key sans id)."""
    if size >= tuning.multipart_threshold or size > MAX_SINGLE_PUT:
        # Large: hash in chunks first (the key needs the id), then send the parts.
        id_digest = segment_id_hasher(draft.kind, draft.device, draft.start, draft.duration_ms)
        content_digest = hashlib.sha256()
        for chunk in _chunks(stream, 0, size):
            id_digest.update(chunk)
            content_digest.update(chunk)
        key = format_key(draft.model_copy(update={"id": id_digest.hexdigest()[:16]}))
        upload = _Upload(
            s3, bucket, key, content_digest.hexdigest(), size, draft.ext, tuning.policy(key)
        )
        # A huge file gets larger parts rather than more than S3's 10,000.
        return upload.multipart(stream, max(tuning.part_size, -(-size // MAX_PARTS)))
    content = stream.read()
    segment_key_id = segment_id(draft.kind, draft.device, draft.start, draft.duration_ms, content)
    key = format_key(draft.model_copy(update={"id": segment_key_id}))
    sha256 = hashlib.sha256(content).hexdigest()
    return _Upload(s3, bucket, key, sha256, len(content), draft.ext, tuning.policy(key)).single(
        content
    )


def _chunks(stream: BinaryIO, offset: int, length: int) -> Iterator[bytes]:
    stream.seek(offset)
    remaining = length
    while remaining > 0:
        chunk = stream.read(min(_CHUNK, remaining))
        if not chunk:
            raise OSError(f"file ended {remaining} bytes early (was it truncated?)")
        remaining -= len(chunk)
        yield chunk


@dataclass
class _Upload:
    """One segment's upload: its key, content checksum and retry policy."""

    s3: Any
    bucket: str
    key: str
    sha256: str
    size: int
    ext: str
    policy: _Policy

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
                if not _is_precondition_failed(exc):
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
            except _TRANSPORT_ERRORS as exc:
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
            body = b"".join(_chunks(stream, offset, min(part_size, self.size - offset)))
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
                code = _error_code(exc)
                if not (_is_precondition_failed(exc) or code == "NoSuchUpload"):
                    attempts.failed(exc)
                    continue
                # 412: the key exists. NoSuchUpload on a retry: an earlier attempt
                # completed it and its answer was lost. Either way, look at the object.
                remote = self._remote_sha256(None)
                if remote is not None:
                    return self._decide(remote, attempts.count)
                if code == "NoSuchUpload" or attempts.count >= self.policy.max_attempts:
                    raise attempts.give_up(exc, code, exhausted=False) from exc
            except _TRANSPORT_ERRORS as exc:
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
            if _error_code(exc) in _NOT_FOUND or _http_status(exc) == 404:
                return None
            raise UploadFailed(
                self.key, operation, _error_code(exc), 1, exhausted=False, detail=str(exc)
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


# --- a directory -------------------------------------------------------------------------

#: ``<start>_<duration_ms>.<ext>``, start exactly as in keys.
DIRECTORY_NAME_RE: Final = re.compile(
    r"^(?P<start>[0-9]{8}T[0-9]{6}\.[0-9]{3}Z)_(?P<duration>[0-9]+)\.(?P<ext>[A-Za-z0-9]+)$"
)
NAME_CONVENTION: Final = "<start>_<duration_ms>.<ext>, e.g. 20261130T120000.000Z_10000.mp4"


@dataclass(frozen=True)
class ManifestEntry:
    """Start and duration of a file whose name does not say them."""

    start: datetime
    duration_ms: int
    ext: str | None = None


@dataclass(frozen=True)
class FileOutcome:
    """What became of one file: the unit of the CLI's output and of directory mode."""

    path: str
    status: OutcomeStatus
    key: str | None = None
    sha256: str | None = None
    size: int | None = None
    attempts: int = 0
    reason: str | None = None
    remote_sha256: str | None = None
    #: The S3 error code when S3 failed (retries exhausted or not retryable).
    error_code: str | None = None
    #: True when the failure is S3 being unavailable (retries exhausted).
    s3_unavailable: bool = False

    @classmethod
    def of_result(cls, path: str, result: UploadResult) -> FileOutcome:
        return cls(path, result.status, result.key, result.sha256, result.size, result.attempts)

    @classmethod
    def of_conflict(cls, path: str, conflict: UploadConflict, size: int | None) -> FileOutcome:
        return cls(
            path,
            "conflict",
            key=conflict.key,
            sha256=conflict.local_sha256,
            size=size,
            attempts=conflict.attempts,
            reason=str(conflict),
            remote_sha256=conflict.remote_sha256,
        )

    @classmethod
    def of_failure(cls, path: str, failure: UploadFailed, size: int | None) -> FileOutcome:
        return cls(
            path,
            "failed",
            key=failure.key,
            size=size,
            attempts=failure.attempts,
            reason=str(failure),
            error_code=failure.code,
            s3_unavailable=failure.exhausted,
        )

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "key": self.key,
            "size": self.size,
            "sha256": self.sha256,
            "attempts": self.attempts,
        }
        for name in ("reason", "remote_sha256", "error_code"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


def upload_directory(
    s3: Any,
    bucket: str,
    directory: str | os.PathLike[str],
    *,
    kind: str,
    device: str,
    manifest: Mapping[str, ManifestEntry] | None = None,
    multipart_threshold: int = 64 * MiB,
    part_size: int = 16 * MiB,
    max_attempts: int = 6,
    sleep: Callable[[float], object] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    jitter: Callable[[], float] = random.random,
) -> list[FileOutcome]:
    """Upload every segment file of ``directory`` (not recursive), in name order.

    A file's start and duration come from ``manifest[file name]`` when given, else
    from its name, ``<start>_<duration_ms>.<ext>`` (:data:`NAME_CONVENTION`). Files
    that follow neither — hidden files, subdirectories, other names — are
    ``skipped`` with the reason; a name that follows the convention but whose values
    break a rule (duration out of range, extension not allowed for the kind …) is
    ``failed`` with the reason. Every file gets an outcome; none stops the others.

    Raises :class:`UploadArgumentError` only for the arguments of the whole run
    (kind, device, directory).
    """
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise UploadArgumentError("kind", exc.reason) from None
    try:
        validate_device(device)
    except InvalidKeyError as exc:
        raise UploadArgumentError("device", exc.reason) from None
    _Tuning(multipart_threshold, part_size, max_attempts, sleep, clock, jitter, None).check()
    folder = Path(directory)
    if not folder.is_dir():
        raise UploadArgumentError("directory", f"{str(folder)!r} is not a directory")
    manifest = dict(manifest or {})
    outcomes: list[FileOutcome] = []
    for path in sorted(folder.iterdir()):
        name, shown = path.name, str(path)
        entry = manifest.pop(name, None)
        skip = _skip_reason(path, entry)
        if skip is not None:
            outcomes.append(FileOutcome(shown, "skipped", reason=skip))
            continue
        try:
            start, duration_ms, ext = _start_duration_ext(path, entry)
            result = upload_segment(
                s3,
                bucket,
                path,
                kind=kind,
                device=device,
                start=start,
                duration_ms=duration_ms,
                ext=ext,
                multipart_threshold=multipart_threshold,
                part_size=part_size,
                max_attempts=max_attempts,
                sleep=sleep,
                clock=clock,
                jitter=jitter,
            )
        except UploadArgumentError as exc:
            outcomes.append(FileOutcome(shown, "failed", reason=str(exc)))
        except UploadConflict as exc:
            outcomes.append(FileOutcome.of_conflict(shown, exc, _size(path)))
        except UploadFailed as exc:
            outcomes.append(FileOutcome.of_failure(shown, exc, _size(path)))
        except OSError as exc:
            outcomes.append(FileOutcome(shown, "failed", reason=f"cannot read: {exc}"))
        else:
            outcomes.append(FileOutcome.of_result(shown, result))
    for name in sorted(manifest):
        outcomes.append(
            FileOutcome(str(folder / name), "failed", reason="listed in the manifest, not found")
        )
    return outcomes


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _skip_reason(path: Path, entry: ManifestEntry | None) -> str | None:
    if path.name.startswith("."):
        return "hidden file"
    if not path.is_file():
        return "not a regular file (subdirectories are not uploaded)"
    if entry is None and not DIRECTORY_NAME_RE.fullmatch(path.name):
        return f"name does not follow {NAME_CONVENTION}"
    return None


def _start_duration_ext(path: Path, entry: ManifestEntry | None) -> tuple[datetime, int, str]:
    if entry is not None:
        return entry.start, entry.duration_ms, entry.ext or path.suffix.lstrip(".").lower()
    match = DIRECTORY_NAME_RE.fullmatch(path.name)
    assert match is not None  # checked by _skip_reason
    try:
        start = parse_start(match["start"])
    except InvalidKeyError as exc:
        raise UploadArgumentError("start", exc.reason) from None
    return start.astimezone(UTC), int(match["duration"]), match["ext"].lower()
