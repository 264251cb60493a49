"""The grid as a control room's wall, and live (docs/viewer.md, "Cameras in step", "Live").

On the session's local stack (its real clock):

* **the wall**: grid.html with 3, 4 and 9 cameras in windows of 1400 × 1000 and 1024 × 700.
  Each tile's picture is measured in Chromium: no two overlap, each keeps 16:9, all lie
  above the shared timeline and inside the window, and the wall fills its area (the tiles
  reach its width or the height left above the timeline). The columns and rows are those
  that make the tiles largest, computed here from the measured area (the test's own
  search), and at 1400 × 1000 four cameras stand 2 × 2 and nine 3 × 3;
* **live**: two cameras uploading 2-second segments as they record (MPEG-TS, and their own
  fragmented MP4), the grid opened with ``live=1``: both tiles play, in step, their
  pictures a few seconds behind the wall clock and moving on with it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, indexed, iso
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment
from worlds.live import LiveCamera

WALL: Final = [f"wall-{n}" for n in range(1, 10)]
T0: Final = (datetime.now(UTC) - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
SIZES: Final = [(1400, 1000), (1024, 700)]
#: Written from the issue: at 1400 × 1000, four cameras 2 × 2, nine 3 × 3.
EXPECTED_AT_1400: Final = {4: (2, 2), 9: (3, 3)}
GAP_PX: Final = 8
ARTIFACTS: Final = Path(__file__).resolve().parents[1] / "artifacts" / "viewer"
ASPECT: Final = 16 / 9

_MEASURE: Final = """() => {
  const wall = document.getElementById("grid-tiles");
  const timeline = document.getElementById("grid-timeline");
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height];
  };
  return {
    tiles: [...wall.querySelectorAll("video")].map(box),
    wall: box(wall), timeline: box(timeline),
    window: [window.innerWidth, window.innerHeight],
    columns: Number(wall.dataset.columns), rows: Number(wall.dataset.rows),
  };
}"""


@pytest.fixture(scope="module")
def wall_stack(local_stack: RunningStack) -> Iterator[RunningStack]:
    """Nine cameras with a 2-second file each at T0 (the wall needs pictures, not footage)."""
    s3 = local_stack.client("s3")
    for device in WALL:
        body = synthetic_clip(seconds=2, container="ts", label=device, start=T0)
        upload_segment(
            s3, local_stack.ready["bucket"], body, kind="video", device=device, start=T0,
            duration_ms=2000, ext="ts",
        )  # fmt: skip
    for device in WALL:
        indexed(local_stack, device, 1)
    yield local_stack


def _largest(count: int, width: float, height: float) -> tuple[int, int]:
    """The test's own search: (columns, rows) whose 16:9 tiles, GAP_PX apart, are widest in
    ``width`` × ``height``; of equal widths, the fewest empty cells."""
    best: tuple[float, int, int, int] | None = None
    for columns in range(1, count + 1):
        rows = -(-count // columns)
        tile = min(
            (width - GAP_PX * (columns - 1)) / columns,
            (height - GAP_PX * (rows - 1)) / rows * ASPECT,
        )
        candidate = (tile, -(columns * rows - count), columns, rows)
        if (
            best is None
            or candidate[0] > best[0] + 0.5
            or (abs(candidate[0] - best[0]) <= 0.5 and candidate[1] > best[1])
        ):
            best = candidate
    assert best is not None
    return best[2], best[3]


def _open(
    browser: Browser, stack: RunningStack, query: dict[str, str], size: tuple[int, int]
) -> Page:
    page = browser.new_context(viewport={"width": size[0], "height": size[1]}).new_page()
    page.goto(f"{stack.ready['viewer']}/grid.html?{urlencode(query)}")
    page.wait_for_selector("body[data-ready=true]")
    return page


def _overlap(a: list[float], b: list[float]) -> bool:
    return (
        a[0] < b[0] + b[2] - 0.5
        and b[0] < a[0] + a[2] - 0.5
        and a[1] < b[1] + b[3] - 0.5
        and b[1] < a[1] + a[3] - 0.5
    )


#: The layouts `make test` opens (the issue's two at 1400 × 1000, and three cameras in the
#: smaller window); `make test-deep` opens every count in every size.
QUICK: Final = {(4, SIZES[0]), (9, SIZES[0]), (3, SIZES[1])}
LAYOUTS: Final = [
    pytest.param(
        count,
        size,
        id=f"{count}-{size[0]}x{size[1]}",
        marks=() if (count, size) in QUICK else pytest.mark.deep,
    )
    for size in SIZES
    for count in (3, 4, 9)
]


@pytest.mark.parametrize(("count", "size"), LAYOUTS)
def test_the_tiles_fill_the_window_as_a_wall(
    wall_stack: RunningStack, browser: Browser, count: int, size: tuple[int, int]
) -> None:
    # Given the grid of `count` cameras in a window of `size`
    page = _open(browser, wall_stack, {"devices": ",".join(WALL[:count]), "t": iso(T0)}, size)
    page.wait_for_function(f"document.getElementById('grid-timeline').children.length > {count}")
    # When its tiles are measured
    found: dict[str, Any] = page.evaluate(_MEASURE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"grid-wall-{count}-{size[0]}x{size[1]}.png"))
    page.context.close()
    tiles, wall, timeline = found["tiles"], found["wall"], found["timeline"]
    assert len(tiles) == count
    # Then no two tiles overlap, each keeps 16:9, all stand above the timeline, in the window
    for i, tile in enumerate(tiles):
        assert abs(tile[2] / tile[3] - ASPECT) < 0.02, tile
        assert tile[1] + tile[3] <= timeline[1] + 0.5, (tile, timeline)
        assert tile[0] >= 0 and tile[0] + tile[2] <= found["window"][0], tile
        assert not any(_overlap(tile, other) for other in tiles[i + 1 :]), tiles
    # And they are laid in the rows and columns that make them largest in the area the
    # wall has: the window below its top, less the timeline and 24 px (the timeline's
    # 1rem margin and some air)
    height = found["window"][1] - wall[1] - timeline[3] - 24
    columns, rows = _largest(count, wall[2], height)
    assert (found["columns"], found["rows"]) == (columns, rows), found
    if size == (1400, 1000) and count in EXPECTED_AT_1400:
        assert (columns, rows) == EXPECTED_AT_1400[count]
    # And the wall fills that area: its tiles reach its width or its height
    right = max(t[0] + t[2] for t in tiles) - min(t[0] for t in tiles)
    bottom = max(t[1] + t[3] for t in tiles) - min(t[1] for t in tiles)
    assert right >= wall[2] - 2 * columns or bottom >= height - 2 * rows, (
        right,
        bottom,
        wall,
        height,
    )


@pytest.fixture
def live_cameras(local_stack: RunningStack) -> Iterator[list[str]]:
    cameras = [
        LiveCamera(local_stack.client("s3"), local_stack.ready["bucket"], device, container=kind)
        for device, kind in (("wall-live-ts", "ts"), ("wall-live-fmp4", "fmp4"))
    ]
    for camera in cameras:
        camera.start()
    try:
        yield [camera.device for camera in cameras]
    finally:
        for camera in cameras:
            camera.stop()
        assert [c.failure for c in cameras] == [None, None]


@pytest.mark.deep  # the live player itself is followed in make test (test_viewer_live.py)
def test_the_live_wall_plays_every_camera_in_step(
    local_stack: RunningStack, browser: Browser, live_cameras: list[str]
) -> None:
    # Given two cameras uploading as they record, a few segments in
    for device in live_cameras:
        indexed(local_stack, device, 3, timeout=30)
    errors: list[str] = []
    # When the grid opens live
    page = _open(
        browser, local_stack, {"devices": ",".join(live_cameras), "live": "1"}, (1400, 1000)
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    assert page.get_attribute("[data-testid=grid-live]", "aria-pressed") == "true"
    # Then both tiles play
    for device in live_cameras:
        page.wait_for_selector(f"[data-testid=tile-{device}][data-state=playing]", timeout=30_000)
    samples = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        samples.append(page.evaluate("() => ({...window.__grid.sample(), now: Date.now()})"))
        page.wait_for_timeout(1000)
    page.context.close()
    # And in step (within half a second), a few seconds behind the wall clock, moving on
    settled = [s for s in samples[3:] if all(m is not None for m in s["tiles"].values())]
    assert len(settled) >= 10, samples
    for sample in settled:
        moments = list(sample["tiles"].values())
        assert max(moments) - min(moments) <= 500, sample
        assert 2_000 <= sample["now"] - max(moments) <= 8_000, sample
    assert settled[-1]["clock"] - settled[0]["clock"] >= 0.8 * (
        settled[-1]["now"] - settled[0]["now"]
    )
    assert errors == []
