"""Activity per step (docs/api.md#activity): the pure function against a reference that
walks minutes and counts segments by the local time of their start, and the route over a
real read model, counted against the segments put.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from datetime import UTC, datetime, timedelta
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.tables import TableFactory
from video_index.query.activity import HourCounts, activity, step_bounds
from worlds.api_world import ApiWorld, at, iso, make_world

MINUTE = 60_000
QUARTER = 15 * MINUTE
HOUR = 60 * MINUTE
DAY = 24 * HOUR
ZONES = ("UTC", "Europe/Berlin", "America/Santiago", "Asia/Kolkata", "Pacific/Chatham")
# 2026: Berlin changes on 03-29 and 10-25, Santiago on 04-05 and 09-06.
BASE = int(datetime(2026, 3, 20, tzinfo=UTC).timestamp() * 1000)


def key_of(ms: int, step: str, tz: ZoneInfo) -> Hashable:
    """The reference: a moment's step, from its local wall time alone."""
    local = datetime.fromtimestamp(ms / 1000, UTC).astimezone(tz)
    if step == "P1D":
        return local.date()
    if step == "PT1H":
        return (local.date(), local.hour, local.utcoffset())
    return ms // QUARTER


def reference_bounds(start: int, end: int, step: str, tz: ZoneInfo) -> list[int]:
    """Boundaries found minute by minute (not by quarters), from a day before ``start``."""
    moments = range(start - start % MINUTE - 2 * DAY, end + 2 * DAY, MINUTE)
    changes = [m for m in moments if key_of(m, step, tz) != key_of(m - MINUTE, step, tz)]
    first = max(m for m in changes if m <= start)
    last = min(m for m in changes if m >= end)
    return [m for m in changes if first <= m <= last]


def buckets(starts: list[tuple[int, int]]) -> list[HourCounts]:
    """Bucket figures as docs/read-model.md defines them: files per starting quarter."""
    n: Counter[int] = Counter()
    b: Counter[int] = Counter()
    for start, size in starts:
        quarter = start - start % QUARTER
        n[quarter] += 1
        b[quarter] += size
    hours = {q - q % HOUR for q in n}
    return [
        HourCounts(
            h,
            tuple(n[h + i * QUARTER] for i in range(4)),  # type: ignore[arg-type]
            tuple(b[h + i * QUARTER] for i in range(4)),  # type: ignore[arg-type]
        )
        for h in sorted(hours)
    ]


@given(
    zone=st.sampled_from(ZONES),
    step=st.sampled_from(("PT15M", "PT1H", "P1D")),
    start=st.integers(0, 200 * DAY),
    length=st.integers(1, 3 * DAY),
    files=st.lists(st.tuples(st.integers(-2 * DAY, 5 * DAY), st.integers(0, 10**6)), max_size=40),
)
def test_every_step_counts_the_files_starting_in_it(
    zone: str, step: str, start: int, length: int, files: list[tuple[int, int]]
) -> None:
    # Given files starting around a window in a zone with (or without) DST changes
    tz = ZoneInfo(zone)
    window_start = BASE + start
    window_end = window_start + length
    put = [(window_start + offset, size) for offset, size in files]
    # When activity is computed from the bucket figures
    steps = activity(window_start, window_end, step, tz, buckets(put))
    # Then the steps are the reference's, contiguous, covering the window
    bounds = reference_bounds(window_start, window_end, step, tz)
    assert [s.start_ms for s in steps] + [steps[-1].end_ms] == bounds
    # And each step counts exactly the files whose start lies in it
    for s in steps:
        inside = [size for begin, size in put if s.start_ms <= begin < s.end_ms]
        assert (s.count, s.bytes) == (len(inside), sum(inside))


def test_a_berlin_fall_back_day_is_25_hours_and_its_repeated_hour_two_steps() -> None:
    # Given Berlin's fall-back day 2026-10-25 (02:00–03:00 local happens twice)
    tz = ZoneInfo("Europe/Berlin")
    day_start = int(datetime(2026, 10, 24, 22, tzinfo=UTC).timestamp() * 1000)
    # When its days and hours are asked for
    days = step_bounds(day_start, day_start + 1, "P1D", tz)
    hours = step_bounds(day_start, day_start + 25 * HOUR, "PT1H", tz)
    # Then the day lasts 25 hours, and it has 25 hour steps, one per real hour
    assert days == [day_start, day_start + 25 * HOUR]
    assert hours == [day_start + i * HOUR for i in range(26)]


# --- the route -------------------------------------------------------------------------


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


def test_the_route_answers_every_step_with_zeros(world: ApiWorld) -> None:
    # Given video at 10:05 and 10:20 and a sensor file at 12:00 on the 29th
    world.put("video", "cam-001", at(29, 10, 5), 10_000, size=300)
    world.put("video", "cam-001", at(29, 10, 20), 10_000, size=200)
    world.put("sensor", "cam-001", at(29, 12), 0, size=7)
    query = "&".join(
        f"{k}={quote(v, safe='')}"
        for k, v in {"from": iso(at(29, 9)), "to": iso(at(29, 13)), "step": "PT1H"}.items()
    )
    # When the hours of 09:00–13:00 are asked for
    status, body, _ = world.get("/devices/cam-001/activity", query)
    # Then four hours answer, zeros included, video only by default
    assert status == 200
    assert [(i["start"], i["count"], i["bytes"]) for i in body["items"]] == [
        (iso(at(29, 9)), 0, 0),
        (iso(at(29, 10)), 2, 500),
        (iso(at(29, 11)), 0, 0),
        (iso(at(29, 12)), 0, 0),
    ]
    status, sensor, _ = world.get("/devices/cam-001/activity", query + "&kind=sensor")
    assert [i["count"] for i in sensor["items"]] == [0, 0, 0, 1]


@pytest.mark.parametrize(
    ("extra", "parameter"),
    [("&step=PT5M", "step"), ("&tz=Mars/Base", "tz"), ("&kind=audio", "kind")],
)
def test_a_bad_parameter_is_a_400_naming_it(world: ApiWorld, extra: str, parameter: str) -> None:
    window = f"from={quote(iso(at(29, 9)))}&to={quote(iso(at(29, 13)))}"
    status, body, _ = world.get("/devices/cam-001/activity", window + extra)
    assert status == 400 and body["error"]["parameter"] == parameter


def test_a_31_day_window_is_one_query(world: ApiWorld) -> None:
    # Given a month of files, one per day
    for day in range(1, 31):
        world.put("video", "cam-001", at(day, 10), 1_000, size=1)
    start = at(1, 0)
    window = f"from={quote(iso(start))}&to={quote(iso(start + timedelta(days=31)))}&step=P1D"
    # When the month is asked for by day, the read model's requests are counted
    calls: Counter[str] = Counter()
    world.drain()
    world.dynamodb.meta.events.register(
        "before-call.dynamodb", lambda model, **_: calls.update([model.name])
    )
    status, body, _ = world.get("/devices/cam-001/activity", window)
    # Then 31 days answer, with their 30 files, from one Query
    assert status == 200 and len(body["items"]) == 31
    assert sum(i["count"] for i in body["items"]) == 30
    assert calls["Query"] == 1
