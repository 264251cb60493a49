"""Deletion at fleet size: a request over many partitions (a camera's year, a site),
fanned out as ordinary deletion jobs (docs/bulk.md).

A deletion request covers one device and at most 31 days
(:data:`~video_index.deletion.model.MAX_DELETION_WINDOW_MS`), and its job keeps its
guarantees — a checkpoint before every DeleteObjects, a lease so that two runners
never run it at once, a withdrawal that stops it — per request. A bulk deletion is
therefore *planned* as one request per device and per ≤ 31-day slice of the window
(:func:`slices`), each recorded (so in force, and enforced by ingest and reconcile,
from that moment on), and each is one unit of the map: :func:`run_unit` runs its job
until it is done. A unit out of time raises :class:`JobPaused`, a unit whose job's
lease another runner holds (one killed mid-way) raises the job's ``JobBusy``: the
state machine retries both, and the job continues from its checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable

from video_index.bulk.payloads import DeleteCounts, DeleteInput, DeleteUnit
from video_index.core.errors import BadInput, TransientError
from video_index.core.timeunits import DAY_MS
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.model import MAX_DELETION_WINDOW_MS, DeletionState, check_kind

#: The longest bulk deletion (ten years): the plan records one request per device and slice.
MAX_BULK_WINDOW_MS = 3660 * DAY_MS


class JobPaused(TransientError):
    """The unit's time ran out at a checkpoint; running the unit again continues."""


def slices(from_ms: int, to_ms: int) -> list[tuple[int, int]]:
    """``[from, to)`` cut into back-to-back windows of at most 31 days."""
    if from_ms >= to_ms:
        raise BadInput("to_ms", "must be after from_ms")
    if to_ms - from_ms > MAX_BULK_WINDOW_MS:
        raise BadInput(
            "to_ms", f"a bulk deletion covers at most {MAX_BULK_WINDOW_MS // DAY_MS} days"
        )
    return [
        (start, min(start + MAX_DELETION_WINDOW_MS, to_ms))
        for start in range(from_ms, to_ms, MAX_DELETION_WINDOW_MS)
    ]


def plan_units(jobs: DeletionJobs, request: DeleteInput) -> list[DeleteUnit]:
    """Record one deletion request per device and slice (in force from now on); their
    jobs are the map's units, not queued for the deletion worker."""
    kind = check_kind(request.kind)
    if len(set(request.devices)) != len(request.devices):
        raise BadInput("devices", "names a device twice")
    units = []
    for device in request.devices:
        for low, high in slices(request.from_ms, request.to_ms):
            recorded = jobs.create(
                device,
                low,
                high,
                kind=kind,
                erase=request.erase,
                created_by=request.created_by,
                enqueue=False,
                spare_held=True,
            )
            units.append(
                DeleteUnit(deletion_id=recorded.deletion_id, device=device, from_ms=low, to_ms=high)
            )
    return units


def run_unit(
    jobs: DeletionJobs, unit: DeleteUnit, time_left: Callable[[], float] | None = None
) -> DeleteCounts:
    """Run the unit's job until it is closed; :class:`JobPaused` when time ran out."""
    run = jobs.run(unit.deletion_id, time_left=time_left)
    if run.paused:
        raise JobPaused(f"deletion {unit.deletion_id} paused at its checkpoint; continue it")
    request = run.request
    return DeleteCounts(
        units=1,
        done=1 if request.state is DeletionState.DONE else 0,
        deleted=request.deleted,
        versions_deleted=request.versions_deleted,
        kept_held=request.kept_held,
    )
