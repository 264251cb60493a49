"""The day page's Live button (docs/viewer.md, "Live") in Chromium, on the session's local
stack with its real clock: a camera uploading 2-second segments as it records; today's
page offers Live, which plays the camera's latest footage a few seconds behind the wall
clock, says so, and a click on the timeline leaves it; another day's page does not offer it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed
from worlds.live import LiveCamera

DEVICE = "cam-live-button"


@pytest.fixture(scope="module")
def camera(local_stack: RunningStack) -> Iterator[LiveCamera]:
    recording = LiveCamera(local_stack.client("s3"), local_stack.ready["bucket"], DEVICE)
    recording.start()
    try:
        indexed(local_stack, DEVICE, 3, timeout=30)
        yield recording
    finally:
        recording.stop()
        assert recording.failure is None


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(timezone_id="UTC", viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def _picture_lag_ms(page: Page) -> float:
    """How far the clock (the picture's time) trails the page's wall clock, ms."""
    lag: float = page.evaluate(
        "() => Date.now() - Date.parse(document.querySelector('[data-testid=clock]').dataset.time)"
    )
    return lag


def test_live_plays_todays_latest_footage_and_a_click_leaves_it(
    local_stack: RunningStack, camera: LiveCamera, page: Page
) -> None:
    # Given today's page of a camera that records now
    today = datetime.now(UTC).date().isoformat()
    query = urlencode({"device": DEVICE, "date": today, "tz": "UTC"})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{local_stack.ready['viewer']}?{query}")
    page.wait_for_selector("body[data-ready=true]")
    live = page.locator("[data-testid=live]")
    # When Live is pressed
    live.click()
    # Then it plays the latest footage, a few seconds behind the wall clock, and says so
    page.wait_for_selector("[data-testid=live][aria-pressed=true]", timeout=20_000)
    deadline = time.monotonic() + 30
    while not 2_000 <= _picture_lag_ms(page) <= 8_000:
        assert time.monotonic() < deadline, _picture_lag_ms(page)
        page.wait_for_timeout(250)
    first = page.get_attribute("[data-testid=clock]", "data-time")
    page.wait_for_timeout(3000)
    assert page.get_attribute("[data-testid=clock]", "data-time") != first  # it moves on
    assert 2_000 <= _picture_lag_ms(page) <= 8_000
    assert "behind" in page.inner_text("[data-testid=live-note]")
    # When a moment of the timeline is clicked (the day's first footage)
    page.locator("[data-testid=range]").first.click()
    # Then the player leaves live for it
    page.wait_for_selector("[data-testid=live][aria-pressed=false]", timeout=10_000)
    assert page.is_hidden("[data-testid=live-note]")
    assert errors == []


def test_another_days_page_offers_no_live(
    local_stack: RunningStack, camera: LiveCamera, page: Page
) -> None:
    # Given yesterday's page of the same camera
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    query = urlencode({"device": DEVICE, "date": yesterday, "tz": "UTC"})
    page.goto(f"{local_stack.ready['viewer']}?{query}")
    page.wait_for_selector("body[data-ready=true]")
    # Then it has no Live button to press
    assert page.is_hidden("[data-testid=live]")
