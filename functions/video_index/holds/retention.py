"""Retention planning, pure: which listed keys the retention job deletes (docs/holds.md).

A key expires when its segment ended at least its kind's retention before now; it
is deleted unless its segment overlaps an active hold of its device (a straddling
segment is kept whole). Keys that are not segment keys of this layout are never
deleted here: they are not the job's to judge (reconcile reports them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from video_index.core.keys import InvalidKeyError, SegmentKey, parse_key

DAY_MS: Final = 86_400_000
#: Keys per DeleteObjects request (S3's limit).
DELETE_BATCH: Final = 1000

Window = tuple[int, int]


def cutoff_ms(now_ms: int, retention_days: int) -> int:
    """Segments ending at or before this instant are past retention."""
    return now_ms - retention_days * DAY_MS


def segment_of(key: str) -> SegmentKey | None:
    try:
        return parse_key(key)
    except (InvalidKeyError, ValueError):
        return None


def inside(segment: SegmentKey, holds: Iterable[Window]) -> bool:
    """Whether the segment's ``[start, end)`` overlaps a held ``[from, to)``."""
    return held_span(segment.start_ms, segment.end_ms, holds)


def held_span(start_ms: int, end_ms: int, holds: Iterable[Window]) -> bool:
    """Whether ``[start, end)`` overlaps a held ``[from, to)`` (a straddling span is held
    whole; an empty one counts at its instant)."""
    end_ms = max(end_ms, start_ms + 1)
    return any(start_ms < to_ms and end_ms > from_ms for from_ms, to_ms in holds)


def expired(segment: SegmentKey, now_ms: int, retention_days: Mapping[str, int]) -> bool:
    return segment.end_ms <= cutoff_ms(now_ms, retention_days[segment.kind])


def plan(
    keys: Iterable[str],
    holds: Mapping[str, Sequence[Window]],
    now_ms: int,
    retention_days: Mapping[str, int],
) -> list[str]:
    """The keys to delete: expired, not held by their device's ``holds``, in listed order."""
    doomed = []
    for key in keys:
        segment = segment_of(key)
        if segment is None or not expired(segment, now_ms, retention_days):
            continue
        if not inside(segment, holds.get(segment.device, ())):
            doomed.append(key)
    return doomed


def expired_days(days: Iterable[str], now_ms: int, retention: int) -> list[str]:
    """Of ``YYYY/MM/DD`` day folders, those holding any segment that may be expired: the
    day started before the cutoff (a segment started on it may have ended by then)."""
    cutoff = datetime.fromtimestamp(cutoff_ms(now_ms, retention) / 1000, UTC)
    found = []
    for day in days:
        try:
            start = datetime.strptime(day, "%Y/%m/%d").replace(tzinfo=UTC)
        except ValueError:
            continue
        if start < cutoff:
            found.append(day)
    return found


def may_hold_expired(folder_start: datetime, now_ms: int, retention: int) -> bool:
    """Whether a year or month folder starting at ``folder_start`` is worth opening."""
    cutoff = datetime.fromtimestamp(cutoff_ms(now_ms, retention) / 1000, UTC)
    return folder_start < cutoff + timedelta(0)
