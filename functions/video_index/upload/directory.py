"""Directory mode of the uploader: every segment file of a folder, one outcome each.

Every regular file of a directory named ``<start>_<duration_ms>.<ext>`` — start as
in keys, ``YYYYMMDDTHHMMSS.fffZ``, e.g. ``20261130T120000.000Z_10000.mp4`` — is
uploaded; other files are skipped with the reason. One bad file never stops the others.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from video_index.core.keys import InvalidKeyError, parse_start
from video_index.upload.results import (
    OutcomeStatus,
    UploadArgumentError,
    UploadConflict,
    UploadFailed,
    UploadResult,
)
from video_index.upload.segment import Tuning, check_kind_and_device, upload_segment
from video_index.upload.transfer import MiB

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
    as_is: bool = False,
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
    check_kind_and_device(kind, device)
    Tuning(multipart_threshold, part_size, max_attempts, sleep, clock, jitter, None).check()
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
                as_is=as_is,
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
