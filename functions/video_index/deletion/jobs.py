"""Deletion jobs (docs/deletion.md): record a request, run its job, withdraw it.

``create`` records the request (its request item and its window, in one
transaction) and queues the job. ``run`` does the work in two phases over the
key ranges that hold the window, one per kind (:func:`~.model.window_ranges`):

1. **counting** — list each range once, so the job knows ``remaining``;
2. **deleting** — list each range and delete what the window covers with
   DeleteObjects, 1,000 keys (or, with ``erase``, versions and delete markers)
   per request.

Resumable without redoing or skipping: before each DeleteObjects the checkpoint
(phase, range index, and the last key of the batch as ``cursor``) is written with
the batch counted; a job stopped anywhere lists its range again. What it deleted
is no longer listed; what it had committed but not deleted yet (keys up to the
cursor) is deleted without being counted again. Only the holder of the job's
lease writes its checkpoint, so two deliveries of one job never run it twice at
once; a withdrawal stops it at its next checkpoint.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from aws_lambda_powertools import Logger

from video_index.aws.deletions import DeletionTable
from video_index.aws.dynamodb import ConditionFailed
from video_index.aws.objects import ObjectStore
from video_index.core.errors import (
    BadInput,
    Conflict,
    NotFound,
    TransientError,
    VideoIndexError,
)
from video_index.core.holding import HeldWindows
from video_index.core.timeunits import iso_ms
from video_index.deletion.model import (
    DELETE_BATCH,
    OPEN_STATES,
    DeletionRequest,
    DeletionState,
    Window,
    check_kind,
    check_window,
    window_ranges,
)
from video_index.deletion.runner import JobRun, JobRunner, Progress, units, without_held

logger = Logger(child=True)

#: How long a runner holds a job without writing a checkpoint (longer than a Lambda).
DEFAULT_LEASE_SECONDS: Final = 960.0
#: A runner stops (and queues its continuation) when less time than this is left.
DEFAULT_TIME_MARGIN_SECONDS: Final = 120.0
#: The longest ``error`` a failed job keeps (the reason, not a stack trace).
MAX_ERROR_CHARS: Final = 1000


class JobBusy(Conflict):
    """Another runner holds the job's lease."""


@dataclass
class Preview:
    """What a request would delete now (``--dry-run``): keys, bytes, a few samples."""

    keys: int = 0
    bytes: int = 0
    versions: int = 0
    samples: list[str] = field(default_factory=list)


class DeletionJobs:
    """Create, look up, withdraw and run the deletion jobs of one deployment."""

    def __init__(
        self,
        table: DeletionTable,
        objects: ObjectStore,
        *,
        enqueue: Callable[[str], None],
        holds: HeldWindows,
        replica: ObjectStore | None = None,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        batch_size: int = DELETE_BATCH,
    ) -> None:
        self.table = table
        #: Held footage is never a job's to delete (:mod:`video_index.core.holding`): read
        #: again before every DeleteObjects; required, so nothing deletes without it.
        self.holds = holds
        self.objects = objects
        self.replica = replica
        self._enqueue = enqueue
        self.clock = clock
        self.lease_seconds = lease_seconds
        #: Entries per DeleteObjects request (S3 takes at most 1,000).
        self.batch_size = min(batch_size, DELETE_BATCH)

    # -- requests --------------------------------------------------------------------

    def create(
        self,
        device: str,
        from_ms: int,
        to_ms: int,
        *,
        kind: str | None,
        erase: bool,
        created_by: str,
        enqueue: bool = True,
        spare_held: bool = False,
        admit: Callable[[], None] | None = None,
    ) -> DeletionRequest:
        """Record the request (it is in force from now on) and queue its job.

        A window overlapping a hold is refused (409 naming it), unless ``spare_held``: a
        bulk deletion (docs/bulk.md) deletes around the holds rather than stopping at the
        first one; its job never deletes a held key either way. ``admit`` (the caller's
        daily quota) is asked last, once every check has passed: a refused request
        spends nothing."""
        check_window(from_ms, to_ms)
        self.check_past(to_ms)
        kind = check_kind(kind)
        held = [window.hold_id for window in self.holds.windows(device, from_ms, to_ms)]
        if held and not spare_held:
            raise Conflict(
                f"the window overlaps hold {', '.join(held)}: release it first (docs/holds.md)"
            )
        if admit is not None:
            admit()
        now = self.now_iso()
        request = DeletionRequest(
            deletion_id=uuid.uuid4().hex,
            device=device,
            from_ms=from_ms,
            to_ms=to_ms,
            kind=kind,
            erase=erase,
            created_by=created_by,
            created_at=now,
            updated_at=now,
        )
        window = {
            "deletion_id": request.deletion_id,
            "from_ms": from_ms,
            "to_ms": to_ms,
            "kind": kind,
            "erase": erase,
            # who asked and when, so a gap it left explains itself in one Query (docs/api.md)
            "created_by": created_by,
            "created_at": now,
        }
        self.table.create(request.model_dump(mode="json"), window)
        logger.info("deletion request recorded", extra=request.model_dump(mode="json"))
        if enqueue:
            self._enqueue(request.deletion_id)
        return request

    def check_past(self, to_ms: int) -> None:
        """A window must end before now: footage not yet recorded is kept by the retention
        the deployment configures, never by a request (ingest would enforce a future
        window on every segment uploaded into it)."""
        now_ms = int(self.clock() * 1000)
        if to_ms > now_ms:
            raise BadInput("to", f"must not be in the future (now is {iso_ms(now_ms)})")

    def get(self, deletion_id: str) -> DeletionRequest:
        item = self.table.get_request(deletion_id)
        if item is None:
            raise NotFound("deletion_id", f"no deletion {deletion_id}")
        return DeletionRequest.model_validate(item)

    def withdraw(self, deletion_id: str, withdrawn_by: str) -> DeletionRequest:
        """End the request: a running job stops at its next checkpoint, enforcement ends;
        nothing comes back by itself. Withdrawing twice changes nothing."""
        request = self.get(deletion_id)
        if request.state is DeletionState.WITHDRAWN:
            return request
        fields = {
            "state": DeletionState.WITHDRAWN.value,
            "withdrawn_by": withdrawn_by,
            "withdrawn_at": self.now_iso(),
            "updated_at": self.now_iso(),
        }
        with contextlib.suppress(ConditionFailed):  # withdrawn concurrently: the same end
            self.table.withdraw(request.model_dump(mode="json"), fields)
        logger.info("deletion request withdrawn", extra={"deletion_id": deletion_id})
        return self.get(deletion_id)

    def windows(self, device: str) -> list[Window]:
        """The windows in force for ``device``."""
        return [Window.of_item(device, item) for item in self.table.windows(device)]

    def all_windows(self) -> list[Window]:
        return [
            Window.of_item(str(item["pk"]).split("#", 1)[1], item)
            for item in self.table.all_windows()
        ]

    # -- preview ---------------------------------------------------------------------

    def preview(
        self, device: str, from_ms: int, to_ms: int, *, kind: str | None, erase: bool
    ) -> Preview:
        """What a request would delete now, without recording anything."""
        check_window(from_ms, to_ms)
        kind = check_kind(kind)
        preview = Preview()
        probe = DeletionRequest(
            deletion_id="0" * 32,
            device=device,
            from_ms=from_ms,
            to_ms=to_ms,
            kind=kind,
            erase=erase,
            created_by="",
            created_at="",
            updated_at="",
        )
        for keys in window_ranges(device, probe.kinds, from_ms, to_ms):
            listed = units(self.objects, keys, probe)
            for unit, size in without_held(listed, self.holds, self.batch_size):
                preview.keys += 1
                preview.bytes += size
                preview.versions += len(unit.versions)
                if len(preview.samples) < 10:
                    preview.samples.append(unit.key)
        return preview

    # -- running ---------------------------------------------------------------------

    def run(
        self,
        deletion_id: str,
        *,
        time_left: Callable[[], float] | None = None,
        progress: Progress | None = None,
        margin_seconds: float = DEFAULT_TIME_MARGIN_SECONDS,
        last_attempt: bool = False,
    ) -> JobRun:
        """Run (or continue) the job until it is done, withdrawn, failed or out of time.

        A job that is closed already is left as it is (a redelivered message). A job
        whose lease another runner holds raises :class:`JobBusy`. A transient failure gives
        up the lease and is raised, to be retried from the checkpoint, unless this is the
        ``last_attempt`` (the queue's last receive); then, like any other failure, it ends
        the job ``failed`` with the reason: a job never stays ``running`` without a runner.
        """
        request = self.get(deletion_id)
        if request.state not in OPEN_STATES:
            return JobRun(request)
        owner = uuid.uuid4().hex
        request = self._claim(request, owner)
        if request.state not in OPEN_STATES:
            return JobRun(request)
        runner = JobRunner(self, request, owner, time_left, margin_seconds, progress)
        try:
            return runner.run()
        except TransientError as exc:
            if not last_attempt:
                runner.release()
                raise  # retried (SQS), from the checkpoint
            return self._fail(runner, f"gave up after the last retry: {exc}")
        except Exception as exc:  # retrying will not fix it: say why, and stop
            return self._fail(runner, failure_reason(exc))
        except BaseException:
            runner.release()
            raise

    def retry(self, deletion_id: str) -> DeletionRequest:
        """Open a failed job again (``video-index delete --resume``): it continues from its
        checkpoint. Any other state is answered as it is."""
        with contextlib.suppress(ConditionFailed):
            self.table.update_request(
                deletion_id,
                {"state": DeletionState.QUEUED.value, "error": None, "updated_at": self.now_iso()},
                condition="#state = :failed",
                values={":failed": DeletionState.FAILED.value},
            )
        return self.get(deletion_id)

    @staticmethod
    def _fail(runner: JobRunner, reason: str) -> JobRun:
        logger.exception(
            "deletion job failed",
            extra={"deletion_id": runner.request.deletion_id, "error": reason},
        )
        closed = runner.close(DeletionState.FAILED, error=reason)
        return JobRun(closed, failed_here=closed.state is DeletionState.FAILED)

    def _claim(self, request: DeletionRequest, owner: str) -> DeletionRequest:
        now = self.clock()
        try:
            item = self.table.update_request(
                request.deletion_id,
                {
                    "state": DeletionState.RUNNING.value,
                    "lease_owner": owner,
                    "lease_until": int(now + self.lease_seconds),
                    "updated_at": self.now_iso(),
                },
                condition=(
                    "#state IN (:queued, :running) AND "
                    "(attribute_not_exists(#owner) OR #until < :now)"
                ),
                values={":queued": "queued", ":running": "running", ":now": int(now)},
            )
        except ConditionFailed:
            current = self.get(request.deletion_id)
            if current.state not in OPEN_STATES:
                return current
            raise JobBusy(
                f"deletion {request.deletion_id} is being run by another worker; "
                "it continues from its checkpoint if that one stops"
            ) from None
        return DeletionRequest.model_validate(item)

    def now_iso(self) -> str:
        return iso_ms(int(self.clock() * 1000))


def failure_reason(exc: Exception) -> str:
    """What a failed job says (``error``): the product's own message, or the kind of an
    unexpected error with it; at most :data:`MAX_ERROR_CHARS`."""
    reason = str(exc) if isinstance(exc, VideoIndexError) else f"{type(exc).__name__}: {exc}"
    return reason[:MAX_ERROR_CHARS]
