"""Month calendar from hour buckets (docs/invariants.md semantics, docs/api.md response shape).

The expectations are computed independently of ``calendar.py``: from the segment
intervals themselves, with datetime/zoneinfo conversions of their instants
(a segment counts in the local date of its start; it marks every local date
between the one of its first and the one of its last millisecond) — never from
quarters. The module under test only ever sees bucket figures, aggregated here
from the same segments as ``docs/read-model.md`` defines them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from video_index.query.calendar import (
    CalendarDay,
    CalendarError,
    HourFigures,
    hours_to_read,
    month_calendar,
    month_window_ms,
    parse_month,
    parse_zone,
)

QUARTER = 15 * 60 * 1000
HOUR = 60 * 60 * 1000
DAY = 24 * HOUR
MAX_VIDEO_MS = 3_600_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --- independent reference ---------------------------------------------------


@dataclass(frozen=True)
class Segment:
    start: int  # epoch ms
    duration: int  # ms, 1..3,600,000
    size: int  # bytes

    @property
    def end(self) -> int:
        return self.start + self.duration


def ms(moment: datetime) -> int:
    """Epoch ms of an aware datetime (its fold decides for an ambiguous local time)."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


def local_date(instant_ms: int, tz: ZoneInfo) -> date:
    return (EPOCH + timedelta(milliseconds=instant_ms)).astimezone(tz).date()


def month_days(year: int, month: int) -> list[date]:
    day = date(year, month, 1)
    days = []
    while day.month == month:
        days.append(day)
        day += timedelta(days=1)
    return days


def expected_calendar(
    year: int, month: int, tz: ZoneInfo, segments: Iterable[Segment]
) -> list[CalendarDay]:
    """The calendar straight from the intervals [start, end) (local dates never go back
    in the zones used here, so an interval touches the dates from the one of its first
    millisecond to the one of its last)."""
    days = month_days(year, month)
    figures = {day: [False, 0, 0, 0] for day in days}
    for segment in segments:
        first, last = local_date(segment.start, tz), local_date(segment.end - 1, tz)
        for day in days:
            if first <= day <= last:
                figures[day][0] = True
        if first in figures:
            figures[first][1] += 1
            figures[first][2] += segment.size
            figures[first][3] += segment.duration
    return [
        CalendarDay(date=day, has_video=bool(f[0]), segments=f[1], bytes=f[2], video_ms=f[3])
        for day, f in figures.items()
    ]


def aggregate_hours(segments: Iterable[Segment]) -> list[HourFigures]:
    """Bucket items of kind video (docs/read-model.md): per UTC hour and quarter q,
    n/b/d of the segments starting in q, c of those running at q's first instant
    (every quarter start strictly inside (start, end))."""
    buckets: dict[int, list[list[int]]] = {}

    def bucket(instant: int) -> tuple[list[list[int]], int]:
        hour = instant - instant % HOUR
        figures = buckets.setdefault(hour, [[0] * 4 for _ in range(4)])
        return figures, (instant - hour) // QUARTER

    for segment in segments:
        figures, q = bucket(segment.start)
        figures[0][q] += 1
        figures[1][q] += segment.size
        figures[2][q] += segment.duration
        boundary = segment.start - segment.start % QUARTER + QUARTER
        while boundary < segment.end:
            figures, q = bucket(boundary)
            figures[3][q] += 1
            boundary += QUARTER
    return [
        HourFigures(hour, tuple(n), tuple(b), tuple(d), tuple(c))
        for hour, (n, b, d, c) in sorted(buckets.items())
    ]


def first_instant_of(day: date, tz: ZoneInfo) -> int:
    """Reference day start: the first instant whose local date is ``day`` or later,
    by bisection over instants (local dates assumed not to go back nearby)."""
    naive_midnight = (day.toordinal() - date(1970, 1, 1).toordinal()) * DAY
    low, high = naive_midnight - 30 * HOUR, naive_midnight + 30 * HOUR
    assert local_date(low, tz) < day <= local_date(high, tz)
    while high - low > 1:
        middle = (low + high) // 2
        if local_date(middle, tz) >= day:
            high = middle
        else:
            low = middle
    return high


def utc_ms(*args: int) -> int:
    return ms(datetime(*args, tzinfo=UTC))  # type: ignore[arg-type,misc]


def local_ms(tz: ZoneInfo, *args: int, fold: int = 0) -> int:
    return ms(datetime(*args, tzinfo=tz, fold=fold))  # type: ignore[arg-type,misc]


# --- cases ---------------------------------------------------------------------

CASES = [
    ("UTC", 2026, 1),  # 31 days
    ("UTC", 2026, 2),  # 28 days
    ("UTC", 2028, 2),  # 29 days
    ("America/New_York", 2026, 3),  # 2026-03-08 spring forward, 23-hour day
    ("America/New_York", 2026, 11),  # 2026-11-01 fall back, 25-hour day; 30 days
    ("Europe/London", 2026, 3),
    ("Europe/London", 2026, 10),
    ("Asia/Kolkata", 2026, 6),  # +05:30, 30 days
    ("Asia/Kathmandu", 2026, 4),  # +05:45
    ("Asia/Kathmandu", 2028, 2),
    ("Australia/Lord_Howe", 2026, 4),  # 30-minute DST ends: 24.5-hour day
    ("Australia/Lord_Howe", 2026, 10),  # 30-minute DST starts: 23.5-hour day
    ("Pacific/Chatham", 2026, 4),  # +13:45 -> +12:45
    ("America/Santiago", 2026, 9),  # local midnight skipped (2026-09-06)
    ("America/Santiago", 2026, 4),  # fall back at 24:00
    ("Asia/Beirut", 2026, 3),  # local midnight skipped (2026-03-29)
    ("America/Havana", 2026, 3),  # local midnight skipped (2026-03-08)
    ("America/Havana", 2026, 11),  # local midnight repeated (2026-11-01)
]


@functools.cache
def anchors(name: str, year: int, month: int) -> tuple[int, ...]:
    """Instants worth hitting: local midnights (both folds) around the month and the
    offset changes in it, found by scanning quarter hours."""
    tz = ZoneInfo(name)
    points: set[int] = set()
    day = date(year, month, 1) - timedelta(days=1)
    while day <= date(year, month, 28) + timedelta(days=5):
        for fold in (0, 1):
            points.add(local_ms(tz, day.year, day.month, day.day, fold=fold))
        day += timedelta(days=1)
    scan = utc_ms(year, month, 1) - DAY
    previous = (EPOCH + timedelta(milliseconds=scan)).astimezone(tz).utcoffset()
    while scan < utc_ms(year, month, 28) + 5 * DAY:
        scan += QUARTER
        offset = (EPOCH + timedelta(milliseconds=scan)).astimezone(tz).utcoffset()
        if offset != previous:
            points.add(scan)
        previous = offset
    return tuple(sorted(points))


def segments_around(name: str, year: int, month: int) -> st.SearchStrategy[list[Segment]]:
    """Random video segments of the month and its edges, many of them at or across
    local midnights and DST changes."""
    durations = st.one_of(
        st.integers(1, MAX_VIDEO_MS), st.sampled_from([1, QUARTER - 1, QUARTER, MAX_VIDEO_MS])
    )
    sizes = st.integers(0, 10**9)
    low = utc_ms(year, month, 1) - 16 * HOUR
    high = utc_ms(year, month, 28) + 4 * DAY + 16 * HOUR
    anywhere = st.builds(Segment, st.integers(low, high), durations, sizes)
    points = st.sampled_from(anchors(name, year, month))
    offsets = st.one_of(
        st.integers(-MAX_VIDEO_MS, MAX_VIDEO_MS), st.sampled_from([0, 1, -1, QUARTER, -QUARTER])
    )
    near_anchor = st.builds(
        lambda point, offset, duration, size: Segment(point + offset, duration, size),
        points,
        offsets,
        durations,
        sizes,
    )
    ending_at_anchor = st.builds(
        lambda point, duration, size: Segment(point - duration, duration, size),
        points,
        durations,
        sizes,
    )
    return st.lists(st.one_of(anywhere, near_anchor, ending_at_anchor), max_size=40)


# --- the property ------------------------------------------------------------


@pytest.mark.parametrize(("name", "year", "month"), CASES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_calendar_equals_the_one_computed_from_the_intervals(
    name: str, year: int, month: int, data: st.DataObject
) -> None:
    # Given random video segments around the month, many at local midnights and DST changes
    tz = parse_zone(name)
    segments = data.draw(segments_around(name, year, month), label="segments")
    hours = aggregate_hours(segments)

    # When the calendar is computed from their hour buckets
    days = month_calendar(year, month, tz, hours)

    # Then it equals the calendar computed from the intervals themselves
    assert days == expected_calendar(year, month, tz, segments)
    # And the hours of hours_to_read are all it needs
    first, last = hours_to_read(year, month, tz)
    needed = [hour for hour in hours if first <= hour.hour_start_ms <= last]
    assert month_calendar(year, month, tz, needed) == days
    # And the input order does not matter
    assert month_calendar(year, month, tz, reversed(hours)) == days


@pytest.mark.parametrize(("name", "year", "month"), CASES)
def test_every_day_spans_the_local_midnights(name: str, year: int, month: int) -> None:
    # Given one segment starting in every quarter hour around the month
    tz = parse_zone(name)
    low, high = utc_ms(year, month, 1) - DAY, utc_ms(year, month, 28) + 5 * DAY
    hours = [
        HourFigures(hour, (1, 1, 1, 1), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0))
        for hour in range(low, high, HOUR)
    ]

    # When the calendar and the window are computed
    days = month_calendar(year, month, tz, hours)
    window = month_window_ms(year, month, tz)

    # Then each day holds the quarters between its local midnight and the next one
    starts = [first_instant_of(day, tz) for day in month_days(year, month)]
    starts.append(first_instant_of(month_days(year, month)[-1] + timedelta(days=1), tz))
    assert window == (starts[0], starts[-1])
    assert [day.segments for day in days] == [
        (end - start) // QUARTER for start, end in itertools.pairwise(starts)
    ]
    assert [day.date for day in days] == month_days(year, month)
    # And the query range covers exactly the hours of the window's quarters
    assert hours_to_read(year, month, tz) == (
        starts[0] - starts[0] % HOUR,
        (starts[-1] - 1) - (starts[-1] - 1) % HOUR,
    )


# --- days of unusual length ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "day", "hours", "start_utc"),
    [
        ("America/New_York", date(2026, 3, 8), 23, (2026, 3, 8, 5)),
        ("America/New_York", date(2026, 11, 1), 25, (2026, 11, 1, 4)),
        ("Europe/London", date(2026, 3, 29), 23, (2026, 3, 29, 0)),
        ("Europe/London", date(2026, 10, 25), 25, (2026, 10, 24, 23)),
        ("Australia/Lord_Howe", date(2026, 4, 5), 24.5, (2026, 4, 4, 13)),
        ("Australia/Lord_Howe", date(2026, 10, 4), 23.5, (2026, 10, 3, 13, 30)),
        ("Asia/Kathmandu", date(2026, 4, 10), 24, (2026, 4, 9, 18, 15)),
        ("Asia/Kolkata", date(2026, 6, 10), 24, (2026, 6, 9, 18, 30)),
        # skipped midnight: the day starts at the change (local 01:00)
        ("America/Santiago", date(2026, 9, 6), 23, (2026, 9, 6, 4)),
        ("Asia/Beirut", date(2026, 3, 29), 23, (2026, 3, 28, 22)),
        ("America/Havana", date(2026, 3, 8), 23, (2026, 3, 8, 5)),
        # fall back at 24:00: the day before gets the repeated hour
        ("America/Santiago", date(2026, 4, 4), 25, (2026, 4, 4, 3)),
        # repeated midnight: the day starts at its first occurrence
        ("America/Havana", date(2026, 11, 1), 25, (2026, 11, 1, 4)),
    ],
)
def test_day_length_and_start(
    name: str, day: date, hours: float, start_utc: tuple[int, ...]
) -> None:
    # Given a segment starting in every quarter hour of the month
    tz = parse_zone(name)
    low = utc_ms(day.year, day.month, 1) - DAY
    figures = [
        HourFigures(hour, (1, 1, 1, 1), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0))
        for hour in range(low, low + 33 * DAY, HOUR)
    ]
    # And one segment of one quarter starting at the expected first instant of the day
    start = utc_ms(*start_utc)
    marker = aggregate_hours([Segment(start, QUARTER, 7)])

    # When the calendar of the month is computed
    days = month_calendar(day.year, day.month, tz, [*figures, *marker])

    # Then the day has as many quarters as its hours
    (entry,) = [d for d in days if d.date == day]
    assert entry.segments == int(hours * 4) + 1
    # And the marker segment counts in that day, not in the one before
    assert entry.bytes == 7
    assert local_date(start, tz) == day
    assert local_date(start - 1, tz) == day - timedelta(days=1)


# --- examples ----------------------------------------------------------------


def day_of(days: Sequence[CalendarDay], day: date) -> CalendarDay:
    (entry,) = [d for d in days if d.date == day]
    return entry


def test_segment_ending_exactly_at_local_midnight_does_not_mark_the_next_day() -> None:
    # Given a segment of 10 minutes ending exactly at 2026-03-09 00:00 New York time
    tz = parse_zone("America/New_York")
    midnight = local_ms(tz, 2026, 3, 9)
    segment = Segment(midnight - 10 * 60_000, 10 * 60_000, 1000)

    # When the calendar of March is computed
    days = month_calendar(2026, 3, tz, aggregate_hours([segment]))

    # Then only the 8th has video
    assert day_of(days, date(2026, 3, 8)) == CalendarDay(date(2026, 3, 8), True, 1, 1000, 600_000)
    assert day_of(days, date(2026, 3, 9)) == CalendarDay(date(2026, 3, 9), False, 0, 0, 0)


def test_segment_starting_exactly_at_local_midnight_belongs_to_that_day() -> None:
    # Given a 1 ms segment starting exactly at 2026-06-10 00:00 in Kathmandu (+05:45)
    tz = parse_zone("Asia/Kathmandu")
    segment = Segment(local_ms(tz, 2026, 6, 10), 1, 5)

    # When the calendar of June is computed
    days = month_calendar(2026, 6, tz, aggregate_hours([segment]))

    # Then the 10th has it and the 9th is empty
    assert day_of(days, date(2026, 6, 10)) == CalendarDay(date(2026, 6, 10), True, 1, 5, 1)
    assert not day_of(days, date(2026, 6, 9)).has_video


def test_segment_crossing_local_midnight_marks_both_days_counts_in_its_start_day() -> None:
    # Given a 20-minute segment from 23:50 on 2026-06-10 in Kolkata (+05:30)
    tz = parse_zone("Asia/Kolkata")
    segment = Segment(local_ms(tz, 2026, 6, 10, 23, 50), 20 * 60_000, 300)

    # When the calendar of June is computed
    days = month_calendar(2026, 6, tz, aggregate_hours([segment]))

    # Then both days have video, and only the 10th counts it
    assert day_of(days, date(2026, 6, 10)) == CalendarDay(
        date(2026, 6, 10), True, 1, 300, 1_200_000
    )
    assert day_of(days, date(2026, 6, 11)) == CalendarDay(date(2026, 6, 11), True, 0, 0, 0)
    assert sum(d.has_video for d in days) == 2


def test_segment_from_the_previous_month_marks_the_first_day_only() -> None:
    # Given an hour-long segment from 2026-09-30 23:30 UTC
    tz = parse_zone("UTC")
    segment = Segment(utc_ms(2026, 9, 30, 23, 30), MAX_VIDEO_MS, 10)

    # When the calendar of October is computed
    days = month_calendar(2026, 10, tz, aggregate_hours([segment]))

    # Then October 1st has video and counts nothing
    assert days[0] == CalendarDay(date(2026, 10, 1), True, 0, 0, 0)
    assert not any(d.has_video for d in days[1:])


def test_segment_crossing_a_skipped_midnight() -> None:
    # Given a 45-minute segment from 23:30 (-04) on 2026-09-05 in Santiago, where the
    # clocks jump from 24:00 to 01:00 (-03)
    tz = parse_zone("America/Santiago")
    segment = Segment(utc_ms(2026, 9, 6, 3, 30), 45 * 60_000, 9)

    # When the calendar of September is computed
    days = month_calendar(2026, 9, tz, aggregate_hours([segment]))

    # Then it counts on the 5th and marks the 6th too
    assert day_of(days, date(2026, 9, 5)) == CalendarDay(date(2026, 9, 5), True, 1, 9, 2_700_000)
    assert day_of(days, date(2026, 9, 6)) == CalendarDay(date(2026, 9, 6), True, 0, 0, 0)


def test_repeated_midnight_starts_the_day_at_its_first_occurrence() -> None:
    # Given segments at both occurrences of 2026-11-01 00:30 in Havana (clocks go back
    # from 01:00 -04 to 00:00 -05) and one at 23:59 on October 31
    tz = parse_zone("America/Havana")
    first = Segment(local_ms(tz, 2026, 11, 1, 0, 30, fold=0), 1000, 1)
    second = Segment(local_ms(tz, 2026, 11, 1, 0, 30, fold=1), 1000, 2)
    before = Segment(local_ms(tz, 2026, 10, 31, 23, 59), 1000, 4)
    assert second.start - first.start == HOUR
    hours = aggregate_hours([first, second, before])

    # When the calendars of October and November are computed
    october = month_calendar(2026, 10, tz, hours)
    november = month_calendar(2026, 11, tz, hours)

    # Then both 00:30 segments count on November 1st and the 23:59 one on October 31st
    assert november[0] == CalendarDay(date(2026, 11, 1), True, 2, 3, 2000)
    assert october[-1] == CalendarDay(date(2026, 10, 31), True, 1, 4, 1000)


def test_a_date_the_zone_skips_is_listed_empty() -> None:
    # Given Samoa skipping 2011-12-30 (from 12-29 24:00 -10 to 12-31 00:00 +14) and a
    # segment running across the change
    tz = parse_zone("Pacific/Apia")
    change = utc_ms(2011, 12, 30, 10)
    segment = Segment(change - QUARTER, 2 * QUARTER, 3)

    # When the calendar of December 2011 is computed
    days = month_calendar(2011, 12, tz, aggregate_hours([segment]))

    # Then all 31 dates are listed, the 30th empty, the 29th and 31st with video
    assert len(days) == 31
    assert day_of(days, date(2011, 12, 29)) == CalendarDay(
        date(2011, 12, 29), True, 1, 3, QUARTER * 2
    )
    assert day_of(days, date(2011, 12, 30)) == CalendarDay(date(2011, 12, 30), False, 0, 0, 0)
    assert day_of(days, date(2011, 12, 31)) == CalendarDay(date(2011, 12, 31), True, 0, 0, 0)


@pytest.mark.parametrize(
    ("year", "month", "length"), [(2026, 2, 28), (2028, 2, 29), (2026, 4, 30), (2026, 12, 31)]
)
def test_empty_month_lists_every_day_without_video(year: int, month: int, length: int) -> None:
    # Given no bucket items
    tz = parse_zone("Europe/London")

    # When the calendar is computed
    days = month_calendar(year, month, tz, [])

    # Then every day of the month is listed, in order, without video
    assert [d.date for d in days] == [date(year, month, i) for i in range(1, length + 1)]
    assert all(d == CalendarDay(d.date, False, 0, 0, 0) for d in days)


def test_items_of_the_same_hour_add_up() -> None:
    # Given the same hour's figures in two items
    tz = parse_zone("UTC")
    hour = utc_ms(2026, 5, 4, 12)
    item = HourFigures(hour, (1, 0, 0, 0), (10, 0, 0, 0), (100, 0, 0, 0), (0, 0, 0, 0))

    # When the calendar is computed
    days = month_calendar(2026, 5, tz, [item, item])

    # Then both count
    assert days[3] == CalendarDay(date(2026, 5, 4), True, 2, 20, 200)


def test_coverage_inside_a_day_does_not_mark_it_alone() -> None:
    # Given c > 0 in a quarter that is not the first one of a day (no segment starts
    # in the day: such figures cannot come from real segments, and only c at the
    # day's first instant says a segment ran into it)
    tz = parse_zone("UTC")
    item = HourFigures(
        utc_ms(2026, 5, 4, 12), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (1, 1, 1, 1)
    )

    # When the calendar is computed
    days = month_calendar(2026, 5, tz, [item])

    # Then no day has video
    assert not any(d.has_video for d in days)


def test_hour_start_must_be_a_utc_hour() -> None:
    # Given an item whose hour start is not on a UTC hour
    tz = parse_zone("UTC")
    item = HourFigures(utc_ms(2026, 5, 4, 12) + QUARTER, (1, 0, 0, 0), (0,) * 4, (0,) * 4, (0,) * 4)

    # When / Then the calendar refuses it
    with pytest.raises(ValueError, match="hour_start_ms"):
        month_calendar(2026, 5, tz, [item])


# --- historic offsets and extreme months -----------------------------------------


@pytest.mark.parametrize(
    ("name", "year", "month"),
    [
        ("Europe/Amsterdam", 1890, 1),  # local mean time +00:19:32
        ("Europe/Amsterdam", 1930, 6),  # Amsterdam time +00:19:32
        ("Africa/Monrovia", 1971, 12),  # -00:44:30 until 1972-01-07
        ("Africa/Monrovia", 1972, 1),
    ],
)
def test_month_with_offsets_off_the_quarter_hours_is_refused(
    name: str, year: int, month: int
) -> None:
    # Given a zone whose local midnights in that month are not on UTC quarter hours
    tz = parse_zone(name)

    # When / Then every calendar function refuses it, naming tz
    for call in (month_window_ms, hours_to_read):
        with pytest.raises(CalendarError, match=r"^tz .*predates supported offsets"):
            call(year, month, tz)
    with pytest.raises(CalendarError, match=r"^tz .*predates supported offsets"):
        month_calendar(year, month, tz, [])


def test_first_month_on_quarter_hours_is_accepted() -> None:
    # Given Liberia's first whole month on a UTC offset of 0
    tz = parse_zone("Africa/Monrovia")

    # When / Then its calendar is computed
    assert month_window_ms(1972, 2, tz) == (utc_ms(1972, 2, 1), utc_ms(1972, 3, 1))
    assert len(month_calendar(1972, 2, tz, [])) == 29


def test_last_supported_month() -> None:
    # Given December 9999 twelve hours behind UTC (its end is in year 10000 UTC)
    tz = parse_zone("Etc/GMT+12")

    # When the window and the hours to read are computed
    start, end = month_window_ms(9999, 12, tz)
    first, last = hours_to_read(9999, 12, tz)

    # Then they follow the offset, and the query stops at the last hour a key can name
    assert (start, end) == (utc_ms(9999, 12, 1, 12), utc_ms(9999, 12, 31, 12) + DAY)
    assert (first, last) == (utc_ms(9999, 12, 1, 12), utc_ms(9999, 12, 31, 23))
    assert len(month_calendar(9999, 12, tz, [])) == 31


def test_first_supported_month_east_of_utc() -> None:
    # Given January 1970 fourteen hours ahead of UTC (it starts before the epoch)
    tz = parse_zone("Etc/GMT-14")
    segment = Segment(utc_ms(1969, 12, 31, 10), 1, 1)

    # When the calendar is computed
    days = month_calendar(1970, 1, tz, aggregate_hours([segment]))

    # Then the segment at the local first midnight counts on January 1st
    assert month_window_ms(1970, 1, tz)[0] == utc_ms(1969, 12, 31, 10)
    assert days[0] == CalendarDay(date(1970, 1, 1), True, 1, 1, 1)


ZONES = sorted(available_timezones() - {"localtime", "posixrules"})


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(ZONES),
    year=st.integers(1970, 2040),
    month=st.integers(1, 12),
)
def test_window_of_any_zone_and_month(name: str, year: int, month: int) -> None:
    # Given any IANA zone and month
    tz = parse_zone(name)
    start = first_instant_of(date(year, month, 1), tz)
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    end = first_instant_of(following, tz)

    # When the window is computed
    try:
        window = month_window_ms(year, month, tz)
    except CalendarError as error:
        # Then it is refused only for offsets off the quarter hours
        assert str(error).startswith("tz ")
        assert "predates supported offsets" in str(error)
        assert (
            start % QUARTER
            or end % QUARTER
            or any(
                first_instant_of(date(year, month, i), tz) % QUARTER
                for i in range(2, len(month_days(year, month)) + 1)
            )
        )
        return
    # Then it spans the local midnights found by bisection
    assert window == (start, end)


# --- parameters ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01", (2026, 1)),
        ("1970-01", (1970, 1)),
        ("9999-12", (9999, 12)),
        ("2028-02", (2028, 2)),
    ],
)
def test_parse_month_accepts_year_and_month(text: str, expected: tuple[int, int]) -> None:
    # Given / When / Then
    assert parse_month(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-13",
        "2026-00",
        "2026-1",
        "26-01",
        "2026-01-01",
        "",
        " 2026-01",
        "2026-01\n",
        "2026/01",
        "202６-01",  # a non-ASCII digit
        "1969-12",
        "0000-01",
        "+2026-01",
        "2026-0x",
    ],
)
def test_parse_month_rejects(text: str) -> None:
    # Given a text that is not YYYY-MM of a supported month
    # When / Then it is refused with a message naming the parameter
    with pytest.raises(CalendarError, match=r"^month must be YYYY-MM"):
        parse_month(text)


@pytest.mark.parametrize(
    "name",
    [
        "UTC",
        "America/New_York",
        "Asia/Kathmandu",
        "Australia/Lord_Howe",
        "America/Argentina/Buenos_Aires",
        "Etc/GMT+5",
        "Etc/GMT-14",
    ],
)
def test_parse_zone_accepts_iana_names(name: str) -> None:
    # Given / When / Then
    assert parse_zone(name) == ZoneInfo(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Mars/Base",
        "../etc/passwd",
        "/etc/passwd",
        "Europe/../Europe/Berlin",
        "./UTC",
        "UTC+5",
        "America",
        "america/new_york",
        "Europe/Berlin ",
        "Europe\\Berlin",
        "Europe/Berlin\x00",
        "localtime",
        "posixrules",
        "posix/Europe/Berlin",
        "right/UTC",
        "Europe/" + "B" * 300,
    ],
)
def test_parse_zone_rejects(name: str) -> None:
    # Given a name that is not an IANA time zone
    # When / Then it is refused with a message naming the parameter
    with pytest.raises(CalendarError, match=r"^tz .* is not an IANA time zone"):
        parse_zone(name)


def test_calendar_error_is_a_value_error() -> None:
    # Given / When / Then: callers may treat it as any bad value
    assert issubclass(CalendarError, ValueError)
