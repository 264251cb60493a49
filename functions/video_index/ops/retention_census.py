"""Reconcile's retention census: held past retention, or overdue (docs/holds.md).

Retention is the daily retention job's (not lifecycle's), so an object past its
kind's retention is either **held** (inside an active hold of its device: kept on
purpose) or **overdue** (past retention by more than ``grace_days`` and held by
nothing: the job did not run, or failed). Reconcile counts both while it fingerprints
the objects: :func:`observe_batch` narrows a batch to the expired rows on the
columns (in steady state only held and overdue ones: few), and only those are judged
one by one against their device's holds, read once per device and run (one Query).
The rules are the job's (:mod:`video_index.holds.retention`): its cutoff, and a
segment straddling a hold's edge is held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.keys import KINDS, SegmentKey
from video_index.holds.retention import DAY_MS, Window, cutoff_ms, held_span

#: Days past retention before an unheld object is overdue (the job runs daily).
GRACE_DAYS: Final = 2
#: Sample keys kept of overdue objects.
SAMPLES: Final = 10


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

    def holds_of(self, device: str) -> Sequence[Window]:
        if device not in self._holds:
            self._holds[device] = self._held(device, 0, self._now_ms)
        return self._holds[device]

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
        elif end_ms <= cutoff - self._grace_days * DAY_MS:
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
    :func:`~video_index.ops.keyparse.parse_keys`; ``keys`` the batch's Arrow strings)."""
    import numpy as np
    import pyarrow as pa

    cutoffs = np.array([census.cutoff(kind) for kind in KINDS], np.int64)
    expired = np.flatnonzero(end_ms <= cutoffs[parsed.kind])
    if not len(expired):
        return
    devices = parsed.devices.take(pa.array(parsed.device_index[expired])).to_pylist()
    names = keys.take(pa.array(parsed.accepted[expired])).to_pylist()
    kinds = parsed.kind[expired].tolist()
    starts = parsed.start_ms[expired].tolist()
    ends = end_ms[expired].tolist()
    for device, kind, start, end, key in zip(devices, kinds, starts, ends, names, strict=True):
        census.judge(device, KINDS[kind], start, end, key, counts)
