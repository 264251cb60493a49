"""What a deletion request is: its window, the key ranges that hold it, its job's state.

A request names a device, a window ``[from, to)`` and optionally a kind; it covers
every segment of that device (and kind) whose interval intersects the window —
exactly what ``GET /devices/{device}/segments?from=&to=`` lists. Keys sort by time
(``v1/<kind>/<device>/YYYY/MM/DD/HH/<start>_…``), so the keys a window may cover are
one contiguous range per kind (:func:`window_ranges`): from the hour folder of the
earliest start that can reach the window (the kind's longest duration before
``from``) to the hour folder of ``to``. Its job lists each range once — a LIST per
1,000 keys, however long the window — and a checkpoint is a position in that list.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel

from video_index.core.errors import BadInput
from video_index.core.keys import (
    KINDS,
    MAX_DURATION_MS,
    SegmentKey,
    device_prefix,
    hour_prefix,
)
from video_index.core.timeunits import DAY_MS, HOUR_MS, from_epoch_ms

#: The longest window one request covers (as the list routes).
MAX_DELETION_WINDOW_MS: Final = 31 * DAY_MS
DELETION_ID_PATTERN: Final = r"^[0-9a-f]{32}$"
#: DeleteObjects takes at most 1,000 keys (or versions) per request.
DELETE_BATCH: Final = 1000


class DeletionState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    WITHDRAWN = "withdrawn"


#: States in which a job still has work to do.
OPEN_STATES: Final = frozenset({DeletionState.QUEUED, DeletionState.RUNNING})


class Phase(StrEnum):
    #: Listing the window once to know how much there is (``remaining``).
    COUNTING = "counting"
    #: Listing and deleting, a batch of at most 1,000 at a time.
    DELETING = "deleting"


class Checkpoint(BaseModel):
    """Where a job is: the phase, the position in :func:`window_ranges`, and within that
    range the last key of the last batch committed (counted) before deletion."""

    phase: Phase = Phase.COUNTING
    index: int = 0
    counted: int = 0
    cursor: str | None = None
    #: Keys counted per range. A range found empty is not listed again to delete: what
    #: appears there after the request was recorded is ingest's to delete again.
    found: list[int] = []


class DeletionRequest(BaseModel):
    """One request and its job: what a person decided, and how far the deleting got."""

    deletion_id: str
    device: str
    from_ms: int
    to_ms: int
    kind: str | None = None
    erase: bool = False
    state: DeletionState = DeletionState.QUEUED
    #: Keys the window covered when the job counted them, held ones included (``None``
    #: until counted); a finished job accounts for them as ``deleted + kept_held``.
    total: int | None = None
    #: Keys deleted by the job (erase: keys whose every version is gone).
    deleted: int = 0
    #: Versions and delete markers removed (erase only).
    versions_deleted: int = 0
    #: Keys the window covers that a hold kept (docs/holds.md): the holds are read
    #: again before every DeleteObjects, so a hold placed after the request wins.
    kept_held: int = 0
    checkpoint: Checkpoint = Checkpoint()
    created_by: str
    created_at: str
    updated_at: str
    error: str | None = None
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None

    @property
    def remaining(self) -> int | None:
        if self.state is DeletionState.DONE:
            return 0
        if self.total is None:
            return None
        return max(self.total - self.deleted - self.kept_held, 0)

    @property
    def window(self) -> Window:
        return Window(
            self.deletion_id, self.device, self.from_ms, self.to_ms, self.kind, self.erase
        )

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind,) if self.kind else KINDS


@dataclass(frozen=True, slots=True)
class Window:
    """A recorded (not withdrawn) deletion window: what enforcement checks keys against."""

    deletion_id: str
    device: str
    from_ms: int
    to_ms: int
    kind: str | None
    erase: bool

    @classmethod
    def of_item(cls, device: str, item: dict[str, Any]) -> Window:
        """The window a window item of the deletion requests table records."""
        return cls(
            deletion_id=str(item["deletion_id"]),
            device=device,
            from_ms=int(item["from_ms"]),
            to_ms=int(item["to_ms"]),
            kind=item.get("kind"),
            erase=bool(item.get("erase", False)),
        )

    def covers(self, segment: SegmentKey) -> bool:
        """The segment is the window's: its device and kind, its interval intersecting."""
        return (
            segment.device == self.device
            and (self.kind is None or segment.kind == self.kind)
            and intersects(segment, self.from_ms, self.to_ms)
        )

    def intersects_day(self, kind: str, day_ms: int) -> bool:
        """Whether segments of ``kind`` starting in the UTC day ``day_ms`` may be covered."""
        if self.kind is not None and kind != self.kind:
            return False
        low = self.from_ms - MAX_DURATION_MS[kind]
        return day_ms < self.to_ms and day_ms + DAY_MS > low


def intersects(segment: SegmentKey, from_ms: int, to_ms: int) -> bool:
    """``[start, end)`` meets ``[from, to)``; a point-in-time segment (duration 0) counts
    when its instant lies in the window."""
    if segment.duration_ms == 0:
        return from_ms <= segment.start_ms < to_ms
    return segment.start_ms < to_ms and segment.end_ms > from_ms


def check_window(from_ms: int, to_ms: int) -> None:
    if from_ms >= to_ms:
        raise BadInput("to", "must be after from")
    if to_ms - from_ms > MAX_DELETION_WINDOW_MS:
        raise BadInput("to", f"a deletion covers at most {MAX_DELETION_WINDOW_MS // DAY_MS} days")


def check_kind(kind: str | None) -> str | None:
    if kind in (None, ""):
        return None
    if kind not in KINDS:
        raise BadInput("kind", f"must be one of {', '.join(KINDS)}")
    return kind


@dataclass(frozen=True, slots=True)
class KeyRange:
    """The keys of one kind of one device from the folder ``after`` (exclusive: no key
    equals a folder name) up to ``last`` (the last hour folder followed by ``~``, which
    sorts after every key in it)."""

    kind: str
    prefix: str
    after: str
    last: str

    def holds(self, key: str) -> bool:
        return key.startswith(self.prefix) and self.after < key <= self.last


def window_ranges(device: str, kinds: tuple[str, ...], from_ms: int, to_ms: int) -> list[KeyRange]:
    """One :class:`KeyRange` per kind holding every key the window may cover, in order."""
    out = []
    for kind in kinds:
        first = max(from_ms - MAX_DURATION_MS[kind] + 1, 0) // HOUR_MS * HOUR_MS
        last = (to_ms - 1) // HOUR_MS * HOUR_MS
        out.append(
            KeyRange(
                kind=kind,
                prefix=device_prefix(kind, device),
                after=hour_prefix(kind, device, from_epoch_ms(first)),
                last=hour_prefix(kind, device, from_epoch_ms(last)) + "~",
            )
        )
    return out
