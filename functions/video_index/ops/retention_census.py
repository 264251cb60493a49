"""Reconcile's retention census: held past retention, or overdue (docs/holds.md).

Retention is the daily retention job's (not lifecycle's), so an object past its
kind's retention is either **held** (inside an active hold of its device: kept on
purpose) or **overdue** (past retention by more than ``grace_days`` and held by
nothing: the job did not run, or failed). Reconcile counts both while it fingerprints
the objects: :func:`observe_batch` narrows a batch to the expired rows on the columns
and sets them aside, and starts reading the holds of the devices it meets for the first
time, in the background (one Query per device and run, up to :data:`READERS` at once),
while the pass goes on; :meth:`RetentionCensus.settle`, at the end of a unit, judges the
rows set aside on the columns (numpy: no Python per row, however many expired). The
rules are the job's (:mod:`video_index.holds.retention`): its cutoff, and a segment
straddling a hold's edge is held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.keys import KINDS, SegmentKey
from video_index.holds.retention import DAY_MS, Window, cutoff_ms, held_span

#: Days past retention before an unheld object is overdue (the job runs daily).
GRACE_DAYS: Final = 2
#: Sample keys kept of overdue objects.
SAMPLES: Final = 10
#: Devices whose holds are read at the same time (I/O: the Queries overlap).
READERS: Final = 16


@dataclass
class CensusCounts:
    """Expired objects seen: held (kept on purpose) and overdue (forgotten)."""

    held: int = 0
    overdue: int = 0
    overdue_samples: list[str] = field(default_factory=list)

    def add(self, other: CensusCounts) -> None:
        self.held += other.held
        self.overdue += other.overdue
        self.overdue_samples = (self.overdue_samples + other.overdue_samples)[:SAMPLES]


@dataclass(frozen=True)
class _Expired:
    """The expired rows of one batch, set aside until their devices' holds are read."""

    devices: list[str]  # by slot
    device_of: Any  # each row's slot
    starts: Any
    ends: Any
    #: Each row's end at or before which it is overdue (its kind's cutoff - grace).
    overdue_by: Any
    keys: Any  # Arrow strings, the rows' keys


class RetentionCensus:
    """Judges expired objects at one instant, reading each device's holds once."""

    def __init__(
        self,
        held: Callable[[str, int, int], Sequence[Window]],
        now_ms: int,
        retention_days: Mapping[str, int],
        grace_days: int = GRACE_DAYS,
    ) -> None:
        self._held = held
        self._now_ms = now_ms
        self.retention_days = dict(retention_days)
        self._grace_days = grace_days
        self._holds: dict[str, Future[Sequence[Window]]] = {}
        self._readers: ThreadPoolExecutor | None = None
        self._pending: list[_Expired] = []

    def cutoff(self, kind: str) -> int:
        """Objects of ``kind`` ending at or before this instant are past retention."""
        return cutoff_ms(self._now_ms, self.retention_days[kind])

    @property
    def grace_ms(self) -> int:
        return self._grace_days * DAY_MS

    def read_holds(self, devices: Collection[str]) -> None:
        """Start reading the holds of the devices not read yet (in the background)."""
        for device in devices:
            if device not in self._holds:
                if self._readers is None:
                    self._readers = ThreadPoolExecutor(READERS, thread_name_prefix="holds")
                self._holds[device] = self._readers.submit(self._held, device, 0, self._now_ms)

    def holds_of(self, device: str) -> Sequence[Window]:
        self.read_holds((device,))
        return self._holds[device].result()

    def set_aside(self, expired: _Expired) -> None:
        self._pending.append(expired)

    def settle(self) -> CensusCounts:
        """Judge every row set aside since the last call; their counts."""
        counts = CensusCounts()
        pending, self._pending = self._pending, []
        for batch in pending:
            _judge_batch(batch, [self.holds_of(d) for d in batch.devices], counts)
        if self._readers is not None and all(f.done() for f in self._holds.values()):
            self._readers.shutdown(wait=False)
            self._readers = None
        return counts

    def observe(self, segment: SegmentKey, key: str, counts: CensusCounts) -> None:
        """Count one object if it is past its kind's retention."""
        self.judge(segment.device, segment.kind, segment.start_ms, segment.end_ms, key, counts)

    def judge(
        self, device: str, kind: str, start_ms: int, end_ms: int, key: str, counts: CensusCounts
    ) -> None:
        cutoff = self.cutoff(kind)
        if end_ms > cutoff:
            return
        if held_span(start_ms, end_ms, self.holds_of(device)):
            counts.held += 1
        elif end_ms <= cutoff - self.grace_ms:
            counts.overdue += 1
            if len(counts.overdue_samples) < SAMPLES:
                counts.overdue_samples.append(key)


def observe_batch(census: RetentionCensus, keys: Any, parsed: Any, end_ms: Any) -> None:
    """Set the expired rows of a batch of parsed keys aside for :meth:`RetentionCensus.settle`
    (``parsed``: the columns of :func:`~video_index.ops.keyparse.parse_keys`; ``keys`` the
    batch's Arrow strings)."""
    import numpy as np
    import pyarrow as pa

    cutoffs = np.array([census.cutoff(kind) for kind in KINDS], np.int64)[parsed.kind]
    expired = np.flatnonzero(end_ms <= cutoffs)
    if not len(expired):
        return
    slots, device_of = np.unique(parsed.device_index[expired], return_inverse=True)
    names = parsed.devices.take(pa.array(slots)).to_pylist()
    census.read_holds(names)
    census.set_aside(
        _Expired(
            devices=names,
            device_of=device_of,
            starts=parsed.start_ms[expired],
            ends=end_ms[expired],
            overdue_by=cutoffs[expired] - census.grace_ms,
            keys=keys.take(pa.array(parsed.accepted[expired])),
        )
    )


def _judge_batch(batch: _Expired, holds: Sequence[Sequence[Window]], counts: CensusCounts) -> None:
    """Count held and overdue rows of one batch set aside, column-wise."""
    import numpy as np

    held = _held_rows(holds, batch.device_of, batch.starts, batch.ends)
    counts.held += int(np.count_nonzero(held))
    overdue = np.flatnonzero(~held & (batch.ends <= batch.overdue_by))
    counts.overdue += len(overdue)
    room = SAMPLES - len(counts.overdue_samples)
    if room > 0 and len(overdue):
        counts.overdue_samples.extend(batch.keys.take(overdue[:room]).to_pylist())


def _held_rows(holds: Sequence[Sequence[Window]], device_of: Any, starts: Any, ends: Any) -> Any:
    """Which rows overlap an active hold of their device (``holds`` per device slot,
    ``device_of`` each row's slot): :func:`held_span` on the columns."""
    import numpy as np

    held = np.zeros(len(starts), bool)
    if not any(holds):
        return held
    ends = np.maximum(ends, starts + 1)  # an empty span counts at its instant
    order = np.argsort(device_of, kind="stable")
    bounds = np.searchsorted(device_of[order], np.arange(len(holds) + 1))
    for slot, windows in enumerate(holds):
        if not windows:
            continue
        rows = order[bounds[slot] : bounds[slot + 1]]
        mine = np.zeros(len(rows), bool)
        for from_ms, to_ms in windows:
            mine |= (starts[rows] < to_ms) & (ends[rows] > from_ms)
        held[rows] = mine
    return held
