"""Gaps on the day's timeline say why (docs/viewer.md "Screens", docs/api.md#gaps): a real
Chromium on the local stack, with footage of a recent day (UTC) made here and uploaded now.

S3 receives the files now, so nothing of any kind arrived during that day's gaps: each
is ``silent``. Each gap is drawn (``data-testid=gap``) where the ranges answer puts it,
with its reason in ``data-reason`` and in words in its title, and hovering it says the
reason beside the time.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed
from tests.viewer.test_viewer_journey import Watch
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment

DEVICE = "cam-gaps-viewer"
MIDNIGHT = (datetime.now(UTC) - timedelta(days=1)).replace(
    hour=0, minute=0, second=0, microsecond=0
)
DAY = MIDNIGHT.date().isoformat()
FILES = [MIDNIGHT + timedelta(hours=8), MIDNIGHT + timedelta(hours=14)]
SECONDS = 10


@pytest.fixture(scope="module")
def stack(local_stack: RunningStack) -> RunningStack:
    s3 = local_stack.client("s3")
    for start in FILES:
        body = synthetic_clip(seconds=SECONDS, container="ts", start=start)
        upload_segment(
            s3, local_stack.ready["bucket"], body, kind="video", device=DEVICE, start=start,
            duration_ms=SECONDS * 1000, ext="ts",
        )  # fmt: skip
    indexed(local_stack, DEVICE, len(FILES))
    return local_stack


@pytest.fixture
def page(browser: Browser, stack: RunningStack) -> Iterator[Page]:
    context = browser.new_context(timezone_id="UTC", viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


def test_each_gap_of_the_day_says_why_on_hover(page: Page, stack: RunningStack) -> None:
    watch = Watch()
    watch.attach(page, "gaps")
    # When the day is opened
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': 'UTC'})}")
    page.wait_for_selector("[data-testid=gap]")
    # Then the three stretches without video are drawn as gaps, each silent, saying so
    gaps = page.locator("[data-testid=gap]")
    found = [
        (
            datetime.fromisoformat(gaps.nth(i).get_attribute("data-start") or ""),
            datetime.fromisoformat(gaps.nth(i).get_attribute("data-end") or ""),
            gaps.nth(i).get_attribute("data-reason"),
            gaps.nth(i).get_attribute("title") or "",
        )
        for i in range(gaps.count())
    ]
    ends = [start + timedelta(seconds=SECONDS) for start in FILES]
    assert [(a, b, r) for a, b, r, _ in found] == [
        (MIDNIGHT, FILES[0], "silent"),
        (ends[0], FILES[1], "silent"),
        (ends[1], MIDNIGHT + timedelta(days=1), "silent"),
    ]
    assert all(title.endswith("silent: the camera sent nothing") for *_, title in found)
    assert found[0][3].startswith("00:00:00 – 08:00:00 (8 h 00 min)")
    # When the pointer rests over the middle of the first gap
    box = page.locator("[data-testid=timeline]").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * (4 / 24), box["y"] + box["height"] / 2)
    # Then the hover shows the time and the reason
    hover = page.locator("[data-testid=timeline] .hover")
    hover.wait_for(state="visible")
    assert hover.inner_text().endswith(" · silent")
    assert watch.console_errors == [] and watch.failed_requests == []
