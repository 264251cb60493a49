"""Several cameras in step (docs/viewer.md, "Cameras in step"): grid.html in a real Chromium.

Three cameras around T0, made here (real H.264, 10-second files, three containers):

* ``grid-a`` (MPEG-TS) records throughout;
* ``grid-b`` (fragmented MP4) records, stops for 20 s (T0+20 s .. T0+40 s), records again;
* ``grid-c`` (progressive MP4) has no footage at T0 and starts at T0+15 s.

The grid opens at T0 and plays; each tile's wall-clock position (its playlist's
PROGRAM-DATE-TIME plus the time played into the fragment) is sampled once a second:
the tiles showing footage agree within 0.5 s; grid-c shows its gap, then joins; the
timeline is clicked past grid-b's gap and the tiles agree again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page

from tests.support.local_stack import RunningStack, iso, start_local, stop
from video_index.media.synthetic import ContainerName, synthetic_clip
from video_index.upload import upload_segment

T0 = datetime(2026, 10, 20, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
#: device → (container, upload as is, [(start s from T0, seconds)])
CAMERAS: dict[str, tuple[ContainerName, bool, list[int]]] = {
    "grid-a": ("ts", False, list(range(-10, 70, 10))),
    "grid-b": ("fmp4", True, [-10, 0, 10, 40, 50, 60]),
    "grid-c": ("mp4", False, [15, 25, 35, 45, 55]),
}
MAX_DRIFT_S = 0.5
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "viewer"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    local_stack = start_local(
        tmp_path_factory.mktemp("grid"), "--visibility-timeout", "2", "--now", iso(NOW)
    )
    try:
        s3 = local_stack.client("s3")
        for device, (container, as_is, starts) in CAMERAS.items():
            for offset in starts:
                start = T0 + timedelta(seconds=offset)
                body = synthetic_clip(seconds=10, container=container, label=device, start=start)
                upload_segment(
                    s3, local_stack.ready["bucket"], body, kind="video", device=device,
                    start=start, duration_ms=10_000, ext="ts" if container == "ts" else "mp4",
                    as_is=as_is,
                )  # fmt: skip
        deadline = time.monotonic() + 60
        for device, (_, _, starts) in CAMERAS.items():
            while True:
                status, body = local_stack.get(f"/devices/{device}")
                total = body["kinds"]["video"]["segments"] if status == 200 and body["kinds"] else 0
                if total == len(starts):
                    break
                assert time.monotonic() < deadline, f"{device} never indexed: {body}"
                time.sleep(0.2)
        yield local_stack
    finally:
        stop(local_stack.process)


def _sample(page: Page) -> dict[str, Any]:
    sample: dict[str, Any] = page.evaluate("() => window.__grid.sample()")
    return sample


def _drift(sample: dict[str, Any]) -> float:
    """The largest difference (s) between the tiles showing footage."""
    moments = [m for m in sample["tiles"].values() if m is not None]
    return (max(moments) - min(moments)) / 1000 if len(moments) > 1 else 0.0


def _play_until(page: Page, until: datetime, samples: list[dict[str, Any]]) -> None:
    deadline = time.monotonic() + (until - T0).total_seconds() + 60
    while True:
        sample = _sample(page)
        samples.append(sample)
        if sample["clock"] >= until.timestamp() * 1000:
            return
        assert time.monotonic() < deadline, f"the grid's clock stopped: {sample}"
        page.wait_for_timeout(1000)


def _until_states(page: Page, wanted: dict[str, str], samples: list[dict[str, Any]]) -> None:
    """Sample until the tiles named in ``wanted`` are in those states (a tile may be caught
    in the middle of a seek: it says so, and is in step a moment later)."""
    deadline = time.monotonic() + 10
    while True:
        sample = _sample(page)
        samples.append(sample)
        if all(sample["states"][device] == state for device, state in wanted.items()):
            return
        assert time.monotonic() < deadline, f"the tiles never became {wanted}: {sample}"
        page.wait_for_timeout(200)


def test_three_cameras_play_in_step_across_gaps(stack: RunningStack, browser: Browser) -> None:
    # Given the grid of the three cameras opened at T0
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    query = urlencode({"devices": ",".join(CAMERAS), "t": iso(T0)})
    page.goto(f"{stack.ready['viewer']}/grid.html?{query}")
    page.wait_for_selector("body[data-ready=true]")
    # Then the timeline marks each camera's ranges (grid-b: two, around its gap)
    assert page.locator("[data-testid=grid-row-grid-b] .grid-range").count() == 2
    assert page.locator("[data-testid=grid-row-grid-c] .grid-range").count() == 1
    # And grid-c, without footage at T0, shows its gap while the others play
    page.wait_for_selector("[data-testid=tile-grid-a][data-state=playing]")
    assert page.get_attribute("[data-testid=tile-grid-c]", "data-state") == "gap"

    # When it plays past grid-c's start and into grid-b's gap
    samples: list[dict[str, Any]] = []
    _play_until(page, T0 + timedelta(seconds=25), samples)
    # Then grid-c joined, grid-b shows its gap
    _until_states(page, {"grid-c": "playing", "grid-b": "gap"}, samples)
    assert samples[-1]["clock"] < (T0 + timedelta(seconds=40)).timestamp() * 1000

    # When the timeline is clicked past grid-b's gap
    box = page.locator("[data-testid=grid-timeline]").bounding_box()
    assert box is not None
    window_start = T0 - timedelta(minutes=5)
    fraction = (T0 + timedelta(seconds=45) - window_start) / timedelta(minutes=60)
    page.mouse.click(box["x"] + box["width"] * fraction, box["y"] + 5)
    after_seek = _sample(page)["clock"]
    _play_until(page, datetime.fromtimestamp(after_seek / 1000 + 12, UTC), samples)
    # Then all three play again
    _until_states(page, dict.fromkeys(CAMERAS, "playing"), samples)

    # And the tiles showing footage agreed within 0.5 s in every sample after each start
    settled = [s for s in samples if all(v != "loading" for v in s["states"].values())]
    drifts = [_drift(s) for s in settled[2:]]
    worst = max(drifts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "grid-figures.json").write_text(
        json.dumps({"max_drift_s": worst, "samples": len(drifts)}, indent=2)
    )
    page.screenshot(path=str(ARTIFACTS / "grid.png"))
    print(f"grid: max drift {worst:.3f} s over {len(drifts)} samples")
    assert worst <= MAX_DRIFT_S, [s for s in settled if _drift(s) > MAX_DRIFT_S][:5]
    assert errors == []
    context.close()
