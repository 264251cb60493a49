"""Apply S3 events to the read model so it converges to P(S3) (docs/ingest.md, invariant I1).

For one key, the decision is:

* The event carries a sequencer and says what the key's current state is
  (created with a size, or removed): write that state if the sequencer is newer
  than the one the segment item holds. Equal means duplicate, smaller means
  stale; both change nothing.
* Otherwise (no sequencer, a permanently deleted *version* that may leave an
  older version current, a create without a size): ask S3 with HEAD and write
  what S3 says now, keeping the highest sequencer seen. Once a key's state came
  from a HEAD without a sequencer, its stored sequencer cannot order later
  events any more, so they all ask S3 as well (``observed``).

Every write is a compare-and-set on the segment item's ``ver``
(:meth:`ReadModelStore.write_transition`), so a state change happens once
whatever the delivery; the aggregates follow from the table's stream, which
carries each such change exactly once (:mod:`video_index.aggregate`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Final

from aws_lambda_powertools import Logger

from video_index.aws.objects import ObjectStore
from video_index.aws.store import ConditionFailed, ReadModelStore, TransientStoreError
from video_index.core.keys import ForeignKey, InvalidKey, SegmentKey, ValidKey, classify_key
from video_index.core.models import SegmentRecord
from video_index.core.projection import ABSENT, ObjectState
from video_index.deletion.enforcement import Enforcer, Verdict
from video_index.ingest.events import Action, ObjectEvent
from video_index.ingest.media import MediaProbe
from video_index.media.renditions import Renditions

logger = Logger(child=True)

#: Compare-and-set attempts before the record is handed back to SQS for a retry.
MAX_ATTEMPTS: Final = 8


class Outcome(StrEnum):
    APPLIED = "Applied"
    DUPLICATE = "Duplicate"
    STALE = "StaleIgnored"
    FOREIGN = "Foreign"
    INVALID = "Invalid"
    OTHER_BUCKET = "OtherBucket"
    MALFORMED = "Malformed"
    #: Created inside a recorded deletion window: deleted again, never projected.
    ENFORCED = "DeletionEnforced"
    #: Created inside a recorded deletion window but held (docs/holds.md): kept and
    #: projected; counted beside the outcome of its projection, not instead of it.
    HELD = "DeletionHeld"


@dataclass
class IngestStats:
    outcomes: Counter[Outcome] = field(default_factory=Counter)
    lags_seconds: list[float] = field(default_factory=list)
    #: Per created file: S3's receipt minus the key's end (ms; negative: it ended later,
    #: by its key, than S3 received it, which only a clock ahead explains).
    lateness_ms: list[int] = field(default_factory=list)

    def reset(self) -> None:
        self.outcomes.clear()
        self.lags_seconds.clear()
        self.lateness_ms.clear()

    @property
    def ahead_seconds(self) -> float | None:
        """How far the batch's file furthest ahead ended after its receipt (0: none did)."""
        if not self.lateness_ms:
            return None
        return max(0, -min(self.lateness_ms)) / 1000


class Ingestor:
    def __init__(
        self,
        store: ReadModelStore,
        objects: ObjectStore,
        media: MediaProbe | None = None,
        enforcer: Enforcer | None = None,
    ) -> None:
        self._store = store
        self._objects = objects
        #: Deletion requests in force (docs/deletion.md): checked before a creation counts.
        self.enforcer = enforcer
        #: Media facts of video objects, written with their entries (docs/playback.md).
        self.media = media or MediaProbe(objects)
        self._renditions = Renditions(objects)
        self.stats = IngestStats()
        self._generations: list[int] | None = None

    def start_batch(self) -> None:
        """Forget the last batch's figures; read the generations to write once per batch."""
        self._generations = None
        self.stats.reset()
        if self.enforcer is not None:
            self.enforcer.start_batch()

    def write_units(self) -> float:
        return self._store.consumption.write_units

    def record(self, outcome: Outcome) -> None:
        self.stats.outcomes[outcome] += 1

    def apply(self, event: ObjectEvent) -> Outcome:
        outcome = self._apply(event)
        self.record(outcome)
        if event.event_time is not None:
            lag = (datetime.now(UTC) - event.event_time).total_seconds()
            self.stats.lags_seconds.append(max(lag, 0.0))
        return outcome

    def _apply(self, event: ObjectEvent) -> Outcome:
        if event.bucket != self._objects.bucket:
            logger.warning("event for another bucket ignored", extra={"bucket": event.bucket})
            return Outcome.OTHER_BUCKET
        match classify_key(event.key):
            case ForeignKey():
                logger.debug("foreign key ignored", extra={"key": event.key})
                return Outcome.FOREIGN
            case InvalidKey(reason=reason):
                logger.warning(
                    "invalid key not indexed", extra={"key": event.key, "reason": reason}
                )
                return Outcome.INVALID
            case ValidKey(segment=segment):
                pass
        received_ms = _epoch_ms(event)
        if event.action is Action.CREATED and received_ms is not None:
            self.stats.lateness_ms.append(received_ms - segment.end_ms)
        if event.action is Action.CREATED and self.enforcer is not None:
            verdict = self.enforcer.enforce(segment, by="ingest")
            if verdict is Verdict.ENFORCED:
                return Outcome.ENFORCED  # its delete event follows; it is never counted
            if verdict is Verdict.HELD:
                self.record(Outcome.HELD)
        if self._generations is None:
            self._generations = self._store.generations()
        outcomes = [self._apply_to(generation, segment, event) for generation in self._generations]
        return outcomes[0]

    def repair(self, segment: SegmentKey, generations: list[int] | None = None) -> Outcome:
        """Make the read model agree with S3 about one key now (read repair, reconcile).

        The same path as an event without a sequencer: HEAD, then a
        compare-and-set transition, so aggregates move by exact deltas.
        """
        targets = generations if generations is not None else self._store.generations()
        outcomes = [self._apply_observed(generation, segment, None) for generation in targets]
        self.record(outcomes[0])
        return outcomes[0]

    def project(self, generation: int, segment: SegmentKey, state: ObjectState) -> None:
        """Write a listed object into a generation being built (rebuild), media facts
        included; :class:`ConditionFailed` when ingest wrote the key there first."""
        self._write(generation, segment, None, state, "")

    def _apply_to(self, generation: int, segment: SegmentKey, event: ObjectEvent) -> Outcome:
        decisive = event.sequencer is not None and (
            event.action is Action.REMOVED
            or (event.action is Action.CREATED and event.size is not None)
        )
        if decisive:
            assert event.sequencer is not None
            desired = (
                ObjectState(True, event.size or 0, event.etag or "", _epoch_ms(event))
                if event.action is Action.CREATED
                else ABSENT
            )
            return self._apply_sequenced(
                generation, segment, event.sequencer, desired, event.version_id
            )
        return self._apply_observed(generation, segment, event.sequencer)

    def _write(
        self,
        generation: int,
        segment: SegmentKey,
        current: SegmentRecord | None,
        new: ObjectState,
        seq: str,
        *,
        observed: bool = False,
        version_id: str | None = None,
    ) -> None:
        """The transition, with the media facts of a present video object."""
        container: str | None = None
        init_end: int | None = None
        decode_start_ms: int | None = None
        if new.present and current is not None and current.state == new and current.container:
            # same bytes: same facts
            container, init_end = current.container, current.init_end
            decode_start_ms = current.decode_start_ms
        else:
            facts = self.media.facts(segment, new, version_id)
            container = str(facts.container) if facts else None
            init_end = facts.init_end if facts else None
            decode_start_ms = facts.decode_start_ms if facts else None
        self._store.write_transition(
            generation,
            segment,
            current,
            new,
            seq,
            observed=observed,
            container=container,
            init_end=init_end,
            decode_start_ms=decode_start_ms,
        )
        if not new.present and segment.kind == "video" and segment.ext == "mp4":
            # A rendition is derived from its source: it goes when the source goes.
            self._renditions.forget(segment.key)

    def _apply_sequenced(
        self,
        generation: int,
        segment: SegmentKey,
        seq: str,
        desired: ObjectState,
        version_id: str | None = None,
    ) -> Outcome:
        # A create is most often a first upload of a new key: assume no item and let a
        # failed condition hand back the real one. A removal is most often of a key the
        # read model holds: read it first (a read unit, where a failed conditional write
        # would cost a write unit and the write after it another).
        current = None if desired.present else self._store.get_segment(generation, segment)
        for _ in range(MAX_ATTEMPTS):
            if current is not None and current.observed:
                return self._apply_observed(generation, segment, seq)
            if current is not None and current.seq >= seq:
                return Outcome.DUPLICATE if current.seq == seq else Outcome.STALE
            try:
                self._write(generation, segment, current, desired, seq, version_id=version_id)
                return Outcome.APPLIED
            except ConditionFailed as moved:
                current = (
                    moved.current if moved.known else self._store.get_segment(generation, segment)
                )
        raise TransientStoreError(f"too much contention on {segment.key}; retry later")

    def _apply_observed(self, generation: int, segment: SegmentKey, seq: str | None) -> Outcome:
        for _ in range(MAX_ATTEMPTS):
            current = self._store.get_segment(generation, segment)
            observed = self._objects.head(segment.key)
            stored_seq = current.seq if current else ""
            new_seq = max(stored_seq, seq or "")
            unordered = seq is None or (current is not None and current.observed)
            if (
                current is not None
                and current.state == observed
                and new_seq == stored_seq
                and current.observed == unordered
            ):
                return Outcome.DUPLICATE
            try:
                self._write(generation, segment, current, observed, new_seq, observed=unordered)
                return Outcome.APPLIED
            except ConditionFailed:
                continue
        raise TransientStoreError(f"too much contention on {segment.key}; retry later")


def _epoch_ms(event: ObjectEvent) -> int | None:
    """The event's ``eventTime`` (when S3 finished the request) in epoch ms."""
    return int(event.event_time.timestamp() * 1000) if event.event_time is not None else None
