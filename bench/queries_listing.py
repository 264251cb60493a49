"""Answers without an index: the calendar and the ranges computed from an S3 listing of the
key prefixes that can hold them (the queries benchmark's baseline), and moto's listing
answered from a sorted index of the key names (an emulator artifact removed).
"""

from __future__ import annotations

import bisect
import calendar as calendar_module
import datetime as dt
import re
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import groupby
from typing import Any, Final
from unittest.mock import patch
from zoneinfo import ZoneInfo

from moto.s3.models import FakeDeleteMarker, S3Backend

from bench.context import BenchmarkFailed
from bench.queries_world import DAY_MS, HOUR_MS, KIND, MAX_VIDEO_MS, epoch_ms, from_ms
from video_index.core.ranges import merge_ranges
from video_index.query.calendar import CalendarDay

# -- moto's listing, indexed ---------------------------------------------------------------


@contextmanager
def indexed_listing(bucket: Any) -> Iterator[Callable[..., Any]]:
    """moto's ``list_objects_v2`` answered from a sorted index of the bucket's key names.

    moto copies, filters and sorts every key of the bucket on every ListObjectsV2
    request (a page of 1,000 keys costs O(all keys)), an emulator artifact that
    would make each page of a 259,200-key bucket cost far more than the page
    itself. While active, requests on ``bucket`` without a delimiter are answered
    by bisecting a sorted list of its key names, with moto's own result and
    continuation-token code; the request/response path (HTTP, XML, botocore) is
    unchanged. Yields moto's original method, to check both give the same pages.
    The bucket must not change while this is active (checked by its key count).
    """
    original = S3Backend.list_objects_v2
    names = sorted(dict.keys(bucket.keys))

    def list_objects_v2(
        backend: S3Backend,
        bucket: Any,
        prefix: str | None,
        delimiter: str | None,
        continuation_token: str | None,
        start_after: str | None,
        max_keys: int,
    ) -> Any:
        if bucket is not indexed or delimiter or len(bucket.keys) != len(names):
            return original(
                backend,
                bucket=bucket,
                prefix=prefix,
                delimiter=delimiter,
                continuation_token=continuation_token,
                start_after=start_after,
                max_keys=max_keys,
            )
        prefix = prefix or ""
        position = bisect.bisect_left(names, prefix)
        if continuation_token or start_after:
            after = (
                backend._pagination_tokens.get(continuation_token)
                if continuation_token
                else start_after
            )
            position = max(position, bisect.bisect_right(names, after))
        keys: list[Any] = []
        while position < len(names) and len(keys) <= max_keys:
            name = names[position]
            if not name.startswith(prefix):
                break
            key = bucket.keys[name]
            if not isinstance(key, FakeDeleteMarker):
                keys.append(key)
            position += 1
        return backend._truncate_result(keys, max_keys)

    indexed = bucket
    with patch.object(S3Backend, "list_objects_v2", list_objects_v2):
        yield original


def check_indexed_listing(
    backend: S3Backend, bucket: Any, original: Callable[..., Any], prefixes: list[str]
) -> tuple[int, float, float]:
    """Pages from moto's own method and the indexed one must be identical: (pages compared,
    ms per page moto's way, ms per page indexed). Raises BenchmarkFailed otherwise."""
    slow: list[float] = []
    fast: list[float] = []
    compared = 0
    for prefix in prefixes:
        token: str | None = None
        for _ in range(2):  # the first two pages of each prefix
            arguments = {
                "bucket": bucket,
                "prefix": prefix,
                "delimiter": None,
                "continuation_token": token,
                "start_after": None,
                "max_keys": 1000,
            }
            began = time.perf_counter()
            want = original(backend, **arguments)
            slow.append(time.perf_counter() - began)
            began = time.perf_counter()
            got = backend.list_objects_v2(**arguments)
            fast.append(time.perf_counter() - began)
            if [S3Backend._get_name(k) for k in want[0]] != [
                S3Backend._get_name(k) for k in got[0]
            ] or want[1:] != got[1:]:
                raise BenchmarkFailed(f"the indexed moto listing differs on prefix {prefix!r}")
            compared += 1
            token = want[2]
            if not token:
                break
    return compared, 1000 * statistics.median(slow), 1000 * statistics.median(fast)


# -- the baseline: answers from an S3 listing alone -----------------------------------------

_KEY: Final = re.compile(
    r"^v1/video/([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)/([0-9]{4})/([0-9]{2})/([0-9]{2})/"
    r"([0-9]{2})/(([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})\.([0-9]{3})Z)"
    r"_(0|[1-9][0-9]{0,8})_[a-z0-9]{1,64}\.(?:mp4|ts)$"
)


def parse_video_key(key: str) -> tuple[int, int] | None:
    """(start, end) epoch ms of a valid video key (docs/keys.md), None for anything else."""
    m = _KEY.match(key)
    if m is None:
        return None
    year, month, day, hour = m[2], m[3], m[4], m[5]
    if (year, month, day, hour) != (m[7], m[8], m[9], m[10]):
        return None  # folders disagree with the start
    duration = int(m[14])
    if not 1 <= duration <= MAX_VIDEO_MS:
        return None
    try:
        fields = (int(year), int(month), int(day), int(hour), int(m[11]), int(m[12]))
        dt.datetime(*fields)  # a real date and time
    except ValueError:
        return None
    start = calendar_module.timegm((*fields, 0, 0, 0)) * 1000 + int(m[13])
    return start, start + duration


class Listing:
    """What a client without an index does: list the key prefixes that can hold the answer.

    A span of UTC hours is covered with the coarsest prefixes the key layout
    offers: a month prefix when at least half of its hours are needed, else a
    day prefix when at least half of its hours are, else hour prefixes (a day
    of 10 s segments is 9 pages; an hour, one). Keys outside the span are dropped.
    """

    def __init__(self, s3: Any, bucket: str, device: str) -> None:
        self._paginator = s3.get_paginator("list_objects_v2")
        self._bucket = bucket
        self._base = f"v1/{KIND}/{device}/"

    def prefixes(self, first_hour_ms: int, end_hour_ms: int) -> list[str]:
        hours = [from_ms(h) for h in range(first_hour_ms, end_hour_ms, HOUR_MS)]
        out: list[str] = []
        for (year, month), in_month in groupby(hours, key=lambda h: (h.year, h.month)):
            month_hours = list(in_month)
            if 2 * len(month_hours) >= 24 * calendar_module.monthrange(year, month)[1]:
                out.append(f"{self._base}{year:04d}/{month:02d}/")
                continue
            for day, in_day in groupby(month_hours, key=lambda h: h.day):
                day_hours = list(in_day)
                if 2 * len(day_hours) >= 24:
                    out.append(f"{self._base}{year:04d}/{month:02d}/{day:02d}/")
                else:
                    out.extend(f"{self._base}{h.year:04d}/{h:%m/%d/%H}/" for h in day_hours)
        return out

    def segments(self, first_ms: int, end_ms: int) -> Iterator[tuple[int, int, int]]:
        """(start, end, size) of every video segment whose start is in ``[first_ms, end_ms)``."""
        first_hour = first_ms - first_ms % HOUR_MS
        end_hour = end_ms + (-end_ms % HOUR_MS)
        for prefix in self.prefixes(first_hour, end_hour):
            for page in self._paginator.paginate(Bucket=self._bucket, Prefix=prefix):
                for obj in page.get("Contents", ()):
                    parsed = parse_video_key(obj["Key"])
                    if parsed is not None and first_ms <= parsed[0] < end_ms:
                        yield parsed[0], parsed[1], int(obj["Size"])


def local_day_starts(year: int, month: int, tz: ZoneInfo) -> list[int]:
    """Epoch ms of local midnight of every day of the month and of the next month's first
    (the earlier instant when a midnight repeats; Europe/Berlin has neither case)."""
    days = calendar_module.monthrange(year, month)[1]
    dates = [dt.date(year, month, d) for d in range(1, days + 1)]
    dates.append(dates[-1] + dt.timedelta(days=1))
    return [epoch_ms(dt.datetime(d.year, d.month, d.day, tzinfo=tz)) for d in dates]


def calendar_by_listing(listing: Listing, year: int, month: int, tz: ZoneInfo) -> list[CalendarDay]:
    """docs/read-model.md calendar from the keys: a day has video when a segment interval intersects
    its local [00:00, 24:00); its figures count the segments that start in it."""
    starts = local_day_starts(year, month, tz)
    days = len(starts) - 1
    segments, sizes, video_ms = [0] * days, [0] * days, [0] * days
    has_video = [False] * days
    # a segment intersecting the month starts at most one (longest) segment before it
    for start, end, size in listing.segments(starts[0] - MAX_VIDEO_MS, starts[-1]):
        first = bisect.bisect_right(starts, start) - 1
        if 0 <= first < days:
            segments[first] += 1
            sizes[first] += size
            video_ms[first] += end - start
        last = bisect.bisect_right(starts, end - 1) - 1
        for day in range(max(first, 0), min(last, days - 1) + 1):
            has_video[day] = True
    return [
        CalendarDay(
            date=dt.date(year, month, i + 1),
            has_video=has_video[i],
            segments=segments[i],
            bytes=sizes[i],
            video_ms=video_ms[i],
        )
        for i in range(days)
    ]


def ranges_by_listing(
    listing: Listing, start_ms: int, end_ms: int, tolerance_ms: int
) -> list[tuple[int, int]]:
    """Whole continuous ranges intersecting ``[start_ms, end_ms)`` from the keys.

    Lists every segment that can touch the window (starts from one longest segment
    plus the tolerance before it), merges with the gap tolerance, and widens the
    listing by a UTC day on a side while a segment not yet listed could still
    extend the first or last range.
    """
    low = start_ms - tolerance_ms - MAX_VIDEO_MS
    low -= low % HOUR_MS
    high = end_ms + tolerance_ms
    high += -high % HOUR_MS
    spans = {(s, e) for s, e, _ in listing.segments(low, high)}
    while True:
        hits = [r for r in merge_ranges(spans, tolerance_ms) if r[0] < end_ms and r[1] > start_ms]
        if not hits:
            return []
        # unlisted segments start before `low` (end before low + MAX) or at/after `high`
        open_left = hits[0][0] - tolerance_ms - MAX_VIDEO_MS < low
        open_right = hits[-1][1] + tolerance_ms >= high
        if not (open_left or open_right):
            return hits
        if open_left:
            spans |= {(s, e) for s, e, _ in listing.segments(low - DAY_MS, low)}
            low -= DAY_MS
        if open_right:
            spans |= {(s, e) for s, e, _ in listing.segments(high, high + DAY_MS)}
            high += DAY_MS
        if high - low > 400 * DAY_MS:
            raise BenchmarkFailed("a range runs on for more than 400 days")
