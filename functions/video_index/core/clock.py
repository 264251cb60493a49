"""Camera clocks checked against S3's (docs/operations.md#camera-clocks): pure code.

The moment on a key is the camera's own clock; the moment S3 received the object is
S3's (the event's ``eventTime``, or ``LastModified``). For one file,

    lateness = received − end        (end: the key's start + duration)
             = upload delay − clock offset

since the camera finishes a file before it uploads it: delay ≥ 0 whatever the network
does, and the offset is how far the camera's clock runs ahead of S3's. Only their
difference is observable, so the rule rests on that sign:

* **clock ahead**: a file whose lateness is below −tolerance ended, by its key, more than
  the tolerance after S3 already held it. A late upload only *adds* delay, so it can never
  produce one: on a camera whose clock is within the tolerance, however late and irregular
  its uploads (an outage's backlog included), the rule's false-alarm rate is zero;
* **upload delay**: the smallest lateness of the recent window (the last hour of arrivals,
  in slots of ten minutes by receipt). A backlog uploaded after an outage is late, but the
  camera's live files of the same hour are not, so the minimum stays the steady delay;
  only when every file of the hour was late does the figure rise — it then was late.

The estimate of the offset is ``−min(lateness)``: a lower bound of the real offset (by the
smallest delay), hence never an alarm the real clock does not deserve. A camera 90 s ahead
with a 2 s delay shows 88 s from its first file on.

What is kept per device and kind (the device item's ``k:<kind>``, written by the stream
consumer with the item's other figures, docs/read-model.md) is at most six slots
``[slot start, smallest lateness, files]``, flattened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

#: Arrivals are grouped in slots of this many ms by their receipt (ten minutes).
CLOCK_SLOT_MS: Final = 600_000
#: Slots kept: the window the figures describe is the last hour of arrivals.
CLOCK_SLOTS: Final = 6
#: A file may end this many seconds after S3 received it before its camera's clock counts
#: as ahead (the stack setting ``clock_tolerance_seconds``).
DEFAULT_CLOCK_TOLERANCE_SECONDS: Final = 10

Slots = list[int]


def add_arrivals(stored: Sequence[int], arrivals: Iterable[tuple[int, int]]) -> Slots:
    """``stored`` slots with ``(received_ms, lateness_ms)`` arrivals added; the slots older
    than the window before the newest are dropped (so are arrivals that old)."""
    slots: dict[int, list[int]] = {
        int(stored[i]): [int(stored[i + 1]), int(stored[i + 2])] for i in range(0, len(stored), 3)
    }
    for received_ms, lateness in arrivals:
        slot = received_ms - received_ms % CLOCK_SLOT_MS
        held = slots.get(slot)
        slots[slot] = [min(held[0], lateness), held[1] + 1] if held else [lateness, 1]
    if not slots:
        return []
    oldest = max(slots) - (CLOCK_SLOTS - 1) * CLOCK_SLOT_MS
    return [v for slot in sorted(slots) if slot >= oldest for v in (slot, *slots[slot])]


@dataclass(frozen=True, slots=True)
class ClockFigures:
    """What the slots say about a camera's clock and its uploads."""

    #: The smallest received − end of the window (ms).
    lateness_ms: int
    #: Files the window holds, and where it starts (epoch ms, by receipt).
    files: int
    since_ms: int

    @property
    def upload_delay_ms(self) -> int:
        return max(0, self.lateness_ms)

    @property
    def ahead_ms(self) -> int:
        """How far (at least) the camera's clock runs ahead of S3's; 0 when it does not."""
        return max(0, -self.lateness_ms)

    def is_ahead(self, tolerance_ms: int) -> bool:
        return self.ahead_ms > tolerance_ms


def figures(stored: Sequence[int] | None) -> ClockFigures | None:
    """The figures of stored slots; None when no arrival was recorded."""
    if not stored:
        return None
    values = [int(value) for value in stored]
    return ClockFigures(lateness_ms=min(values[1::3]), files=sum(values[2::3]), since_ms=values[0])


def combined(items: Iterable[ClockFigures | None]) -> ClockFigures | None:
    """One camera's figures over its kinds (one clock): the smallest lateness."""
    known = [item for item in items if item is not None]
    if not known:
        return None
    return ClockFigures(
        lateness_ms=min(item.lateness_ms for item in known),
        files=sum(item.files for item in known),
        since_ms=min(item.since_ms for item in known),
    )
