"""Holds as restore and bulk deletion see them (issue 24 builds the holds themselves).

A hold keeps a window of one device's footage past retention and past deletion
requests: what a hold covers is never deleted by a deletion job, and a restore copies
it back even where a deletion window covers it (a request recorded before the hold
does not win over it). Restore and bulk deletion only ask "is this segment held?",
through :class:`HeldWindows`; until holds exist the answer is :data:`NO_HOLDS`
(nothing is held), and the holds table plugs in here without changing them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

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
    """What holds are in force (read by restore and bulk deletion)."""

    def windows(self, device: str, from_ms: int, to_ms: int) -> Sequence[HeldWindow]:
        """The holds of ``device`` overlapping ``[from_ms, to_ms)``."""
        ...


class NoHolds:
    """Nothing is held (the default until the holds table exists)."""

    def windows(self, device: str, from_ms: int, to_ms: int) -> Sequence[HeldWindow]:
        return ()


NO_HOLDS: Final = NoHolds()


class StaticHolds:
    """A fixed list of holds (tests, and a snapshot taken once per unit of work)."""

    def __init__(self, holds: Iterable[HeldWindow]) -> None:
        self._holds = tuple(holds)

    def windows(self, device: str, from_ms: int, to_ms: int) -> Sequence[HeldWindow]:
        return [h for h in self._holds if h.device == device and h.overlaps(from_ms, to_ms)]


def is_held(holds: HeldWindows, segment: SegmentKey) -> bool:
    """Whether a hold covers any part of ``segment``'s interval."""
    return bool(holds.windows(segment.device, segment.start_ms, segment.end_ms))
