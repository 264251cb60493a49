"""One run of one deletion job by the holder of its lease (docs/deletion.md).

:class:`JobRunner` does the two phases of :mod:`video_index.deletion.jobs` — counting,
then deleting in batches of at most 1,000 — writing the checkpoint before every
DeleteObjects, only while it holds the job's lease and the job is running. It stops
when the job is withdrawn (its next checkpoint write fails), when its lease was taken
over, and, with ``time_left``, before the time runs out (a paused run).

Holds win (docs/holds.md): right before each DeleteObjects the device's holds are read
again (one strongly consistent Query over the batch's span) and the held keys leave
the batch, counted as ``kept_held``; so a hold placed after the request was recorded,
or while its job runs, keeps its footage, and the job completes for the rest.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools import Logger

from video_index.aws.dynamodb import ConditionFailed
from video_index.aws.objects import ObjectStore
from video_index.core.errors import ServiceError
from video_index.core.holding import HeldWindows, held_keys, is_held
from video_index.core.keys import ValidKey, classify_key, parse_key
from video_index.deletion.model import (
    Checkpoint,
    DeletionRequest,
    DeletionState,
    KeyRange,
    Phase,
    intersects,
    window_ranges,
)
from video_index.media.erasure import erase_exports, erase_renditions

if TYPE_CHECKING:
    from video_index.deletion.jobs import DeletionJobs

logger = Logger(child=True)

Progress = Callable[[DeletionRequest], None]

#: Progress without a batch (listing what is gone already, counting) is written at most
#: this often: a stop in between costs listing those ranges again, never a redo.
SAVE_INTERVAL_SECONDS: Final = 10.0


@dataclass(frozen=True)
class JobRun:
    """How a run ended: the job as it is now; ``paused`` when time ran out first;
    ``failed_here`` when this run ended it ``failed`` (counted once, not per delivery)."""

    request: DeletionRequest
    paused: bool = False
    failed_here: bool = False


@dataclass
class Unit:
    """What deleting one key takes: its key, and the entries of DeleteObjects (the key
    alone, or with ``erase`` each version and delete marker)."""

    key: str
    versions: list[str | None] = field(default_factory=list)


class _Stopped(Exception):
    """The job was withdrawn, or its lease taken over, since the last checkpoint."""

    def __init__(self, request: DeletionRequest) -> None:
        super().__init__(request.state)
        self.request = request


class _OutOfTime(Exception):
    pass


class JobRunner:
    """One run of one job by the holder of its lease."""

    def __init__(
        self,
        jobs: DeletionJobs,
        request: DeletionRequest,
        owner: str,
        time_left: Callable[[], float] | None,
        margin_seconds: float,
        progress: Progress | None,
    ) -> None:
        self.jobs = jobs
        self.request = request
        self.owner = owner
        self.time_left = time_left
        self.margin = margin_seconds
        self.progress = progress
        self.ranges = window_ranges(request.device, request.kinds, request.from_ms, request.to_ms)
        self.phase = request.checkpoint.phase
        self.index = request.checkpoint.index
        self.counted = request.checkpoint.counted
        self.found = list(request.checkpoint.found)
        self._saved_at = time.monotonic()

    def run(self) -> JobRun:
        try:
            self._show()
            self._count()
            self._delete()
        except _Stopped as stopped:
            return JobRun(stopped.request)
        except _OutOfTime:
            self._save_position()
            self.release()
            return JobRun(self.request, paused=True)
        return JobRun(self.close(DeletionState.DONE))

    # -- phases ----------------------------------------------------------------------
    #
    # Where the runner is lives in memory (``self.index``, ``self.counted``) and is
    # written with every batch committed, at the end of a phase, when the time runs
    # out, and otherwise at most every SAVE_INTERVAL_SECONDS: a range listed again
    # after a stop finds what is left, so a position written late costs a LIST, never
    # a redo. A cursor is only ever written with the index of its own range.

    def _count(self) -> None:
        checkpoint = self.request.checkpoint
        if checkpoint.phase is not Phase.COUNTING:
            return
        self.phase, self.index, self.counted = Phase.COUNTING, checkpoint.index, checkpoint.counted
        self.found = list(checkpoint.found)
        while self.index < len(self.ranges):
            keys = self.ranges[self.index]
            listed = units(self.jobs.objects, keys, self.request)
            self.found.append(sum(1 for _ in listed))
            self.counted += self.found[-1]
            self.index += 1
            self._check_time()
            if self._due():
                self._save_position()
        self._save(
            checkpoint=Checkpoint(phase=Phase.DELETING, found=self.found), total=self.counted
        )

    def _delete(self) -> None:
        checkpoint = self.request.checkpoint
        self.phase, self.index = Phase.DELETING, checkpoint.index
        cursor = checkpoint.cursor
        self.found = list(checkpoint.found)
        while self.index < len(self.ranges):
            keys = self.ranges[self.index]
            if self.found[self.index]:
                self._delete_range(keys, cursor)
            if self.request.erase and self.jobs.replica is not None:
                self._erase_replica(keys)
            if self.request.erase and keys.kind == "video":
                erase_renditions(self.jobs.objects, keys.prefix, keys.after, keys.last, self._ours)
            self.index += 1
            cursor = None
            self._check_time()
            if self._due():
                self._save_position()
        if self.request.erase:
            reason = f"erased: deletion {self.request.deletion_id} erased the window's footage"
            erase_exports(
                self.jobs.objects, self.request.device, self._ours, reason, self.jobs.now_iso()
            )

    def _ours(self, key: str) -> bool:
        """Whether the request erased the source ``key`` (derived media's source): covered
        by its window, and kept by no hold (read now, as before each delete)."""
        classified = classify_key(key)
        return (
            _covered(key, self.request)
            and isinstance(classified, ValidKey)
            and not is_held(self.jobs.holds, classified.segment)
        )

    def _delete_range(self, keys: KeyRange, cursor: str | None) -> None:
        """Batches of at most ``batch_size`` entries; each counted in the checkpoint
        (with the last key as cursor), then deleted."""
        size = self.jobs.batch_size
        batch: list[tuple[str, str | None]] = []
        completed: list[Unit] = []
        for unit, _ in units(self.jobs.objects, keys, self.request):
            for start in range(0, max(len(unit.versions), 1), size):
                chunk: list[str | None] = [*unit.versions[start : start + size]] or [None]
                if len(batch) + len(chunk) > size:
                    cursor = self._commit_and_delete(batch, completed, cursor)
                    batch, completed = [], []
                batch.extend((unit.key, version) for version in chunk)
            completed.append(unit)
        if batch:
            self._commit_and_delete(batch, completed, cursor)

    def _commit_and_delete(
        self, batch: list[tuple[str, str | None]], completed: list[Unit], cursor: str | None
    ) -> str | None:
        """Read the holds, take the held keys out of the batch, count the rest (and the
        kept ones) in the checkpoint, then delete the rest."""
        held = held_keys(self.jobs.holds, [parse_key(key) for key in {k for k, _ in batch}])
        batch = [(key, version) for key, version in batch if key not in held]
        newer = [unit for unit in completed if cursor is None or unit.key > cursor]
        if newer:
            cursor = newer[-1].key
            fresh = [unit for unit in newer if unit.key not in held]
            self._save(
                checkpoint=Checkpoint(
                    phase=Phase.DELETING, index=self.index, cursor=cursor, found=self.found
                ),
                deleted=self.request.deleted + len(fresh),
                versions_deleted=self.request.versions_deleted
                + (sum(len(u.versions) for u in fresh) if self.request.erase else 0),
                kept_held=self.request.kept_held + len(newer) - len(fresh),
            )
        if batch and self.request.erase:
            self.jobs.objects.delete_versions([(key, str(version)) for key, version in batch])
        elif batch:
            self.jobs.objects.delete([key for key, _ in batch])
        self._show()
        self._check_time()
        return cursor

    def _erase_replica(self, keys: KeyRange) -> None:
        """The replica keeps what replication copied (version deletes are not replicated):
        an erasure erases there too."""
        replica = self.jobs.replica
        assert replica is not None
        listed = units(replica, keys, self.request)
        entries = [
            (unit.key, str(version))
            for unit, _ in without_held(listed, self.jobs.holds, self.jobs.batch_size)
            for version in unit.versions
        ]
        replica.delete_versions(entries)

    # -- plumbing --------------------------------------------------------------------

    def _due(self) -> bool:
        return time.monotonic() - self._saved_at >= SAVE_INTERVAL_SECONDS

    def _save_position(self) -> None:
        """Write how far the current phase got, unless a batch's commit said it already."""
        saved = self.request.checkpoint
        if saved.phase is self.phase and saved.index == self.index:
            return
        if self.phase is Phase.COUNTING:
            checkpoint = Checkpoint(
                phase=Phase.COUNTING, index=self.index, counted=self.counted, found=self.found
            )
        elif saved.phase is Phase.DELETING and saved.index > self.index:
            return
        else:
            checkpoint = Checkpoint(phase=Phase.DELETING, index=self.index, found=self.found)
        with contextlib.suppress(_Stopped):
            self._save(checkpoint=checkpoint)

    def _check_time(self) -> None:
        if self.time_left is not None and self.time_left() < self.margin:
            raise _OutOfTime()

    def _show(self) -> None:
        if self.progress is not None:
            self.progress(self.request)

    def _save(self, **fields: Any) -> None:
        """Write progress if this runner still holds the lease of a running job."""
        values = {
            name: value.model_dump(mode="json") if isinstance(value, Checkpoint) else value
            for name, value in fields.items()
        }
        values["updated_at"] = self.jobs.now_iso()
        values["lease_until"] = int(self.jobs.clock() + self.jobs.lease_seconds)
        self.request = DeletionRequest.model_validate(self._update(values))
        self._saved_at = time.monotonic()

    def _update(self, values: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.jobs.table.update_request(
                self.request.deletion_id,
                values,
                condition="#state = :running AND #owner = :me",
                values={":running": "running", ":me": self.owner},
            )
        except ConditionFailed:
            raise _Stopped(self.jobs.get(self.request.deletion_id)) from None

    def close(self, state: DeletionState, error: str | None = None) -> DeletionRequest:
        """End the job (done or failed) and give up the lease."""
        try:
            self.request = DeletionRequest.model_validate(
                self._update(
                    {
                        "state": state.value,
                        "error": error,
                        "updated_at": self.jobs.now_iso(),
                        "lease_owner": None,
                        "lease_until": None,
                    }
                )
            )
        except _Stopped as stopped:
            return stopped.request
        logger.info(
            "deletion job ended",
            extra={"deletion_id": self.request.deletion_id, "state": state.value},
        )
        self._show()
        return self.request

    def release(self) -> None:
        """Give up the lease (the job stays running; anyone may continue it now)."""
        with contextlib.suppress(_Stopped, ServiceError):  # else it expires by itself
            self._update({"lease_owner": None, "lease_until": None})


def without_held(
    listed: Iterator[tuple[Unit, int]], holds: HeldWindows, batch: int
) -> Iterator[tuple[Unit, int]]:
    """``listed`` without what a hold covers: the holds read once per ``batch`` units."""
    while chunk := list(itertools.islice(listed, batch)):
        held = held_keys(holds, [parse_key(unit.key) for unit, _ in chunk])
        yield from ((unit, size) for unit, size in chunk if unit.key not in held)


def units(
    objects: ObjectStore, keys: KeyRange, request: DeletionRequest
) -> Iterator[tuple[Unit, int]]:
    """What the request covers in ``keys``, key by key, with each key's size (one LIST
    per 1,000 keys of the range, stopping at its end), held keys included: what a hold
    keeps is taken out right before a delete (:func:`without_held`, ``JobRunner``).

    Without ``erase``: the current objects whose segment the window covers. With it:
    every version and delete marker of such keys (deleted ones included: their
    noncurrent versions still hold the bytes)."""
    if not request.erase:
        for obj in objects.list(keys.prefix, start_after=keys.after):
            if obj.key > keys.last:
                return
            if _covered(obj.key, request):
                yield Unit(obj.key), obj.size
        return
    unit: Unit | None = None
    size = 0
    for version in objects.versions(keys.prefix, after_key=keys.after):
        if version.key > keys.last:
            break
        if unit is not None and version.key != unit.key:
            yield unit, size
            unit = None
        if unit is None:
            if not _covered(version.key, request):
                continue
            unit, size = Unit(version.key), 0
        unit.versions.append(version.version_id)
        size += version.size
    if unit is not None:
        yield unit, size


def _covered(key: str, request: DeletionRequest) -> bool:
    classified = classify_key(key)
    if not isinstance(classified, ValidKey):
        return False
    segment = classified.segment
    return (
        segment.device == request.device
        and (request.kind is None or segment.kind == request.kind)
        and intersects(segment, request.from_ms, request.to_ms)
    )
