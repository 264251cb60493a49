"""Rebuild: re-project S3 into a new generation while the current one serves (docs/operations.md).

Phases, all recorded in the control item (``pk=control, sk=generation``):

1. **start** — one conditional write sets ``building = current + 1`` (a second
   rebuild cannot start while one runs). From the next batch on, ingest writes
   every event to both generations (:meth:`ReadModelStore.generations`).
2. **build** — each partition (device × kind × UTC day) is listed in S3 and its
   objects are written into the new generation through the same transition
   code as ingest; a key ingest already wrote there is left alone (it is at
   least as fresh as the listing).
3. **finish** — after every batch that could have missed the new generation
   has ended (``settle_seconds``), a barrier waits until the stream consumer has
   aggregated everything written so far, a reconcile of the new generation catches
   up; then one conditional write makes it ``current``. Readers (the API) only
   ever read ``current``, so they never see a partial generation.
4. **drop** — after a grace period longer than the readers' generation cache,
   the old generation's items are deleted in the background.

``abort`` removes ``building`` (the current generation never stopped serving)
and drops what was built. An in-process run stopped by Ctrl-C records the phase
``interrupted`` (before the switch: aborted the same way; after it: the new generation
serves and the old one was not dropped), never a failure.

The two waits of an in-process run (the settle before the finish, the grace before the
drop) go through a :data:`Wait` the caller may hand in: the command line shows what it
waits for and how long, and on a local stack ends the settle as soon as no ingest batch
is in flight (docs/operations.md#rebuild-on-the-local-stack).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from video_index.aggregate.barrier import Barrier
from video_index.aws.objects import ListedObject, ObjectStore
from video_index.aws.store import ConditionFailed, ReadModelStore
from video_index.core.contract import REBUILD_DROP_GRACE_SECONDS
from video_index.core.errors import Conflict
from video_index.core.keys import KEY_PREFIX, ValidKey, classify_key
from video_index.core.layout import CONTROL_PK, DEFAULT_GENERATION, GENERATION_SK, generation_prefix
from video_index.core.projection import ObjectState
from video_index.ingest.ingestor import Ingestor
from video_index.ops.fingerprints import Partition
from video_index.ops.mend import Mender
from video_index.ops.reconcile import Reconciler

#: Longer than any ingest batch can run (the Lambda timeout): a batch that read the
#: generations before ``building`` was set has ended by then.
DEFAULT_SETTLE_SECONDS: Final = 120.0
#: Longer than the API's generation cache, so no reader still uses the old one.
DEFAULT_DROP_GRACE_SECONDS: Final = float(REBUILD_DROP_GRACE_SECONDS)


#: How an in-process run waits: ``wait(what, seconds)`` — ``what`` is ``settle`` or
#: ``drop-grace``; it may return early when what it waits for has happened.
Wait = Callable[[str, float], None]
#: The reason an in-process run stopped by Ctrl-C records, before and after the switch.
INTERRUPTED: Final = "interrupted"


class RebuildError(Conflict):
    """The rebuild is not in the state the request needs (see ``rebuild status``)."""


class RebuildInProgress(RebuildError):
    """A rebuild is already running; ``status`` tells which."""


@dataclass(frozen=True)
class RebuildStatus:
    phase: str
    current: int
    building: int | None
    rebuild_id: str | None
    partitions_total: int
    partitions_done: int
    started_at: str | None
    updated_at: str | None
    previous: int | None
    error: str | None

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> RebuildStatus:
        def opt_int(name: str) -> int | None:
            return int(item[name]) if item.get(name) is not None else None

        return cls(
            phase=str(item.get("phase", "idle")),
            current=int(item.get("current", DEFAULT_GENERATION)),
            building=opt_int("building"),
            rebuild_id=item.get("rebuild_id"),
            partitions_total=int(item.get("partitions_total", 0)),
            partitions_done=int(item.get("partitions_done", 0)),
            started_at=item.get("started_at"),
            updated_at=item.get("updated_at"),
            previous=opt_int("previous"),
            error=item.get("error"),
        )


class Rebuilder:
    def __init__(
        self,
        store: ReadModelStore,
        objects: ObjectStore,
        ingestor: Ingestor,
        *,
        barrier: Barrier,
        mender: Mender,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._store = store
        self._barrier = barrier
        self._mender = mender
        self._objects = objects
        self._ingestor = ingestor
        self._clock = clock
        self._sleep = sleep
        #: Where :meth:`run` gets its partition list when it is given no objects: the
        #: distributed plan's S3 side (``Ops.rebuild_partitions``); a listing by default.
        self.plan_partitions: Callable[[], list[Partition]] = lambda: partitions_of(
            self._objects.list(KEY_PREFIX)
        )

    # -- control item --------------------------------------------------------------------

    def status(self) -> RebuildStatus:
        return RebuildStatus.from_item(self._store.get(CONTROL_PK, GENERATION_SK) or {})

    def _now(self) -> str:
        return datetime.fromtimestamp(self._clock(), tz=UTC).isoformat(timespec="seconds")

    def _update_control(
        self,
        expression: str,
        condition: str,
        values: dict[str, Any],
        names: dict[str, str] | None = None,
    ) -> None:
        try:
            self._store.update_control(GENERATION_SK, expression, condition, values, names)
        except ConditionFailed:
            raise RebuildError(
                "the rebuild state changed underneath; see `rebuild status`"
            ) from None

    # -- phases --------------------------------------------------------------------------

    def start(self, partitions: list[Partition]) -> RebuildStatus:
        current = self.status().current
        rebuild_id = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
        try:
            self._store.update_control(
                GENERATION_SK,
                "SET building = :b, rebuild_id = :id, phase = :phase, partitions_total = :total,"
                " partitions_done = :zero, started_at = :now, updated_at = :now,"
                " #current = if_not_exists(#current, :current) REMOVE #error",
                "attribute_not_exists(building)",
                {
                    ":b": current + 1,
                    ":id": rebuild_id,
                    ":phase": "building",
                    ":total": len(partitions),
                    ":zero": 0,
                    ":now": self._now(),
                    ":current": current,
                },
                names={"#current": "current", "#error": "error"},
            )
        except ConditionFailed:
            raise RebuildInProgress(
                f"a rebuild is already running (building generation {self.status().building})"
            ) from None
        return self.status()

    def build(self, generation: int, partitions: Iterable[Partition]) -> int:
        """Project the listed partitions into ``generation``; returns entries written."""
        written = 0
        for partition in partitions:
            for obj in self._objects.list(partition.prefix):
                match classify_key(obj.key):
                    case ValidKey(segment=segment):
                        state = ObjectState(True, obj.size, obj.etag, obj.received_ms)
                        try:
                            self._ingestor.project(generation, segment, state)
                            written += 1
                        except ConditionFailed:
                            pass  # ingest got there first, with an event at least as fresh
                    case _:
                        continue
            self._store.update_control(
                GENERATION_SK,
                "ADD partitions_done :one SET updated_at = :now",
                "building = :g",
                {":one": 1, ":now": self._now(), ":g": generation},
            )
        return written

    def finish(
        self,
        generation: int,
        *,
        settle_seconds: float = DEFAULT_SETTLE_SECONDS,
        wait: Wait | None = None,
    ) -> RebuildStatus:
        status = self.status()
        if status.building != generation:
            raise RebuildError(
                f"generation {generation} is not being built (status: {status.phase})"
            )
        started = datetime.fromisoformat(status.started_at or self._now()).timestamp()
        left = started + settle_seconds - self._clock()
        if left > 0:
            (wait or self._wait)("settle", left)
        self._update_control(
            "SET phase = :phase, updated_at = :now",
            "building = :g",
            {":phase": "catching-up", ":now": self._now(), ":g": generation},
        )
        # The aggregation of what the build wrote, caught up before the reconcile compares.
        lanes = self._store.lanes(status.current) | self._store.lanes(generation)
        self._barrier.pass_(generation, lanes)
        reconciler = Reconciler(
            self._store, self._objects, self._ingestor, mender=self._mender, clock=self._clock
        )
        reconciler.run(
            self._objects.list(KEY_PREFIX), source="list", generation=generation, force=True
        )
        self._update_control(
            "SET #current = :g, previous = :old, phase = :phase, updated_at = :now REMOVE building",
            "building = :g AND #current = :old",
            {":g": generation, ":old": status.current, ":phase": "switched", ":now": self._now()},
            names={"#current": "current"},
        )
        return self.status()

    def abort(self, reason: str = "aborted by operator", phase: str = "aborted") -> RebuildStatus:
        status = self.status()
        if status.building is None:
            raise RebuildError("no rebuild is running")
        self._update_control(
            "SET phase = :phase, updated_at = :now, #error = :why REMOVE building",
            "building = :g",
            {":phase": phase, ":now": self._now(), ":why": reason, ":g": status.building},
            names={"#error": "error"},
        )
        self.drop(status.building)
        return self.status()

    def drop(self, generation: int) -> int:
        """Delete every item of a generation that no longer serves (paced batch deletes)."""
        if generation == self.status().current:
            raise RebuildError(f"generation {generation} is serving; it cannot be dropped")
        return self._store.delete_prefix(generation_prefix(generation))

    def run(
        self,
        objects: Iterable[ListedObject] | None = None,
        *,
        settle_seconds: float = DEFAULT_SETTLE_SECONDS,
        drop_grace_seconds: float = DEFAULT_DROP_GRACE_SECONDS,
        progress: Callable[[RebuildStatus], None] | None = None,
        wait: Wait | None = None,
    ) -> RebuildStatus:
        """The whole rebuild in this process (the CLI); Step Functions runs the same phases."""
        partitions = partitions_of(objects) if objects is not None else self.plan_partitions()
        status = self.start(partitions)
        assert status.building is not None
        generation = status.building
        try:
            for partition in partitions:
                self.build(generation, [partition])
                if progress:
                    progress(self.status())
            status = self.finish(generation, settle_seconds=settle_seconds, wait=wait)
        except KeyboardInterrupt:
            if self.status().building == generation:
                reason = (
                    f"stopped by Ctrl-C before the switch: generation {status.current} keeps "
                    "serving, what was built is dropped"
                )
                self.abort(reason, phase=INTERRUPTED)
            raise
        except BaseException as exc:
            if self.status().building == generation:
                self.abort(f"failed: {type(exc).__name__}" + (f": {exc}" if str(exc) else ""))
            raise
        if progress:
            progress(status)
        try:
            (wait or self._wait)("drop-grace", drop_grace_seconds)
        except KeyboardInterrupt:
            self._update_control(
                "SET phase = :phase, updated_at = :now, #error = :why",
                "#current = :g",
                {
                    ":phase": INTERRUPTED,
                    ":now": self._now(),
                    ":why": f"stopped by Ctrl-C after the switch: generation {generation} "
                    f"serves, generation {status.previous} was not dropped",
                    ":g": generation,
                },
                names={"#error": "error", "#current": "current"},
            )
            raise
        if status.previous is not None:
            self.drop(status.previous)
        return self.status()

    def _wait(self, what: str, seconds: float) -> None:
        self._sleep(seconds)


def partitions_of(objects: Iterable[ListedObject]) -> list[Partition]:
    """The partitions (device × kind × UTC day) that hold valid keys: the S3 side of
    the fingerprint pass, reduced in this process."""
    from video_index.ops.columnar import compare, merge
    from video_index.ops.mapreduce import fingerprint_objects

    return compare(merge(partial for partial, _ in fingerprint_objects(objects))).with_objects
