"""The viewer marks held windows and shades the day by activity (docs/viewer.md, docs/holds.md).

A local stack on an injected clock, one camera's bursts of files on one day, holds placed
with ``video-index hold`` (one released, one across the month's first midnight, one over two
days); then, in Chromium: the calendar marks exactly the days an active hold overlaps, and
the day's timeline shows each active hold and each quarter hour with files where the data
puts them. Every expectation is computed here from the numbers that made the data (the
holds' windows, the files' starts), in UTC, not read from the page or the API.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed, iso, put_segments, start_local, stop
from video_index.cli.main import main

NOW = datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
DEVICE = "cam-marks"
DAY = datetime(2026, 10, 20, tzinfo=UTC)
#: (first start, files of 10 s): three bursts of the day.
BURSTS = [(DAY + timedelta(hours=8), 12), (DAY + timedelta(hours=10, minutes=30), 6),
          (DAY + timedelta(hours=14, minutes=50), 3)]  # fmt: skip
#: (from, to, released): the holds placed on the camera.
HOLDS = [
    (DAY + timedelta(hours=10), DAY + timedelta(hours=11), False),
    (DAY + timedelta(hours=12), DAY + timedelta(hours=13), True),
    (datetime(2026, 10, 22, 22, tzinfo=UTC), datetime(2026, 10, 23, 2, tzinfo=UTC), False),
    (datetime(2026, 9, 30, 20, tzinfo=UTC), datetime(2026, 10, 1, 1, tzinfo=UTC), False),
]
QUARTER = timedelta(minutes=15)
#: Where a band lies on the track: (left, width) as fractions of the track's inner width.
PLACES = """(selector) => {
  const track = document.querySelector('[data-testid=timeline]');
  const box = track.getBoundingClientRect();
  return [...track.querySelectorAll(selector)].map((band) => {
    const r = band.getBoundingClientRect();
    return {...band.dataset, left: (r.left - box.left - track.clientLeft) / track.clientWidth,
            width: r.width / track.clientWidth, opacity: Number(getComputedStyle(band).opacity)};
  });
}"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningStack, list[str]]]:
    running = start_local(tmp_path_factory.mktemp("marks"), "--now", iso(NOW))
    try:
        for first, count in BURSTS:
            # playable: the day's page plays and previews what it shows
            put_segments(running, DEVICE, first, count, playable=True)
        indexed(running, DEVICE, sum(count for _, count in BURSTS))
        yield running, [_hold(running, low, high, released) for low, high, released in HOLDS]
    finally:
        stop(running.process)


def _hold(stack: RunningStack, low: datetime, high: datetime, released: bool) -> str:
    out = io.StringIO()
    ready = ["--ready-file", str(stack.ready_file)]
    with contextlib.redirect_stdout(out):
        code = main(["hold", "add", "--device", DEVICE, "--from", iso(low), "--to", iso(high),
                     "--reason", f"case {low:%d%H}", "--json", *ready])  # fmt: skip
    assert code == 0, out.getvalue()
    hold_id = str(json.loads(out.getvalue())["hold_id"])
    if released:
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["hold", "release", hold_id, *ready]) == 0
    return hold_id


def _open(browser: Browser, stack: RunningStack) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="UTC")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{stack.ready['viewer']}?device={DEVICE}&date={DAY:%Y-%m-%d}&tz=UTC")
    page.wait_for_selector("body[data-ready=true]")
    return page, errors


def test_held_days_and_the_days_holds_and_activity_are_drawn_where_the_data_says(
    browser: Browser, stack: tuple[RunningStack, list[str]]
) -> None:
    running, ids = stack
    page, errors = _open(browser, running)
    placed = zip(HOLDS, ids, strict=True)
    active = [(low, high, hold_id) for (low, high, released), hold_id in placed if not released]

    # Then the calendar marks exactly the October days an active hold overlaps
    page.wait_for_selector("[data-testid^=day-][data-held=true]")
    days = [datetime(2026, 10, d, tzinfo=UTC) for d in range(1, 32)]
    one_day = timedelta(days=1)
    expected_days = {
        f"{d:%Y-%m-%d}" for d in days if any(lo < d + one_day and hi > d for lo, hi, _ in active)
    }
    marked = set(page.eval_on_selector_all(
        "[data-testid^=day-][data-held=true]", "bs => bs.map(b => b.dataset.testid.slice(4))"
    ))  # fmt: skip
    assert marked == expected_days
    assert expected_days == {"2026-10-01", "2026-10-20", "2026-10-22", "2026-10-23"}
    assert "held" in page.inner_text(f"[data-testid=day-{DAY:%Y-%m-%d}]")

    # And the day's timeline shows each active hold of the day (not the released one) at
    # its place: its share of the day from midnight, and its length
    page.wait_for_selector("[data-testid=timeline] > .held")
    page.wait_for_selector("[data-testid=timeline] > .activity")
    held = page.evaluate(PLACES, ".held")
    in_day = [(lo, hi, i) for lo, hi, i in active if lo < DAY + timedelta(days=1) and hi > DAY]
    assert [band["hold"] for band in held] == [i for _, _, i in in_day]
    for band, (low, high, _) in zip(held, in_day, strict=True):
        assert band["left"] == pytest.approx((low - DAY) / timedelta(days=1), abs=0.002)
        assert band["width"] == pytest.approx((high - low) / timedelta(days=1), abs=0.002)

    # And the activity shading: one band per quarter hour in which files started, with
    # their count, at that quarter's place, darker where more files started
    starts = [first + timedelta(seconds=10 * n) for first, count in BURSTS for n in range(count)]
    quarters = Counter(DAY + (s - DAY) // QUARTER * QUARTER for s in starts)
    shaded = page.evaluate(PLACES, ".activity")
    assert {(b["start"], int(b["count"])) for b in shaded} == {
        (iso(q), n) for q, n in quarters.items()
    }
    for band in shaded:
        quarter = datetime.fromisoformat(band["start"])
        assert band["left"] == pytest.approx((quarter - DAY) / timedelta(days=1), abs=0.002)
        assert band["width"] == pytest.approx(QUARTER / timedelta(days=1), abs=0.002)
    by_count = sorted(shaded, key=lambda b: int(b["count"]))
    assert [b["opacity"] for b in by_count] == sorted(b["opacity"] for b in by_count)
    assert by_count[0]["opacity"] < by_count[-1]["opacity"]

    # And the page said nothing wrong
    assert errors == []


def test_axe_finds_no_violation_with_held_days_and_shading(
    browser: Browser, stack: tuple[RunningStack, list[str]]
) -> None:
    from tests.support.browser import axe_core_path

    # Given the page with the held days and the shaded, held day open (axe injected: no CSP)
    running, _ = stack
    context = browser.new_context(bypass_csp=True, timezone_id="UTC")
    page = context.new_page()
    page.goto(f"{running.ready['viewer']}?device={DEVICE}&date={DAY:%Y-%m-%d}&tz=UTC")
    page.wait_for_selector("[data-testid=timeline] > .held")
    page.wait_for_selector("[data-testid^=day-][data-held=true] .held-mark")
    page.add_script_tag(path=str(axe_core_path()))
    # When axe-core checks it
    found = page.evaluate(
        "async () => (await axe.run(document)).violations.map(v => "
        "`${v.id}: ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)"
    )
    context.close()
    # Then it finds nothing (the "held" notes' contrast included)
    assert found == []
