"""Reconcile's retention census: held past retention, or overdue (docs/holds.md).

Retention is the daily retention job's (not lifecycle's), so an object past its
kind's retention is either **held** (inside an active hold of its device: kept on
purpose) or **overdue** (past retention by more than ``grace_days`` and held by
nothing: the job did not run, or failed). Reconcile counts both while it fingerprints
the objects: :func:`observe_batch` narrows a batch to the expired rows and judges them
on the columns (numpy: no Python per row, however many expired), against their
devices' holds, read once per device and run (one Query each; the devices a batch
meets for the first time are read together, their Queries overlapping). The rules are
the job's (:mod:`video_index.holds.retention`): its cutoff, and a segment straddling a
hold's edge is held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
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
        self._holds: dict[str, Sequence[Window]] = {}

    def cutoff(self, kind: str) -> int:
        """Objects of ``kind`` ending at or before this instant are past retention."""
        return cutoff_ms(self._now_ms, self.retention_days[kind])

    @property
    def grace_ms(self) -> int:
        return self._grace_days * DAY_MS

    def holds_of(self, device: str) -> Sequence[Window]:
        if device not in self._holds:
            self._holds[device] = self._held(device, 0, self._now_ms)
        return self._holds[device]

    def read_holds(self, devices: Collection[str]) -> None:
        """Read the holds of every device not read yet, several at a time."""
        missing = sorted(d for d in set(devices) if d not in self._holds)
        if len(missing) <= 1:
            for device in missing:
                self.holds_of(device)
            return
        with ThreadPoolExecutor(min(READERS, len(missing))) as pool:
            found = list(pool.map(lambda d: self._held(d, 0, self._now_ms), missing))
        self._holds.update(zip(missing, found, strict=True))

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


def observe_batch(
    census: RetentionCensus,
    keys: Any,
    parsed: Any,
    end_ms: Any,
    counts: CensusCounts,
) -> None:
    """Count the expired rows of a batch of parsed keys (``parsed``: the columns of
    :func:`~video_index.ops.keyparse.parse_keys`; ``keys`` the batch's Arrow strings),
    column-wise: Python only per device that has holds."""
    import numpy as np
    import pyarrow as pa

    cutoffs = np.array([census.cutoff(kind) for kind in KINDS], np.int64)[parsed.kind]
    expired = np.flatnonzero(end_ms <= cutoffs)
    if not len(expired):
        return
    slots, device_of = np.unique(parsed.device_index[expired], return_inverse=True)
    names = parsed.devices.take(pa.array(slots)).to_pylist()
    census.read_holds(names)
    held = _held_rows(
        [census.holds_of(name) for name in names],
        device_of,
        parsed.start_ms[expired],
        end_ms[expired],
    )
    counts.held += int(np.count_nonzero(held))
    overdue = np.flatnonzero(~held & (end_ms[expired] <= cutoffs[expired] - census.grace_ms))
    counts.overdue += len(overdue)
    room = SAMPLES - len(counts.overdue_samples)
    if room > 0 and len(overdue):
        rows = parsed.accepted[expired[overdue[:room]]]
        counts.overdue_samples.extend(keys.take(pa.array(rows)).to_pylist())


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
