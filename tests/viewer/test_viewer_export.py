"""Export from the page (docs/viewer.md, "Export a clip"): a real Chromium on the local stack
with its export worker.

The footage is made here: six 10-second MPEG-TS files (real H.264, PyAV) from 10:00 UTC
and, on the same day, nothing in the evening. The person drags across the timeline over
the files, starts the export, watches it run and downloads the MP4 (Playwright's
download); the clip is decoded with PyAV and its frames counted against the frames of the
source files the job's window covers, counted here from the bytes the test made. Windows
that cannot be exported — longer than 6 hours, without footage, or asked for by a caller
who may only view — are said in words on the page.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import av
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from tests.support.local_stack import RunningStack, indexed, iso
from tests.viewer.test_viewer_journey import Watch
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment

DEVICE = "cam-export"
DAY = "2026-10-20"
T0 = datetime(2026, 10, 20, 10, 0, tzinfo=UTC)
FILES = 6
FILE_MS = 10_000
ZONE = "UTC"


@pytest.fixture(scope="module")
def footage(local_stack: RunningStack) -> dict[datetime, bytes]:
    # Given six back-to-back 10-second files of real H.264 from 10:00 UTC, indexed
    s3 = local_stack.client("s3")
    made: dict[datetime, bytes] = {}
    for index in range(FILES):
        start = T0 + timedelta(milliseconds=index * FILE_MS)
        body = synthetic_clip(seconds=FILE_MS / 1000, container="ts", label=DEVICE, start=start)
        upload_segment(
            s3, local_stack.ready["bucket"], body, kind="video", device=DEVICE, start=start,
            duration_ms=FILE_MS, ext="ts",
        )  # fmt: skip
        made[start] = body
    indexed(local_stack, DEVICE, FILES)
    return made


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    opened = browser.new_context(timezone_id=ZONE, accept_downloads=True)
    yield opened
    opened.close()


def frame_count(media: bytes) -> int:
    """Frames PyAV decodes from ``media``."""
    container: Any
    with av.open(io.BytesIO(media)) as container:
        return sum(1 for _ in container.decode(video=0))


def open_day(page: Page, stack: RunningStack) -> None:
    page.goto(f"{stack.ready['viewer']}?{urlencode({'device': DEVICE, 'date': DAY, 'tz': ZONE})}")
    page.wait_for_selector("[data-testid=range]")


def x_of(page: Page, moment: datetime) -> tuple[float, float]:
    """The point of the timeline's track showing ``moment`` (a 24-hour UTC day)."""
    box = page.locator("[data-testid=timeline]").bounding_box()
    assert box is not None
    fraction = (moment - datetime(2026, 10, 20, tzinfo=UTC)) / timedelta(days=1)
    return box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2


def export_state(page: Page, *words: str) -> str:
    """Wait until the export's state line says every one of ``words``; the line."""
    line = page.locator("[data-testid=export-state]")
    deadline = time.monotonic() + 60
    while True:
        text = line.text_content() or ""
        if all(word in text for word in words):
            return text
        assert time.monotonic() < deadline, f"the page says {text!r}, not {words}"
        page.wait_for_timeout(100)


def test_a_window_dragged_on_the_timeline_downloads_as_an_mp4_of_its_frames(
    local_stack: RunningStack,
    footage: dict[datetime, bytes],
    context: BrowserContext,
    tmp_path: Path,
) -> None:
    watch = Watch()
    page = context.new_page()
    watch.attach(page, "export")
    open_day(page, local_stack)
    # When the person drags across the timeline from 09:30 to 10:30
    x1, y = x_of(page, T0 - timedelta(minutes=30))
    x2, _ = x_of(page, T0 + timedelta(minutes=30))
    page.mouse.move(x1, y)
    page.mouse.down()
    page.mouse.move(x2, y, steps=8)
    page.mouse.up()
    # Then the window is marked on the timeline and in the two fields, and nothing plays
    selection = page.locator("[data-testid=export-selection]")
    selection.wait_for(state="visible")
    chosen = [datetime.fromisoformat(selection.get_attribute(f"data-{end}") or "")
              for end in ("from", "to")]  # fmt: skip
    pixel = timedelta(hours=1) / (x2 - x1)  # the time one pixel spans
    assert abs(chosen[0] - (T0 - timedelta(minutes=30))) <= 2 * pixel
    assert abs(chosen[1] - (T0 + timedelta(minutes=30))) <= 2 * pixel
    assert page.input_value("[data-testid=export-from]").startswith(f"{DAY}T09:")
    assert page.input_value("[data-testid=export-to]").startswith(f"{DAY}T10:")
    assert page.get_attribute("[data-testid=timeline]", "aria-valuetext") == "no moment chosen"
    # When the export is started with the keyboard (the drag left the focus on Export)
    page.wait_for_function("document.activeElement?.dataset.testid === 'export-start'")
    page.keyboard.press("Enter")
    # Then the page follows the job until it offers the download
    page.wait_for_selector("[data-testid=export-download]:not([hidden])", timeout=60_000)
    export_id = page.get_attribute("[data-testid=export-form]", "data-export-id")
    status, job = local_stack.get(f"/exports/{export_id}")
    assert status == 200 and job["state"] == "done", job
    # When the person downloads it
    with page.expect_download() as started:
        page.click("[data-testid=export-download]")
    download = started.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    # Then it is an MP4 holding every frame of the files the job's window covers, counted
    # here from the files this test made
    window = (datetime.fromisoformat(job["from"]), datetime.fromisoformat(job["to"]))
    length = timedelta(milliseconds=FILE_MS)
    covered = [
        b for start, b in footage.items() if start < window[1] and start + length > window[0]
    ]
    assert len(covered) == FILES
    assert saved.suffix == ".mp4" and saved.name.startswith(DEVICE)
    clip = saved.read_bytes()
    assert clip[4:8] == b"ftyp"
    assert frame_count(clip) == sum(frame_count(body) for body in covered) > 0
    # (a navigation that turns into a download is reported "aborted" by Chromium: not a failure)
    failed = [f for f in watch.failed_requests if not ("ERR_ABORTED" in f and "/clip.mp4" in f)]
    assert watch.console_errors == [] and failed == []


def test_a_window_longer_than_six_hours_or_without_footage_is_said_in_words(
    local_stack: RunningStack, footage: dict[datetime, bytes], context: BrowserContext
) -> None:
    page = context.new_page()
    open_day(page, local_stack)
    # When the person types a 7-hour window and starts the export
    page.fill("[data-testid=export-from]", f"{DAY}T02:00:00")
    page.fill("[data-testid=export-to]", f"{DAY}T09:00:00")
    page.click("[data-testid=export-start]")
    # Then the page says the window is too long, and the bound
    text = export_state(page, "too long", "6 hours")
    assert "7 h" in text
    # When the person types an evening hour without footage
    page.fill("[data-testid=export-from]", f"{DAY}T20:00:00")
    page.fill("[data-testid=export-to]", f"{DAY}T21:00:00")
    page.click("[data-testid=export-start]")
    # Then the page says there is nothing to export, and offers no download
    export_state(page, "No footage", "20:00:00")
    assert page.locator("[data-testid=export-download]").is_hidden()


def test_a_caller_whose_right_to_export_is_gone_is_told_so(
    local_stack: RunningStack, footage: dict[datetime, bytes], browser: Browser
) -> None:
    # Given an operator's page (its export form shown), whose role becomes viewer while the
    # page is open: the local stand-in authorizer reads the roles of each request
    context = browser.new_context(timezone_id=ZONE)

    def as_caller(route: Route) -> None:
        exporting = route.request.method == "POST" and route.request.url.endswith("/exports")
        roles = "viewer" if exporting else "operator"
        route.continue_(headers={**route.request.headers, "X-Roles": roles})

    context.route(f"{local_stack.ready['api']}/**", as_caller)
    page = context.new_page()
    try:
        open_day(page, local_stack)
        # When they choose a window with footage and start the export
        page.fill("[data-testid=export-from]", f"{DAY}T09:59:00")
        page.fill("[data-testid=export-to]", f"{DAY}T10:02:00")
        page.click("[data-testid=export-start]")
        # Then the page says they may not, and why
        export_state(page, "may not export", "operator", "403")
        assert page.locator("[data-testid=export-download]").is_hidden()
    finally:
        context.close()


def test_the_window_is_kept_exactly_as_typed(
    local_stack: RunningStack, footage: dict[datetime, bytes], context: BrowserContext
) -> None:
    # Given the day open
    page = context.new_page()
    open_day(page, local_stack)
    # When a window is typed and exported
    page.fill("[data-testid=export-from]", f"{DAY}T10:00:05")
    page.fill("[data-testid=export-to]", f"{DAY}T10:00:25")
    page.click("[data-testid=export-start]")
    page.wait_for_selector("[data-testid=export-download]:not([hidden])", timeout=60_000)
    # Then the job covers exactly the typed window (as UTC instants)
    export_id = page.get_attribute("[data-testid=export-form]", "data-export-id")
    status, job = local_stack.get(f"/exports/{export_id}")
    assert status == 200
    assert (job["from"], job["to"]) == (
        iso(T0 + timedelta(seconds=5)),
        iso(T0 + timedelta(seconds=25)),
    )
    assert job["segments"] == 3
