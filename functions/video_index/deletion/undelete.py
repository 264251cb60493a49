"""Undelete (docs/deletion.md): the newest version of each deleted key of a window, current again.

A delete without ``erase`` leaves a delete marker on top of the key's versions; the
bucket keeps those noncurrent versions for its undelete window (a lifecycle rule),
then they expire. For every key of the window whose current version is a delete
marker, :class:`Undeleter` copies the newest version that still exists back on top
(CopyObject from that version: same bytes, same ETag). A copy rather than removing
the marker, because a copy is a new object that replication carries to the replica
too, where the marker was replicated; removing a marker by its version id is not
replicated, and the replica would stay deleted.

The read model follows through the ``ObjectCreated:Copy`` event. Keys without any
version left (erased, or deleted longer ago than the undelete window) are reported,
not guessed. While a deletion request covers the window, undelete refuses (the
request is what a person decided) unless it is told to withdraw it first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import groupby, takewhile
from typing import Final

from video_index.aws.objects import ObjectStore, ObjectVersion
from video_index.core.errors import Conflict
from video_index.core.keys import KINDS, ValidKey, classify_key
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.model import (
    KeyRange,
    Window,
    check_kind,
    check_window,
    intersects,
    window_ranges,
)

#: Why a deleted key of the window could not come back.
NO_VERSION_LEFT: Final = "no version left: erased, or deleted longer ago than the undelete window"

Progress = Callable[[int, int], None]


@dataclass
class UndeleteReport:
    device: str
    dry_run: bool
    #: Keys whose newest version is current again (or would be, in a dry run).
    restored: list[str] = field(default_factory=list)
    #: Keys that could not come back, with the reason.
    not_restorable: list[tuple[str, str]] = field(default_factory=list)
    #: Deletion requests withdrawn first (``withdraw``).
    withdrawn: list[str] = field(default_factory=list)
    bytes: int = 0


class Undeleter:
    def __init__(self, objects: ObjectStore, jobs: DeletionJobs) -> None:
        self._objects = objects
        self._jobs = jobs

    def covering(self, device: str, from_ms: int, to_ms: int, kind: str | None) -> list[Window]:
        """The deletion requests in force whose window meets this one."""
        return [
            window
            for window in self._jobs.windows(device)
            if window.from_ms < to_ms
            and window.to_ms > from_ms
            and (window.kind is None or kind is None or window.kind == kind)
        ]

    def run(
        self,
        device: str,
        from_ms: int,
        to_ms: int,
        *,
        kind: str | None = None,
        dry_run: bool = False,
        withdraw: bool = False,
        by: str,
        progress: Progress | None = None,
    ) -> UndeleteReport:
        check_window(from_ms, to_ms)
        kind = check_kind(kind)
        report = UndeleteReport(device=device, dry_run=dry_run)
        covering = self.covering(device, from_ms, to_ms, kind)
        if covering and not withdraw:
            ids = ", ".join(window.deletion_id for window in covering)
            raise Conflict(
                f"deletion request(s) {ids} cover this window: what they delete stays deleted; "
                "withdraw them first (--withdraw) to undelete"
            )
        for window in covering:
            if not dry_run:
                self._jobs.withdraw(window.deletion_id, by)
            report.withdrawn.append(window.deletion_id)
        remaining = [] if dry_run else self._jobs.windows(device)
        ranges = window_ranges(device, (kind,) if kind else KINDS, from_ms, to_ms)
        for done, keys in enumerate(ranges, start=1):
            for key, versions in _deleted_keys(self._objects, keys, device, from_ms, to_ms, kind):
                newest = next((v for v in versions if not v.is_marker), None)
                if newest is None:
                    report.not_restorable.append((key, NO_VERSION_LEFT))
                    continue
                segment = classify_key(key)
                assert isinstance(segment, ValidKey)
                blocking = next((w for w in remaining if w.covers(segment.segment)), None)
                if blocking is not None:
                    reason = f"covered by deletion request {blocking.deletion_id}"
                    report.not_restorable.append((key, reason))
                    continue
                if not dry_run:
                    self._objects.copy_in(self._objects.bucket, key, newest.size, newest.version_id)
                report.restored.append(key)
                report.bytes += newest.size
            if progress is not None:
                progress(done, len(ranges))
        return report


def _deleted_keys(
    objects: ObjectStore, keys: KeyRange, device: str, from_ms: int, to_ms: int, kind: str | None
) -> Iterator[tuple[str, list[ObjectVersion]]]:
    """Keys of the window whose current version is a delete marker, with every version
    (newest first)."""
    listed = takewhile(
        lambda version: version.key <= keys.last,
        objects.versions(keys.prefix, after_key=keys.after),
    )
    for key, group in groupby(listed, key=lambda version: version.key):
        classified = classify_key(key)
        if not (
            isinstance(classified, ValidKey)
            and classified.segment.device == device
            and (kind is None or classified.segment.kind == kind)
            and intersects(classified.segment, from_ms, to_ms)
        ):
            continue
        versions = list(group)
        if versions[0].is_marker:
            yield key, versions
