"""Whole ranges from hour coverage and recent segments (query/ranges.py), against a reference
that merges the segments themselves.

The hour coverage is recounted here from the segments as docs/read-model.md defines
``r`` (segments clipped to each UTC hour, merged with the tolerance); the recent part
is the segments intersecting what is asked. Whatever the hour the recent part starts
at, the answer must be the reference's: every whole range that intersects the window.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.query.ranges import CoverageSources, whole_ranges

HOUR = 3_600_000
DAY = 24 * HOUR
ORIGIN = 1_795_000_000_000 - 1_795_000_000_000 % DAY  # a UTC midnight in 2026
#: Offsets from an hour's start around the tolerances drawn.
EDGES = (-5001, -5000, -1001, -1000, -1, 0, 1, 1000, 1001, 5000, 5001)


def reference(segments: list[tuple[int, int]], tolerance: int) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, end in sorted(segments):
        if out and start <= out[-1][1] + tolerance:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def hour_coverage(segments: list[tuple[int, int]], tolerance: int) -> dict[int, list[int]]:
    """Each hour's ``r``: its pieces of the segments, merged, flattened."""
    pieces: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for start, end in segments:
        hour = start - start % HOUR
        while hour < end:
            pieces[hour].append((max(start, hour), min(end, hour + HOUR)))
            hour += HOUR
    return {
        hour: [edge for run in reference(spans, tolerance) for edge in run]
        for hour, spans in pieces.items()
    }


class Sources:
    """Readers over one set of segments, checking how query/ranges.py calls them."""

    def __init__(self, segments: list[tuple[int, int]], tolerance: int, recent_from: int) -> None:
        self.segments = segments
        self.coverage = hour_coverage(segments, tolerance)
        self.recent_from = recent_from
        self.reads = 0

    def hours(self, low: int, high: int) -> Iterator[tuple[int, int]]:
        assert low % HOUR == 0 and high % HOUR == 0 and low < high <= self.recent_from
        self.reads += 1
        for hour in range(low, high, HOUR):
            edges = self.coverage.get(hour, [])
            yield from zip(edges[0::2], edges[1::2], strict=True)

    def recent(self, low: int, high: int) -> Iterator[tuple[int, int]]:
        assert self.recent_from <= low < high
        self.reads += 1
        yield from ((a, b) for a, b in self.segments if a < high and b > low)

    def of(self) -> CoverageSources:
        return CoverageSources(self.hours, self.recent, self.recent_from)


@st.composite
def recordings(draw: st.DrawFn) -> list[tuple[int, int]]:
    """Stretches of segments over about ten days: long runs, short gaps, long gaps."""
    segments: list[tuple[int, int]] = []
    at = ORIGIN + draw(st.integers(0, 2 * DAY))
    for _ in range(draw(st.integers(0, 8))):
        at += draw(st.sampled_from([0, 1, 999, 1000, 1001, 5000, HOUR, DAY // 2]))
        at += draw(st.integers(0, 3 * HOUR))
        if draw(st.booleans()):  # a stretch starting or ending close to an hour's start
            at += -at % HOUR + draw(st.sampled_from(EDGES))
        length = draw(st.sampled_from([1, 10_000, 600_000, HOUR]))
        for _ in range(draw(st.integers(1, 40))):
            segments.append((at, at + length))
            at += length + draw(st.sampled_from([-5_000, 0, 20, 1000, 1001, 60_000]))
        if draw(st.booleans()):
            end = at - at % HOUR + draw(st.sampled_from(EDGES))
            segments.append((end - 10_000, end))
    return segments


def instants(low: int, high: int) -> st.SearchStrategy[int]:
    """Any instant, or one close to an hour's start."""
    hours = st.integers(low // HOUR, high // HOUR).map(lambda h: h * HOUR)
    near = st.tuples(hours, st.sampled_from(EDGES)).map(sum)
    return st.one_of(st.integers(low, high), near.filter(lambda t: low <= t <= high))


@settings(max_examples=600, deadline=None)
@given(
    segments=recordings(),
    tolerance=st.sampled_from([0, 1000, 5000]),
    start=instants(0, 8 * DAY),
    length=st.one_of(st.integers(1, 3 * DAY), st.sampled_from([HOUR, DAY, DAY + 1, DAY - 1])),
    recent_hour=st.integers(-2 * 24, 14 * 24),
)
def test_whole_ranges_equal_those_of_the_segments(
    segments: list[tuple[int, int]], tolerance: int, start: int, length: int, recent_hour: int
) -> None:
    # Given a recording, a window, and the hour from which the recent part is read
    window = (ORIGIN + start, ORIGIN + start + length)
    sources = Sources(segments, tolerance, ORIGIN + recent_hour * HOUR)
    # When its ranges are asked for
    answer = whole_ranges(sources.of(), *window, tolerance)
    # Then they are the segments' own ranges that intersect the window, whole
    expected = [r for r in reference(segments, tolerance) if r[0] < window[1] and r[1] > window[0]]
    assert answer == expected


def test_a_day_whose_ranges_end_within_a_day_of_it_is_one_read() -> None:
    # Given recording from noon before to noon after the day, with a gap at its noon
    day = ORIGIN + 3 * DAY
    segments = [(t, t + 10_000) for t in range(day - DAY // 2, day + DAY // 2, 10_000)]
    segments += [
        (t, t + 10_000) for t in range(day + DAY // 2 + 60_000, day + 3 * DAY // 2, 10_000)
    ]
    sources = Sources(segments, 1000, day + 10 * DAY)
    # When the day's ranges are asked for
    answer = whole_ranges(sources.of(), day, day + DAY, 1000)
    # Then both come back whole, from one read of the hours
    assert answer == [
        (day - DAY // 2, day + DAY // 2),
        (day + DAY // 2 + 60_000, day + 3 * DAY // 2),
    ]
    assert sources.reads == 1


def test_a_range_running_for_weeks_takes_a_few_reads_each_side() -> None:
    # Given thirty days without a gap around the asked day
    day = ORIGIN + 15 * DAY
    segments = [(t, t + HOUR) for t in range(day - 15 * DAY, day + 15 * DAY, HOUR)]
    sources = Sources(segments, 1000, day + 40 * DAY)
    # When the day's ranges are asked for
    answer = whole_ranges(sources.of(), day, day + DAY, 1000)
    # Then the whole range, each side followed twice as far each time
    assert answer == [(day - 15 * DAY, day + 15 * DAY)]
    assert sources.reads <= 1 + 2 * 4


def stretch(start: int, end: int, length: int = 600_000) -> list[tuple[int, int]]:
    """Back-to-back segments covering ``[start, end)`` exactly."""
    return [(t, min(t + length, end)) for t in range(start, end, length)]


@settings(max_examples=300, deadline=None)
@given(
    a=st.sampled_from(EDGES),
    b=st.sampled_from(EDGES),
    tolerance=st.sampled_from([0, 1000, 5000]),
    widenings=st.integers(0, 2),
    offset=st.integers(0, HOUR - 1),
    left=st.booleans(),
)
def test_a_gap_at_the_edge_of_a_read_is_seen(
    a: int, b: int, tolerance: int, widenings: int, offset: int, left: bool
) -> None:
    # Given recording that stops at a + and starts again at b + the start of an hour H
    # which is exactly where the first read (or its first or second widening) ends
    edge = ORIGIN + 20 * DAY
    reach = DAY + sum(2 ** (k + 1) * DAY for k in range(widenings))  # from the window's hour
    if left:
        start = edge + reach + tolerance + offset
        end = start + HOUR
        segments = stretch(edge - 2 * HOUR, edge + a) + stretch(edge + b, end + HOUR)
    else:
        end = edge - reach - tolerance - offset
        start = end - HOUR
        segments = stretch(start - HOUR, edge + a) + stretch(edge + b, edge + 2 * HOUR)
    sources = Sources(segments, tolerance, edge + 60 * DAY)
    # When the window's ranges are asked for
    answer = whole_ranges(sources.of(), start, end, tolerance)
    # Then they are the segments' own: joined across H exactly when the gap allows
    expected = [r for r in reference(segments, tolerance) if r[0] < end and r[1] > start]
    assert answer == expected


@settings(max_examples=300, deadline=None)
@given(
    a=st.sampled_from(EDGES),
    b=st.sampled_from(EDGES),
    tolerance=st.sampled_from([0, 1000, 5000]),
    start=instants(-3 * HOUR, HOUR),
    length=st.integers(1, 4 * HOUR),
)
def test_a_gap_where_the_recent_part_begins_is_seen(
    a: int, b: int, tolerance: int, start: int, length: int
) -> None:
    # Given recording that stops at a + and starts again at b + the hour the recent
    # part is read from
    cut = ORIGIN + 20 * DAY
    segments = stretch(cut - 2 * HOUR, cut + a) + stretch(cut + b, cut + 2 * HOUR)
    sources = Sources(segments, tolerance, cut)
    # When the ranges of a window around it are asked for
    window = (cut + start, cut + start + length)
    answer = whole_ranges(sources.of(), *window, tolerance)
    # Then they are the segments' own
    expected = [r for r in reference(segments, tolerance) if r[0] < window[1] and r[1] > window[0]]
    assert answer == expected
