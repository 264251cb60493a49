"""Frame previews on the day's timeline (docs/viewer.md, "Frame previews"): a real Chromium
on the local stack, with footage made here (real H.264 in MPEG-TS) at 08:00 and 14:00 UTC.

Hovering the timeline over footage shows an image whose address is the frame route for the
hovered moment, and the picture loads; under the timeline, a strip holds one frame for each
hour with footage (counted here from the files the test made), each loaded.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed
from tests.viewer.test_viewer_journey import Watch
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment

DEVICE = "cam-previews"
DAY = "2026-10-21"
MIDNIGHT = datetime(2026, 10, 21, tzinfo=UTC)
#: The files: (start, seconds) — an hour of footage at 08:00 would be long to make; these
#: are a minute at 08:00 and half a minute at 14:00.
FILES = [(MIDNIGHT + timedelta(hours=8, seconds=10 * n), 10) for n in range(6)] + [
    (MIDNIGHT + timedelta(hours=14, seconds=10 * n), 10) for n in range(3)
]


@pytest.fixture(scope="module")
def stack(local_stack: RunningStack) -> RunningStack:
    # Given real H.264 files at 08:00 and at 14:00, indexed
    s3 = local_stack.client("s3")
    for start, seconds in FILES:
        body = synthetic_clip(seconds=seconds, container="ts", size=(320, 180), start=start)
        upload_segment(
            s3, local_stack.ready["bucket"], body, kind="video", device=DEVICE, start=start,
            duration_ms=seconds * 1000, ext="ts",
        )  # fmt: skip
    indexed(local_stack, DEVICE, len(FILES))
    return local_stack


@pytest.fixture
def page(browser: Browser, stack: RunningStack) -> Iterator[Page]:
    context = browser.new_context(timezone_id="UTC", viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


def covered(moment: datetime) -> bool:
    """Whether a file the test made covers ``moment``."""
    return any(start <= moment < start + timedelta(seconds=s) for start, s in FILES)


def moment_of(address: str) -> datetime:
    query = parse_qs(urlsplit(address).query)
    return datetime.fromisoformat(query["t"][0])


def loaded(page: Page, selector: str) -> int:
    """Wait (with a deadline) until the image loaded; its natural width."""
    deadline = time.monotonic() + 30
    while True:
        width: int = page.eval_on_selector(selector, "e => e.complete ? e.naturalWidth : -1")
        if width > 0:
            return width
        assert width != 0, f"{selector} did not load"
        assert time.monotonic() < deadline, f"{selector} never loaded"
        page.wait_for_timeout(100)


def test_hovering_the_timeline_over_footage_shows_the_frame_of_that_moment(
    page: Page, stack: RunningStack
) -> None:
    watch = Watch()
    watch.attach(page, "previews")
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': 'UTC'})}")
    page.wait_for_selector("[data-testid=range]")
    # When the pointer rests over the middle of the 08:00 range
    box = page.locator("[data-testid=timeline]").bounding_box()
    assert box is not None
    hovered = MIDNIGHT + timedelta(hours=8, seconds=30)
    x = box["x"] + box["width"] * ((hovered - MIDNIGHT) / timedelta(days=1))
    page.mouse.move(x, box["y"] + box["height"] / 2)
    # Then a preview shows an image whose address is the frame route for that moment
    page.wait_for_selector("[data-testid=frame-preview]:not([hidden])")
    image = "[data-testid=frame-preview-image]"
    address = page.get_attribute(image, "src") or ""
    assert urlsplit(address).path == f"/devices/{DEVICE}/frame"
    shown = moment_of(address)
    pixel = timedelta(days=1) / box["width"]
    assert abs(shown - hovered) <= pixel + timedelta(seconds=1)
    assert covered(shown)
    # And the picture loads, at the width asked for
    assert loaded(page, image) == int(parse_qs(urlsplit(address).query)["width"][0])
    # When the pointer leaves the timeline, the preview goes
    page.mouse.move(x, box["y"] - 200)
    page.wait_for_selector("[data-testid=frame-preview]", state="hidden")
    assert watch.console_errors == [] and watch.failed_requests == []


def test_the_strip_shows_a_frame_of_each_hour_with_footage(page: Page, stack: RunningStack) -> None:
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': 'UTC'})}")
    page.wait_for_selector("[data-testid=range]")
    # Then the strip holds one picture per hour the test's files cover
    hours = sorted({start.hour for start, _ in FILES})
    frames = page.locator("[data-testid=strip-frame] img")
    assert frames.count() == len(hours)
    for index, hour in enumerate(hours):
        selector = f"[data-testid=strip-frame]:nth-child({index + 1}) img"
        address = page.get_attribute(selector, "src") or ""
        # ... each of a moment with footage in its hour, named in its text alternative
        shown = moment_of(address)
        assert shown.hour == hour and covered(shown)
        assert page.get_attribute(selector, "alt") == f"Frame at {shown:%H:%M:%S}"
        # ... and loaded
        assert loaded(page, selector) > 0


def test_moving_the_focused_timelines_cursor_shows_the_cursors_frame(
    page: Page, stack: RunningStack
) -> None:
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': 'UTC'})}")
    page.wait_for_selector("[data-testid=range]")
    # When the keyboard moves the timeline's cursor to 14:00 (Home, then an hour at a time)
    page.focus("[data-testid=timeline]")
    page.keyboard.press("Home")
    for _ in range(14):
        page.keyboard.press("PageUp")
    # Then the preview shows the frame of 14:00, and it loads
    page.wait_for_selector("[data-testid=frame-preview]:not([hidden])")
    image = "[data-testid=frame-preview-image]"
    assert moment_of(page.get_attribute(image, "src") or "") == MIDNIGHT + timedelta(hours=14)
    assert loaded(page, image) > 0
    # And it goes when the focus leaves the timeline
    page.keyboard.press("Tab")
    page.wait_for_selector("[data-testid=frame-preview]", state="hidden")
