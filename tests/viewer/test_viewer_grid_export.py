"""Export from the grid of cameras (docs/viewer.md, "Export from the grid"): grid.html in a
real Chromium on a local stack of its own, with its export worker.

Three cameras around T0, made here (real H.264, PyAV, 6-second files):

* ``gx-a`` (MPEG-TS) records from T0 for 24 s (four files);
* ``gx-b`` (progressive MP4) records from T0+6 s for 12 s (two files);
* ``gx-c`` (MPEG-TS) records only at T0+20 min: nothing in the window exported.

A window is dragged across the grid's timeline around T0 and exported for all tiles: one job
per camera, each followed on the page; gx-a's and gx-b's MP4s are downloaded (Playwright)
and their frames counted with PyAV against the frames of the files this test made that the
job's window covers; gx-c says in words that it has no footage there. With the keyboard
alone a window is put at the clock (``s``, arrows, ``e``) and exported for one tile by a
caller whose right to export is gone: the 403 is said in words. A viewer sees no export.
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

from tests.support.local_stack import RunningStack, indexed, iso, start_local, stop
from tests.viewer.test_viewer_a11y import violations
from video_index.media.synthetic import ContainerName, synthetic_clip
from video_index.upload import upload_segment

T0 = datetime(2026, 10, 20, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
FILE_S = 6
#: device → (container, [start s from T0])
CAMERAS: dict[str, tuple[ContainerName, list[int]]] = {
    "gx-a": ("ts", [0, 6, 12, 18]),
    "gx-b": ("mp4", [6, 12]),
    "gx-c": ("ts", [20 * 60]),
}
#: the grid's timeline spans the hour from 5 minutes before the moment it opens at
WINDOW_START = T0 - timedelta(minutes=5)
WINDOW = timedelta(hours=1)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    local_stack = start_local(
        tmp_path_factory.mktemp("grid-export"), "--visibility-timeout", "2", "--now", iso(NOW)
    )
    try:
        yield local_stack
    finally:
        stop(local_stack.process)


@pytest.fixture(scope="module")
def footage(stack: RunningStack) -> dict[str, dict[datetime, bytes]]:
    # Given the three cameras' files, made here and indexed
    s3 = stack.client("s3")
    made: dict[str, dict[datetime, bytes]] = {}
    for device, (container, starts) in CAMERAS.items():
        made[device] = {}
        for offset in starts:
            start = T0 + timedelta(seconds=offset)
            body = synthetic_clip(seconds=FILE_S, container=container, label=device, start=start)
            upload_segment(
                s3, stack.ready["bucket"], body, kind="video", device=device, start=start,
                duration_ms=FILE_S * 1000, ext="ts" if container == "ts" else "mp4",
            )  # fmt: skip
            made[device][start] = body
    for device, (_, starts) in CAMERAS.items():
        indexed(stack, device, len(starts))
    return made


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    # bypass_csp only so the test may add axe-core's script (as test_viewer_a11y.py does)
    opened = browser.new_context(
        viewport={"width": 1280, "height": 900}, accept_downloads=True, bypass_csp=True
    )
    yield opened
    opened.close()


def frame_count(media: bytes) -> int:
    """Frames PyAV decodes from ``media``."""
    container: Any
    with av.open(io.BytesIO(media)) as container:
        return sum(1 for _ in container.decode(video=0))


def open_grid(page: Page, stack: RunningStack) -> None:
    query = urlencode({"devices": ",".join(CAMERAS), "t": iso(T0)})
    page.goto(f"{stack.ready['viewer']}/grid.html?{query}")
    page.wait_for_selector("body[data-ready=true]")


def x_of(page: Page, moment: datetime) -> tuple[float, float]:
    """The point of the grid's timeline showing ``moment``."""
    box = page.locator("[data-testid=grid-timeline]").bounding_box()
    assert box is not None
    return box["x"] + box["width"] * ((moment - WINDOW_START) / WINDOW), box["y"] + 5


def paused_clock(page: Page) -> datetime:
    """The grid's clock once it has stopped (a pause takes effect at the next tick)."""
    deadline = time.monotonic() + 10
    last = None
    while True:
        now = page.get_attribute("[data-testid=grid-clock]", "data-time")
        if now is not None and now == last:
            return datetime.fromisoformat(now)
        assert time.monotonic() < deadline, "the grid's clock never stopped"
        last = now
        page.wait_for_timeout(500)


def said(page: Page, device: str, *words: str) -> str:
    """Wait until ``device``'s export line says every one of ``words``; the line."""
    line = page.locator(f"[data-testid=grid-export-state-{device}]")
    deadline = time.monotonic() + 90
    while True:
        text = line.text_content() if line.count() else ""
        if all(word in (text or "") for word in words):
            return text or ""
        assert time.monotonic() < deadline, f"{device}'s export says {text!r}, not {words}"
        page.wait_for_timeout(100)


def test_a_window_dragged_on_the_grid_exports_every_tile_to_its_own_mp4(
    stack: RunningStack,
    footage: dict[str, dict[datetime, bytes]],
    context: BrowserContext,
    tmp_path: Path,
) -> None:
    errors: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    # Given the grid of the three cameras opened at T0, its export shown (operator)
    open_grid(page, stack)
    page.wait_for_selector("[data-testid=grid-export][data-ready=true]:not([hidden])")
    page.click("[data-testid=grid-play]")  # paused: the clock stays where it is
    clock_before = paused_clock(page)
    # When the person drags across the timeline from T0-1 min to T0+2 min
    x1, y = x_of(page, T0 - timedelta(minutes=1))
    x2, _ = x_of(page, T0 + timedelta(minutes=2))
    page.mouse.move(x1, y)
    page.mouse.down()
    page.mouse.move(x2, y, steps=8)
    page.mouse.up()
    # Then the window is marked and said, and the grid did not seek (the drag is no click)
    selection = page.locator("[data-testid=grid-export-selection]")
    selection.wait_for(state="visible")
    chosen = [datetime.fromisoformat(selection.get_attribute(f"data-{end}") or "")
              for end in ("from", "to")]  # fmt: skip
    pixel = timedelta(minutes=3) / (x2 - x1)
    assert abs(chosen[0] - (T0 - timedelta(minutes=1))) <= 2 * pixel
    assert abs(chosen[1] - (T0 + timedelta(minutes=2))) <= 2 * pixel
    assert "Export window" in (page.text_content("[data-testid=grid-export-window]") or "")
    assert paused_clock(page) == clock_before
    # When all tiles are exported, with the keyboard (the drag left the focus on Export)
    assert page.evaluate("document.activeElement.dataset.testid") == "grid-export-start"
    assert page.input_value("[data-testid=grid-export-target]") == ""  # all tiles
    page.keyboard.press("Enter")
    # Then gx-c, without footage in the window, says so in words and offers nothing
    said(page, "gx-c", "No footage", chosen[0].strftime("%H:%M:%S"), chosen[1].strftime("%H:%M:%S"))
    assert page.locator("[data-testid=grid-export-download-gx-c]").is_hidden()
    # And each camera with footage offers its own clip, which downloads as an MP4 holding
    # every frame of that camera's files in the job's window (counted from the bytes made here)
    for device in ("gx-a", "gx-b"):
        said(page, device, "ready")
        link = page.locator(f"[data-testid=grid-export-download-{device}]")
        assert device in (link.text_content() or "")
        export_id = page.get_attribute(f"[data-testid=grid-export-{device}]", "data-export-id")
        status, job = stack.get(f"/exports/{export_id}")
        assert status == 200 and job["state"] == "done" and job["device"] == device, job
        window = (datetime.fromisoformat(job["from"]), datetime.fromisoformat(job["to"]))
        assert (window[0], window[1]) == (chosen[0], chosen[1])
        with page.expect_download() as started:
            link.click()
        download = started.value
        saved = tmp_path / download.suggested_filename
        download.save_as(saved)
        length = timedelta(seconds=FILE_S)
        covered = [body for start, body in footage[device].items()
                   if start < window[1] and start + length > window[0]]  # fmt: skip
        assert len(covered) == len(CAMERAS[device][1])
        clip = saved.read_bytes()
        assert saved.suffix == ".mp4" and saved.name.startswith(device)
        assert clip[4:8] == b"ftyp"
        frames = frame_count(clip)
        print(f"grid export {device}: {frames} frames, {len(clip)} bytes")
        assert frames == sum(frame_count(body) for body in covered) > 0
    # And axe-core finds no violation on the grid with its exports shown
    assert violations(page) == []
    assert errors == []


def test_a_window_put_with_the_keyboard_exports_one_tile_and_a_403_is_said(
    stack: RunningStack, footage: dict[str, dict[datetime, bytes]], browser: Browser
) -> None:
    # Given an operator's grid (its export shown), whose role becomes viewer for exports
    # while the page is open: the local stand-in authorizer reads the roles of each request
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def as_caller(route: Route) -> None:
        exporting = route.request.method == "POST" and route.request.url.endswith("/exports")
        roles = "viewer" if exporting else "operator"
        route.continue_(headers={**route.request.headers, "X-Roles": roles})

    context.route(f"{stack.ready['api']}/**", as_caller)
    page = context.new_page()
    try:
        open_grid(page, stack)
        page.wait_for_selector("[data-testid=grid-export][data-ready=true]:not([hidden])")
        # When the person pauses, focuses the timeline, presses s, moves 30 s on, presses e
        page.focus("[data-testid=grid-play]")
        page.keyboard.press("Enter")
        page.wait_for_selector("[data-testid=grid-play]:has-text('Play')")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.testid") == "grid-timeline"
        clock = paused_clock(page)
        page.keyboard.press("s")
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("e")
        # Then the window runs from the clock's moment to 30 s later
        selection = page.locator("[data-testid=grid-export-selection]")
        assert [selection.get_attribute("data-from"), selection.get_attribute("data-to")] == [
            iso(clock),
            iso(clock + timedelta(seconds=30)),
        ]
        # When they Tab to the cameras, choose gx-a alone, Tab to Export and press Enter
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.testid") == "grid-export-target"
        page.select_option("[data-testid=grid-export-target]", "gx-a")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.testid") == "grid-export-start"
        page.keyboard.press("Enter")
        # Then gx-a's export says they may not, and why; no other tile was exported
        said(page, "gx-a", "may not export", "operator", "403")
        assert page.locator("[data-testid=grid-export-download-gx-a]").is_hidden()
        assert page.locator("[data-testid=grid-exports] li").count() == 1
    finally:
        context.close()


def test_a_viewer_sees_no_export_on_the_grid(
    stack: RunningStack, footage: dict[str, dict[datetime, bytes]], browser: Browser
) -> None:
    # Given a caller whose role is viewer
    context = browser.new_context()
    context.route(
        f"{stack.ready['api']}/**",
        lambda route: route.continue_(headers={**route.request.headers, "X-Roles": "viewer"}),
    )
    page = context.new_page()
    try:
        # When the grid is opened
        open_grid(page, stack)
        page.wait_for_selector("body[data-role=viewer]")
        # Then it plays, but offers no export
        assert page.locator("[data-testid=grid-export]").is_hidden()
        assert page.locator("[data-testid=grid-export-selection]").count() == 0
    finally:
        context.close()
