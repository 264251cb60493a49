"""An operator shares a window from the day's page (docs/viewer.md "Share a window"): a real
Chromium on the session's local stack (its stand-in authorizer: the page's requests are a
local admin's). The window is typed into the export form; the link is shown once, the
camera's list shows the share, and Revoke ends it (the public playlist then answers 410).
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.support.local_stack import RunningStack, indexed, put_segments

DEVICE = "cam-share-page"
DAY = "2026-10-22"
T0 = datetime(2026, 10, 22, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def footage(local_stack: RunningStack) -> RunningStack:
    put_segments(local_stack, DEVICE, T0, 3)
    indexed(local_stack, DEVICE, 3)
    return local_stack


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    opened = browser.new_context(timezone_id="UTC")
    yield opened
    opened.close()


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def status_of(url: str) -> int:
    try:
        with _OPENER.open(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_operator_shares_a_window_lists_and_revokes_it(
    footage: RunningStack, context: BrowserContext
) -> None:
    page = context.new_page()
    query = urlencode({"device": DEVICE, "date": DAY, "tz": "UTC"})
    page.goto(f"{footage.ready['viewer']}?{query}")
    page.wait_for_selector("[data-testid=range]")
    # Given a window typed into the export form, and the share section opened
    page.fill("[data-testid=export-from]", f"{DAY}T10:00:05")
    page.fill("[data-testid=export-to]", f"{DAY}T10:00:25")
    page.click("[data-testid=share-open]")
    # When the operator shares it for an hour
    page.select_option("[data-testid=share-life]", "3600")
    page.click("[data-testid=share-create]")
    page.wait_for_selector("[data-testid=share-link]:not([hidden])")
    # Then the page shows the link once: the share page, its secret in the fragment
    link = urlsplit(page.input_value("[data-testid=share-link]"))
    assert link.path == "/viewer/share.html" and len(link.fragment) == 32 + 1 + 43
    share_id, secret = link.fragment.split(".")
    playlist = f"{footage.ready['api']}/shares/{share_id}/playlist.m3u8?key={secret}"
    assert status_of(playlist) == 200
    # And the camera's list shows it active
    item = page.locator("[data-testid=share-item][data-state=active]")
    item.wait_for()
    assert "2026-10-22T10:00:05.000Z – 2026-10-22T10:00:25.000Z" in item.inner_text()
    # When it is revoked from the list
    page.click("[data-testid=share-revoke]")
    page.wait_for_selector("[data-testid=share-item][data-state=revoked]")
    # Then the link answers 410 at once
    assert status_of(playlist) == 410
