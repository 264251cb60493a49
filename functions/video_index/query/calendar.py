"""Month calendar of one device in any time zone, from hour bucket figures (docs/api.md).

Pure code: no AWS, no I/O beyond the time zone database that :mod:`zoneinfo` reads.

The read model keeps, per device and UTC hour, the figures of each quarter hour
``q`` (``docs/read-model.md``, bucket items): ``n`` segments starting in the
quarter, their bytes ``b`` and duration ``d``, and ``c`` the video segments that
started earlier and still run at the quarter's first instant. Every local
midnight of every current zone lies on a UTC quarter-hour boundary (offsets are
multiples of 15 minutes), so a local day ``D = [D_start, D_end)`` is a whole
number of quarters and

* its figures are the sums of ``n``/``b``/``d`` over the quarters starting in D;
* it has video when one of those quarters has ``n > 0`` (a segment starts in D)
  or the quarter starting at ``D_start`` has ``c > 0`` (a segment started before
  D and still runs at D's first instant; one ending exactly at ``D_start`` does
  not count, the intervals being half-open).

``D_start`` is the first instant whose local date is D or later: the local
midnight when it exists once, the earliest of the two when a DST change repeats
it, and the instant of the change when a DST change skips it (e.g.
America/Santiago, Asia/Beirut, America/Havana). A local date that a zone skips
entirely (Pacific/Apia, 2011-12-30) is an empty day: listed, never with video.
"""

from __future__ import annotations

import datetime
import functools
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from video_index.core.errors import BadInput
from video_index.core.timeunits import DAY_MS, HOUR_MS, QUARTER_MS, QUARTERS

MIN_YEAR: Final = 1970
MAX_YEAR: Final = 9999
MAX_ZONE_NAME: Final = 64

_MONTH_TEXT: Final = re.compile(r"([0-9]{4})-([0-9]{2})")
# IANA names: components of letters, digits, "_", "-", "+", separated by "/";
# no component may start with "." or "-" (no "..", no absolute or hidden paths).
_ZONE_TEXT: Final = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+][A-Za-z0-9_+\-]*)*")
# Present in some time zone directories but not IANA zone names.
_NOT_ZONES: Final = frozenset({"localtime", "posixrules"})
_EPOCH_ORDINAL: Final = datetime.date(1970, 1, 1).toordinal()
_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_ONE_MS: Final = datetime.timedelta(milliseconds=1)
_LAST_ORDINAL: Final = datetime.date.max.toordinal()
# The last UTC hour a key can name (its folders have four-digit years).
_LAST_HOUR_MS: Final = (_LAST_ORDINAL + 1 - _EPOCH_ORDINAL) * DAY_MS - HOUR_MS


@dataclass(frozen=True, slots=True)
class HourFigures:
    """One bucket item of kind video: figures of one UTC hour, per quarter hour q = 0..3."""

    hour_start_ms: int  # epoch ms of the UTC hour start
    n: tuple[int, int, int, int]  # segments whose start lies in quarter q
    b: tuple[int, int, int, int]  # their bytes
    d: tuple[int, int, int, int]  # their duration in ms
    # video segments that started BEFORE quarter q and still run at q's first instant
    c: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class CalendarDay:
    date: datetime.date
    has_video: bool
    segments: int
    bytes: int
    video_ms: int


class CalendarError(BadInput):
    """A bad calendar parameter; the message starts with the parameter's name."""

    def __init__(self, message: str) -> None:
        super().__init__("month" if message.startswith("month") else "tz", message)

    def __str__(self) -> str:
        return self.message


def _shown(text: object) -> str:
    """The offending value for an error message, cut short."""
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def parse_month(text: str) -> tuple[int, int]:
    """``(year, month)`` of ``YYYY-MM`` (years 1970..9999); CalendarError otherwise."""
    match = _MONTH_TEXT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise CalendarError(f"month must be YYYY-MM, got {_shown(text)}")
    year, month = int(match[1]), int(match[2])
    if not 1 <= month <= 12:
        raise CalendarError(f"month must be YYYY-MM with MM in 01..12, got {_shown(text)}")
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise CalendarError(
            f"month must be YYYY-MM with YYYY in {MIN_YEAR}..{MAX_YEAR}, got {_shown(text)}"
        )
    return year, month


@functools.cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones()) - _NOT_ZONES


def parse_zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (e.g. ``Europe/Berlin``); CalendarError otherwise."""
    if (
        not isinstance(name, str)
        or len(name) > MAX_ZONE_NAME
        or _ZONE_TEXT.fullmatch(name) is None
        or name not in _zone_names()
    ):
        raise CalendarError(f"tz {_shown(name)} is not an IANA time zone name")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        raise CalendarError(f"tz {_shown(name)} is not an IANA time zone name") from error


# --- local day boundaries -----------------------------------------------------


def _offset_ms(tz: ZoneInfo, wall: datetime.datetime) -> int:
    """UTC offset in ms of the naive local ``wall`` time (its ``fold`` decides)."""
    offset = tz.utcoffset(wall)
    if offset is None:  # pragma: no cover - ZoneInfo always answers
        raise CalendarError(f"tz {_shown(str(tz))} has no UTC offset")
    return offset // _ONE_MS


def _local_wall_ms(tz: ZoneInfo, instant_ms: int) -> int:
    """The local wall time of an instant, as ms since 1970-01-01T00:00 local."""
    moment = _EPOCH + datetime.timedelta(milliseconds=instant_ms)
    offset = tz.fromutc(moment.replace(tzinfo=tz)).utcoffset()
    assert offset is not None
    return instant_ms + offset // _ONE_MS


def _day_start_ms(tz: ZoneInfo, ordinal: int) -> int:
    """First instant (epoch ms) whose local date is the date ``ordinal`` or later."""
    midnight_wall = (ordinal - _EPOCH_ORDINAL) * DAY_MS
    if ordinal > _LAST_ORDINAL:
        # 10000-01-01 (end of 9999-12): not a datetime; take the offset of the day
        # before's last instant (no zone changes offset at a new year's midnight).
        last = datetime.datetime.combine(datetime.date.max, datetime.time.max)
        return midnight_wall - _offset_ms(tz, last)
    wall = datetime.datetime.combine(datetime.date.fromordinal(ordinal), datetime.time())
    before = _offset_ms(tz, wall)  # fold=0: the offset before a transition
    after = _offset_ms(tz, wall.replace(fold=1))  # fold=1: the offset after it
    if before >= after:
        # Exists once (equal offsets) or twice (repeated by a fall back): the
        # earliest instant has the larger offset.
        return midnight_wall - before
    # Skipped by a spring forward: the first instant of the date is the change
    # itself, in (midnight_wall - after, midnight_wall - before]. Search it.
    low, high = midnight_wall - after, midnight_wall - before  # wall(low) < midnight <= wall(high)
    while high - low > 1:
        middle = (low + high) // 2
        if _local_wall_ms(tz, middle) >= midnight_wall:
            high = middle
        else:
            low = middle
    return high


def _zone_label(tz: ZoneInfo) -> str:
    return tz.key if tz.key is not None else str(tz)


def _day_starts_ms(year: int, month: int, tz: ZoneInfo) -> tuple[datetime.date, list[int]]:
    """First date of the month and the starts of its days plus the next month's first.

    Raises CalendarError when a day start is not on a UTC quarter hour.
    """
    if not (1 <= month <= 12 and 1 <= year <= MAX_YEAR):
        raise CalendarError(f"month {year:04d}-{month:02d} is out of range")
    first = datetime.date(year, month, 1)
    if month < 12:
        next_first = datetime.date(year, month + 1, 1).toordinal()
    else:  # 10000-01-01 is no date: its ordinal still is the one after 9999-12-31
        next_first = datetime.date(year, 12, 31).toordinal() + 1
    days = next_first - first.toordinal()
    try:
        starts = [_day_start_ms(tz, first.toordinal() + i) for i in range(days + 1)]
    except OverflowError as error:
        raise CalendarError(f"month {year:04d}-{month:02d} is out of range") from error
    for i, start in enumerate(starts):
        if start % QUARTER_MS:
            date = datetime.date.fromordinal(min(first.toordinal() + i, _LAST_ORDINAL))
            raise CalendarError(
                f"tz {_zone_label(tz)!r}: month {year:04d}-{month:02d} predates supported "
                f"offsets (local day {date.isoformat()} does not start on a UTC quarter hour)"
            )
    return first, starts


def month_window_ms(year: int, month: int, tz: ZoneInfo) -> tuple[int, int]:
    """``[local 1st 00:00, local 1st of next month 00:00)`` as epoch ms (UTC).

    A skipped local midnight starts at the first existing instant of its date, a
    repeated one at its earliest occurrence. Raises CalendarError when a local day
    of the month does not start on a UTC quarter hour (historic offsets).
    """
    _, starts = _day_starts_ms(year, month, tz)
    return starts[0], starts[-1]


def hours_to_read(year: int, month: int, tz: ZoneInfo) -> tuple[int, int]:
    """First and last UTC hour start (epoch ms) whose bucket items the calendar needs.

    These are the hours holding a quarter that starts in the month window: the
    ``c`` figures carry segments that began before the window, so no earlier hour
    is needed. The range is inclusive, and ends at 9999-12-31T23Z at the latest
    (no key can name a later hour).
    """
    start, end = month_window_ms(year, month, tz)
    last_quarter = end - QUARTER_MS
    return start - start % HOUR_MS, min(last_quarter - last_quarter % HOUR_MS, _LAST_HOUR_MS)


def month_calendar(
    year: int, month: int, tz: ZoneInfo, hours: Iterable[HourFigures]
) -> list[CalendarDay]:
    """Every local day of the month in ``tz`` with its video figures, in order.

    ``hours`` are the video bucket items (any order; hours outside the month
    window are ignored, items of the same hour are added up). Raises
    CalendarError when a local day of the month does not start on a UTC quarter
    hour, ValueError when an item's ``hour_start_ms`` is not a UTC hour start.
    """
    first, starts = _day_starts_ms(year, month, tz)
    day_count = len(starts) - 1
    window_start, window_end = starts[0], starts[-1]
    segments = [0] * day_count
    byte_sums = [0] * day_count
    video_ms = [0] * day_count
    has_video = [False] * day_count
    for hour in hours:
        if hour.hour_start_ms % HOUR_MS:
            raise ValueError(f"hour_start_ms {hour.hour_start_ms} is not a UTC hour start")
        if hour.hour_start_ms + HOUR_MS <= window_start or hour.hour_start_ms >= window_end:
            continue
        for q in range(QUARTERS):
            quarter_start = hour.hour_start_ms + q * QUARTER_MS
            if not window_start <= quarter_start < window_end:
                continue
            # The day whose [start, end) holds the quarter: the last one starting
            # at or before it (a skipped date has start == end and holds nothing).
            day = bisect_right(starts, quarter_start, 0, day_count) - 1
            segments[day] += hour.n[q]
            byte_sums[day] += hour.b[q]
            video_ms[day] += hour.d[q]
            if hour.n[q] > 0 or (hour.c[q] > 0 and quarter_start == starts[day]):
                has_video[day] = True
    return [
        CalendarDay(
            date=datetime.date.fromordinal(first.toordinal() + i),
            has_video=has_video[i],
            segments=segments[i],
            bytes=byte_sums[i],
            video_ms=video_ms[i],
        )
        for i in range(day_count)
    ]
