"""One run of one deletion job by the holder of its lease (docs/deletion.md).

:class:`JobRunner` does the two phases of :mod:`video_index.deletion.jobs` — counting,
then deleting in batches of at most 1,000 — writing the checkpoint before every
DeleteObjects, only while it holds the job's lease and the job is running. It stops
when the job is withdrawn (its next checkpoint write fails), when its lease was taken
over, and, with ``time_left``, before the time runs out (a paused run).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from video_index.aws.dynamodb import ConditionFailed
from video_index.aws.objects import ObjectStore
from video_index.core.errors import ServiceError
from video_index.core.keys import ValidKey, classify_key, device_prefix
from video_index.deletion.model import (
    DELETE_BATCH,
    Checkpoint,
    DeletionRequest,
    DeletionState,
    Phase,
    intersects,
    window_prefixes,
)

if TYPE_CHECKING:
    from video_index.deletion.jobs import DeletionJobs

logger = Logger(child=True)

Progress = Callable[[DeletionRequest], None]


@dataclass(frozen=True)
class JobRun:
    """How a run ended: the job as it is now; ``paused`` when time ran out first."""

    request: DeletionRequest
    paused: bool = False


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
        self.prefixes = window_prefixes(
            request.device, request.kinds, request.from_ms, request.to_ms
        )
        self._kinds_present: dict[str, bool] = {}

    def run(self) -> JobRun:
        try:
            self._show()
            self._count()
            self._delete()
        except _Stopped as stopped:
            return JobRun(stopped.request)
        except _OutOfTime:
            self.release()
            return JobRun(self.request, paused=True)
        return JobRun(self.close(DeletionState.DONE))

    # -- phases ----------------------------------------------------------------------

    def _count(self) -> None:
        checkpoint = self.request.checkpoint
        while checkpoint.phase is Phase.COUNTING:
            if checkpoint.index >= len(self.prefixes):
                self._save(checkpoint=Checkpoint(phase=Phase.DELETING), total=checkpoint.counted)
                return
            kind, prefix = self.prefixes[checkpoint.index]
            found = 0
            if self._present(kind):
                found = sum(1 for _ in units(self.jobs.objects, prefix, self.request))
            self._save(
                checkpoint=checkpoint.model_copy(
                    update={"index": checkpoint.index + 1, "counted": checkpoint.counted + found}
                )
            )
            checkpoint = self.request.checkpoint
            self._check_time()

    def _delete(self) -> None:
        while self.request.checkpoint.index < len(self.prefixes):
            checkpoint = self.request.checkpoint
            kind, prefix = self.prefixes[checkpoint.index]
            if self._present(kind):
                self._delete_prefix(prefix, checkpoint.cursor)
                if self.request.erase and self.jobs.replica is not None:
                    self._erase_replica(prefix)
            self._save(checkpoint=Checkpoint(phase=Phase.DELETING, index=checkpoint.index + 1))
            self._check_time()

    def _delete_prefix(self, prefix: str, cursor: str | None) -> None:
        """Batches of at most 1,000 entries; each counted in the checkpoint, then deleted."""
        batch: list[tuple[str, str | None]] = []
        completed: list[Unit] = []
        for unit, _ in units(self.jobs.objects, prefix, self.request):
            for start in range(0, max(len(unit.versions), 1), DELETE_BATCH):
                chunk = unit.versions[start : start + DELETE_BATCH] or [None]
                if len(batch) + len(chunk) > DELETE_BATCH:
                    cursor = self._commit_and_delete(batch, completed, cursor)
                    batch, completed = [], []
                batch.extend((unit.key, version) for version in chunk)
            completed.append(unit)
        if batch:
            self._commit_and_delete(batch, completed, cursor)

    def _commit_and_delete(
        self, batch: list[tuple[str, str | None]], completed: list[Unit], cursor: str | None
    ) -> str | None:
        fresh = [unit for unit in completed if cursor is None or unit.key > cursor]
        if fresh:
            checkpoint = self.request.checkpoint.model_copy(update={"cursor": fresh[-1].key})
            self._save(
                checkpoint=checkpoint,
                deleted=self.request.deleted + len(fresh),
                versions_deleted=self.request.versions_deleted
                + (sum(len(u.versions) for u in fresh) if self.request.erase else 0),
            )
            cursor = fresh[-1].key
        if self.request.erase:
            self.jobs.objects.delete_versions([(key, str(version)) for key, version in batch])
        else:
            self.jobs.objects.delete([key for key, _ in batch])
        self._show()
        self._check_time()
        return cursor

    def _erase_replica(self, prefix: str) -> None:
        """The replica keeps what replication copied (version deletes are not replicated):
        an erasure erases there too."""
        replica = self.jobs.replica
        assert replica is not None
        entries = [
            (unit.key, str(version))
            for unit, _ in units(replica, prefix, self.request)
            for version in unit.versions
        ]
        replica.delete_versions(entries)

    # -- plumbing --------------------------------------------------------------------

    def _present(self, kind: str) -> bool:
        """Whether the device has anything of ``kind`` at all (one LIST per kind and run)."""
        if kind not in self._kinds_present:
            prefix = device_prefix(kind, self.request.device)
            self._kinds_present[kind] = self.jobs.objects.any_under(
                prefix, versions=self.request.erase
            )
        return self._kinds_present[kind]

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


def units(
    objects: ObjectStore, prefix: str, request: DeletionRequest
) -> Iterator[tuple[Unit, int]]:
    """What the request covers under ``prefix``, key by key, with each key's size.

    Without ``erase``: the current objects whose segment the window covers. With it:
    every version and delete marker of such keys (deleted ones included: their
    noncurrent versions still hold the bytes)."""
    if not request.erase:
        for obj in objects.list(prefix):
            if _covered(obj.key, request):
                yield Unit(obj.key), obj.size
        return
    unit: Unit | None = None
    size = 0
    for version in objects.versions(prefix):
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
