"""Holds as everything that deletes sees them (docs/holds.md).

A hold keeps a window of one device's footage past retention and past deletion
requests: what a hold covers is never deleted by a deletion job, a bulk deletion,
retention or enforcement, and a restore copies it back even where a deletion window
covers it (a request recorded before the hold does not win over it). They only ask
"is this segment held?", through :class:`HeldWindows` (the holds table's is
``holds.service.HoldsHeldWindows``, read strongly consistently). There is no "nothing
is held" stand-in: a builder of anything that deletes refuses to start without the
holds table (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from video_index.core.keys import SegmentKey


@dataclass(frozen=True, slots=True)
class HeldWindow:
    """One hold: ``[from_ms, to_ms)`` of one device (every kind)."""

    hold_id: str
    device: str
    from_ms: int
    to_ms: int

    def overlaps(self, start_ms: int, end_ms: int) -> bool:
        """``[start, end)`` meets the hold; a point in time (start = end) lies in it."""
        if start_ms == end_ms:
            return self.from_ms <= start_ms < self.to_ms
        return start_ms < self.to_ms and end_ms > self.from_ms


class HeldWindows(Protocol):
    """What holds are in force (read by whatever deletes, and by restore)."""

    def windows(self, device: str, from_ms: int, to_ms: int) -> Sequence[HeldWindow]:
        """The holds of ``device`` overlapping ``[from_ms, to_ms)`` (``from < to``)."""
        ...


def is_held(holds: HeldWindows, segment: SegmentKey) -> bool:
    """Whether a hold covers any part of ``segment``'s interval (read now)."""
    return bool(held_keys(holds, [segment]))


def held_keys(holds: HeldWindows, segments: Sequence[SegmentKey]) -> set[str]:
    """The keys of ``segments`` an active hold covers: the holds are read once per device,
    over the span of its segments (one Query right before a batch is deleted). A
    segment of no duration (a sensor reading) is an instant: held when a hold holds it."""
    held: set[str] = set()
    for device in {s.device for s in segments}:
        own = [s for s in segments if s.device == device]
        low = min(s.start_ms for s in own)
        high = max(max(s.end_ms, s.start_ms + 1) for s in own)
        found = holds.windows(device, low, high)
        held |= {s.key for s in own if any(h.overlaps(s.start_ms, s.end_ms) for h in found)}
    return held
