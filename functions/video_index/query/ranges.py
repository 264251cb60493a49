"""Whole continuous ranges of a window, from the hour coverage the stream consumer keeps.

A range is a maximal union of video intervals whose gaps are at most the tolerance
(docs/read-model.md). Each video bucket item holds the coverage of its UTC hour
(``r``: the segments clipped to the hour, merged), so the coverage of many hours is
one Query of small items, however many segments they hold. Merging the hours'
coverage again gives exactly the ranges merging the segments gives:
:func:`~video_index.core.ranges.merge_ranges` depends only on the union of its
intervals, and a union cut at the hours is the same union.

The buckets follow the segment items through the stream, a little behind. So the
**recent part** comes from the segment entries, as every segment answer gets it
(segment items, and an S3 listing for the fresh window): everything from the start
of the UTC hour holding the fresh window's start on. The answer is then the one the
segment items and S3 give; the buckets only stand in for segment items older than
that, which the consumer has long applied (its lag is watched, docs/operations.md).

Ranges come back whole, not clipped to the window: the first read spans the
window's hours and, where buckets serve them, a day either side (one bucket Query;
plus one segment Query when the window reaches the recent part). A range that comes
within the tolerance of an edge of what was read may go on past it, so the read
widens on that side, twice as far each time over buckets (a day at a time over the
recent part, an S3 listing per hour), until a gap ends every range, or the read
exceeds :data:`MAX_RANGE_READ_MS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.layout import OVERLAPS, RUNS
from video_index.core.ranges import covering, merge_ranges, unflatten
from video_index.core.timeunits import DAY_MS, HOUR_MS, QUARTERS

#: How far a ranges query follows a range beyond its window before it stops.
MAX_RANGE_READ_MS: Final = 400 * DAY_MS
#: The first read's margin on each side, where buckets serve it: a range running over
#: the window's midnights usually ends within a day of them.
MARGIN_MS: Final = DAY_MS

Span = tuple[int, int]
#: Intervals covering ``[start, end)`` exactly (they may reach beyond it).
Reader = Callable[[int, int], Iterable[Span]]


@dataclass(frozen=True, slots=True)
class CoverageSources:
    """Where one device's video coverage is read from."""

    #: Coverage of the whole UTC hours ``[start, end)`` (both hour starts, before ``recent_from``).
    hours: Reader
    #: The segments intersecting ``[start, end)`` (at or after ``recent_from``), whole.
    recent: Reader
    #: The hour start from which ``recent`` serves.
    recent_from: int

    def read(self, start_ms: int, end_ms: int) -> list[Span]:
        spans: list[Span] = []
        cut = min(max(start_ms, self.recent_from), end_ms)
        if start_ms < cut:
            spans += self.hours(start_ms, cut)
        if cut < end_ms:
            spans += self.recent(cut, end_ms)
        return spans


@dataclass(frozen=True, slots=True)
class Coverage:
    """A window's whole ranges, and what the reads met on the way."""

    ranges: list[Span]
    #: Moments two video files or more cover (merged), from the buckets' ``o`` and the
    #: recent files: a camera clock that jumped back (docs/api.md#ranges).
    overlaps: list[Span]
    #: The longest typical file length read: per quarter hour ``d / n`` of the buckets,
    #: each file's length in the recent part (0 when nothing was read).
    file_ms: int


@dataclass
class CoverageRead:
    """Collects overlaps and file lengths while the readers serve coverage."""

    gap_tolerance_ms: int
    overlaps: list[Span] = field(default_factory=list)
    file_ms: int = 0

    def hours(self, items: Iterable[Mapping[str, Any]]) -> list[Span]:
        """The coverage of bucket items (their ``r``), noting their overlaps and lengths."""
        spans: list[Span] = []
        for item in items:
            spans += unflatten(item.get(RUNS, ()))
            self.overlaps += unflatten(item.get(OVERLAPS, ()))
            for q in range(QUARTERS):
                count = int(item.get(f"n{q}", 0))
                if count > 0:
                    self.file_ms = max(self.file_ms, int(item.get(f"d{q}", 0)) // count)
        return spans

    def files(self, spans: list[Span]) -> list[Span]:
        """The coverage of files read whole, noting their overlaps and lengths."""
        self.overlaps += unflatten(covering(spans, self.gap_tolerance_ms)[1])
        self.file_ms = max([self.file_ms, *(end - start for start, end in spans)])
        return spans

    def result(self, ranges: list[Span]) -> Coverage:
        """The ranges, with the overlaps longer than the tolerance (a file at an hour's edge
        may leave a sliver of a few frames in the next hour's ``o``)."""
        overlaps = merge_ranges(self.overlaps, 0)
        longer = [(s, e) for s, e in overlaps if e - s > self.gap_tolerance_ms]
        return Coverage(ranges, longer, self.file_ms)


def hour_floor(epoch_ms: int) -> int:
    return epoch_ms - epoch_ms % HOUR_MS


def hour_ceil(epoch_ms: int) -> int:
    return -hour_floor(-epoch_ms)


def whole_ranges(
    sources: CoverageSources, start_ms: int, end_ms: int, tolerance_ms: int
) -> list[Span]:
    """The continuous ranges intersecting ``[start_ms, end_ms)``, whole."""
    recent = sources.recent_from
    low, high = hour_floor(start_ms - tolerance_ms), hour_ceil(end_ms + tolerance_ms)
    if low <= recent:
        low -= MARGIN_MS
    if high < recent:
        high = min(high + MARGIN_MS, recent)
    spans = sources.read(low, high)
    step = MARGIN_MS
    while True:
        merged = [r for r in merge_ranges(spans, tolerance_ms) if r[0] < end_ms and r[1] > start_ms]
        if not merged:
            return []
        widen_left = merged[0][0] <= low + tolerance_ms
        widen_right = merged[-1][1] >= high - tolerance_ms
        if not (widen_left or widen_right) or high - low > MAX_RANGE_READ_MS:
            return merged  # beyond the read limit: what was read
        step = min(2 * step, MAX_RANGE_READ_MS)
        if widen_left:
            farther = low - step if low <= recent else low - DAY_MS
            spans += sources.read(farther, low)
            low = farther
        if widen_right:
            farther = high + step if high + step <= recent else max(recent, high + DAY_MS)
            spans += sources.read(high, farther)
            high = farther
