"""The viewer's time-zone arithmetic (``zones.js``, in Chromium) against Python's zoneinfo.

The page draws local days (23, 24 or 25 hours, or 23.5 on Lord Howe Island), their hour
marks and the day of any instant with nothing but ``Intl``; a property test compares each
with an independent implementation — Python's ``zoneinfo`` — over random days of zones with
DST changes at 00:00 (Santiago, Havana, Beirut), half-hour DST (Lord Howe), odd offsets
(Kathmandu, Chatham, St John's) and none.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack

ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/Los_Angeles",
    "America/Santiago",
    "America/Havana",
    "Asia/Beirut",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "America/St_Johns",
    "Asia/Kolkata",
    "Asia/Tehran",
)
# Years whose rules both tz databases (Python's tzdata, Chromium's ICU) agree on.
DAYS = st.dates(min_value=date(2000, 1, 1), max_value=date(2022, 12, 31))
QUARTER = timedelta(minutes=15)


@pytest.fixture(scope="module")
def zones_page(browser: Browser, local_stack: RunningStack) -> Iterator[Page]:
    # Given a page of the viewer's origin with its zones module loaded
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{local_stack.ready['api']}/viewer/config.json")
    page.evaluate("async () => { window.zones = await import('/viewer/zones.js'); }")
    yield page
    context.close()


def python_day(zone: str, day: date) -> tuple[int, int, int]:
    """Start and end (epoch ms) of the local day and its number of local hour marks."""
    tz = ZoneInfo(zone)
    following = day + timedelta(days=1)
    start = datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC)
    end = datetime(following.year, following.month, following.day, tzinfo=tz).astimezone(UTC)
    marks = 0
    moment = start
    while moment < end:
        local = moment.astimezone(tz)
        marks += local.minute == 0 and local.second == 0
        moment += QUARTER
    return int(start.timestamp() * 1000), int(end.timestamp() * 1000), marks


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zone=st.sampled_from(ZONES), day=DAYS, fraction=st.floats(0, 0.999))
def test_local_days_and_hours_agree_with_zoneinfo(
    zones_page: Page, zone: str, day: date, fraction: float
) -> None:
    # Given a local day as Python's zoneinfo sees it, and an instant inside it
    start, end, marks = python_day(zone, day)
    inside = start + int(fraction * (end - start))
    # When the page computes the same
    seen = zones_page.evaluate(
        """([zone, day, inside]) => {
          const [start, end] = zones.dayBounds(day, zone);
          return {start, end, marks: zones.hourMarks(start, end, zone).length,
                  date: zones.localDate(inside, zone)};
        }""",
        [zone, day.isoformat(), inside],
    )
    # Then the day has the same bounds, the same hour marks, and holds the instant
    assert (seen["start"], seen["end"]) == (start, end), (zone, day)
    assert seen["marks"] == marks, (zone, day)
    assert seen["date"] == day.isoformat()


def test_a_25_hour_and_a_23_hour_day(zones_page: Page) -> None:
    # When Berlin's autumn and spring DST days are drawn
    hours = zones_page.evaluate(
        """() => ['2026-10-25', '2026-03-29', '2026-06-01'].map(day => {
          const [start, end] = zones.dayBounds(day, 'Europe/Berlin');
          return zones.hourMarks(start, end, 'Europe/Berlin').map(m => m.hour);
        })"""
    )
    # Then 02:00 comes twice in autumn, never in spring, once otherwise
    assert hours[0] == [0, 1, 2, 2, *range(3, 24)]
    assert hours[1] == [0, 1, *range(3, 24)]
    assert hours[2] == list(range(24))
