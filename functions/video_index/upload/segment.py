"""One segment into S3 under its key, safely and idempotently (docs/uploading.md).

The key is built from ``(kind, device, start, duration, content)`` (docs/keys.md), so a
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

Retries are :mod:`.retry`'s, the S3 conversation is :mod:`.transfer`'s. The uploader
writes to S3 only — never to DynamoDB (the read model follows from S3 events). The S3
client is passed in; nothing here reads AWS configuration.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

from video_index.core.errors import BadInput
from video_index.core.keys import (
    EXTENSIONS,
    ID_DIGITS,
    MAX_DURATION_MS,
    MIN_DURATION_MS,
    InvalidKeyError,
    SegmentKey,
    format_key,
    key_error_reason,
    segment_id,
    segment_id_hasher,
    validate_device,
    validate_kind,
)
from video_index.core.timeunits import to_epoch_ms
from video_index.media.probe import PROBE_BYTES, Container, check_container
from video_index.upload.results import UploadArgumentError, UploadResult
from video_index.upload.retry import RetryPolicy
from video_index.upload.transfer import MiB, Transfer, read_chunks

#: S3's smallest part (all but the last), most parts and largest single PUT.
MIN_PART_SIZE: Final = 5 * MiB
MAX_PARTS: Final = 10_000
MAX_SINGLE_PUT: Final = 5 * 1024 * MiB


def check_kind_and_device(kind: str, device: str) -> None:
    """:class:`UploadArgumentError` naming ``kind`` or ``device`` when one breaks its rule."""
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise UploadArgumentError("kind", exc.reason) from None
    try:
        validate_device(device)
    except InvalidKeyError as exc:
        raise UploadArgumentError("device", exc.reason) from None


def _check_arguments(
    kind: str, device: str, start: datetime, duration_ms: int, ext: str
) -> SegmentKey:
    """The segment's key with a placeholder id, or :class:`UploadArgumentError`."""
    check_kind_and_device(kind, device)
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
        raise UploadArgumentError("start", key_error_reason(exc)) from None


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
    as_is: bool = False,
) -> UploadResult:
    """Upload one segment under its key (docs/keys.md) with a conditional write.

    A video file must be the container its extension says (MPEG-TS for ``.ts``, ISO
    BMFF for ``.mp4``), else :class:`UploadArgumentError` naming ``file``. A
    progressive MP4 is first rewritten as fragmented MP4 by stream copy (same frames)
    so that players can stream it as stored (docs/playback.md), unless ``as_is``; the
    id is computed over the bytes actually uploaded.

    ``path_or_bytes``: a file (read in chunks when large) or the content itself.
    ``ext`` defaults to the file's extension (required for bytes). Files of
    ``multipart_threshold`` bytes or more go up in ``part_size`` parts.
    ``max_attempts`` bounds the requests of each S3 operation; ``retry_timeout_s``
    (measured with ``clock``) optionally bounds the whole upload's retrying.
    ``sleep``/``clock``/``jitter`` are injectable for tests.

    Returns an :class:`UploadResult` (``uploaded`` or ``already-present``); raises
    :class:`UploadConflict`, :class:`UploadFailed` or :class:`UploadArgumentError`.
    """
    tuning = Tuning(
        multipart_threshold, part_size, max_attempts, sleep, clock, jitter, retry_timeout_s
    )
    if isinstance(path_or_bytes, bytes | bytearray | memoryview):
        if ext is None:
            raise UploadArgumentError("ext", "is required when uploading bytes")
        draft = _check_arguments(kind, device, start, duration_ms, ext)
        tuning.check()
        content = bytes(path_or_bytes)
        stream, size = _streamable(draft, io.BytesIO(content), len(content), as_is)
        return _upload_stream(s3, bucket, stream, size, draft, tuning)
    path = Path(path_or_bytes)
    if ext is None:
        ext = path.suffix.lstrip(".").lower()
    # Check the arguments before touching the file, so their errors come first.
    draft = _check_arguments(kind, device, start, duration_ms, ext)
    tuning.check()
    try:
        with path.open("rb") as file:
            stream, size = _streamable(draft, file, os.fstat(file.fileno()).st_size, as_is)
            return _upload_stream(s3, bucket, stream, size, draft, tuning)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UploadArgumentError("path", f"cannot read {str(path)!r}: {reason}") from None


def upload_key(
    path: str | os.PathLike[str],
    *,
    kind: str,
    device: str,
    start: datetime,
    duration_ms: int,
    ext: str | None = None,
    as_is: bool = False,
) -> tuple[str, bool]:
    """The key :func:`upload_segment` would upload the file under, computed over the bytes
    it would send, and whether those differ from the file's (a progressive MP4 stored
    fragmented). Raises :class:`UploadArgumentError` as the upload would."""
    path = Path(path)
    draft = _check_arguments(
        kind, device, start, duration_ms, ext or path.suffix.lstrip(".").lower()
    )
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            stream, sent = _streamable(draft, file, size, as_is)
            digest = segment_id_hasher(draft.kind, draft.device, draft.start, draft.duration_ms)
            for chunk in read_chunks(stream, 0, sent):
                digest.update(chunk)
            rewritten = stream is not file
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UploadArgumentError("path", f"cannot read {str(path)!r}: {reason}") from None
    return format_key(draft.model_copy(update={"id": digest.hexdigest()[:ID_DIGITS]})), rewritten


def _streamable(
    draft: SegmentKey, stream: BinaryIO, size: int, as_is: bool
) -> tuple[BinaryIO, int]:
    """The bytes to upload: a video file checked against its extension, and a progressive
    MP4 rewritten as fragmented MP4 (stream copy) unless ``as_is``."""
    if draft.kind != "video":
        return stream, size
    head = stream.read(PROBE_BYTES)
    stream.seek(0)
    try:
        facts = check_container(draft.ext, head, size)
    except BadInput as exc:
        raise UploadArgumentError("file", exc.message) from None
    if as_is or facts.container is not Container.MP4_PROGRESSIVE:
        return stream, size
    from video_index.media.remux import fragment  # PyAV, only when a file needs it

    try:
        fragmented = fragment(stream.read(), decode_start_ms=to_epoch_ms(draft.start))
    except BadInput as exc:
        raise UploadArgumentError("file", exc.message) from None
    return io.BytesIO(fragmented), len(fragmented)


@dataclass(frozen=True)
class Tuning:
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

    def policy(self, key: str) -> RetryPolicy:
        return RetryPolicy(
            key, self.max_attempts, self.sleep, self.clock, self.jitter, self.retry_timeout_s
        )


def _upload_stream(
    s3: Any, bucket: str, stream: BinaryIO, size: int, draft: SegmentKey, tuning: Tuning
) -> UploadResult:
    """Hash, name and upload ``size`` bytes of ``stream`` (``draft``: the key sans id)."""
    if size >= tuning.multipart_threshold or size > MAX_SINGLE_PUT:
        # Large: hash in chunks first (the key needs the id), then send the parts.
        id_digest = segment_id_hasher(draft.kind, draft.device, draft.start, draft.duration_ms)
        content_digest = hashlib.sha256()
        for chunk in read_chunks(stream, 0, size):
            id_digest.update(chunk)
            content_digest.update(chunk)
        key = format_key(draft.model_copy(update={"id": id_digest.hexdigest()[:ID_DIGITS]}))
        upload = Transfer(
            s3, bucket, key, content_digest.hexdigest(), size, draft.ext, tuning.policy(key)
        )
        # A huge file gets larger parts rather than more than S3's 10,000.
        return upload.multipart(stream, max(tuning.part_size, -(-size // MAX_PARTS)))
    content = stream.read()
    segment_key_id = segment_id(draft.kind, draft.device, draft.start, draft.duration_ms, content)
    key = format_key(draft.model_copy(update={"id": segment_key_id}))
    sha256 = hashlib.sha256(content).hexdigest()
    return Transfer(s3, bucket, key, sha256, len(content), draft.ext, tuning.policy(key)).single(
        content
    )
