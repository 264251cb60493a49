"""The live edge on the local stack (docs/playback.md, "Live"), with the stack's real clock.

A camera thread uploads real H.264 segments of 2 s through the uploader, each as soon as
its wall-clock end has passed (:class:`worlds.live.LiveCamera`); the viewer's own player
(``playLive``: hls.js, the live options, the follower) in Chromium follows
``live.m3u8`` for a minute (five in ``make test-deep``), while the test polls the playlist
four times a second too. Then:

* the live edge never starved the player: no stall (hls.js's ``bufferStalledError``, or a
  ``waiting`` once playing — but its one join seek's — after which the next picture came
  100 ms or more later) with less than half a second buffered ahead of the picture; no
  player error, no hls.js error but those named harmless. Stalls with seconds buffered
  ahead (the page waiting for the CPU of a machine shared with a test suite) are counted
  and reported as hiccups (:class:`worlds.live.Watched`);
* every segment uploaded meanwhile was shown, in order, none skipped;
* each one's first frame came on screen at most one segment duration + 2 s after its
  upload finished (the issue's goal), the median and worst written to
  ``tests/artifacts/live/``;
* the media sequence never went back, and moved forward with the camera.

The camera records MPEG-TS here; the other kinds play through the same listing as a
window's playlist (``tests/query/test_live.py``), and the deep tier follows an fMP4 camera
too (its own fragmented MP4, served through renditions).
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.local_stack import RunningStack, poll
from video_index.media.synthetic import ContainerName
from worlds.live import LiveCamera, PlaylistWatch, live_figures, watch_live

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "live"
SEGMENT_MS = 2000


def _listed_files(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as answer:
        return answer.read().decode().count("#EXTINF")


@pytest.mark.parametrize(
    ("container", "seconds"),
    [
        pytest.param("ts", 24, id="ts-24s"),
        pytest.param("ts", 300, id="ts-5min", marks=pytest.mark.deep),
        pytest.param("fmp4", 60, id="fmp4-60s", marks=pytest.mark.deep),
    ],
)
def test_hls_js_follows_a_camera_at_the_live_edge(
    local_stack: RunningStack, browser: Browser, container: ContainerName, seconds: int
) -> None:
    # Given a camera uploading 2-second segments as it records them
    device = f"cam-live-{container}-{seconds}"
    url = f"{local_stack.ready['api']}/devices/{device}/live.m3u8"
    camera = LiveCamera(
        local_stack.client("s3"), local_stack.ready["bucket"], device,
        duration_ms=SEGMENT_MS, container=container,
    )  # fmt: skip
    watch = PlaylistWatch(url)
    camera.start()
    watch.start()
    try:
        poll(lambda: _listed_files(url), lambda n: n >= 3, "three files listed", 30)
        # When the viewer's player follows its live playlist
        watched = watch_live(browser, local_stack.ready["viewer"], device, seconds)
    finally:
        camera.stop()
        watch.stop()
    assert camera.failure is None and watch.failure is None, (camera.failure, watch.failure)
    figures = live_figures(camera.uploaded, watch.listed, watched)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = {
        "container": container,
        "watched_s": seconds,
        "segments_shown": len(figures.shown_s),
        "upload_to_listed_s": {"median": _median(figures.listed_s), "worst": max(figures.listed_s)},
        "upload_to_shown_s": {"median": figures.median, "worst": figures.worst},
        "goal_s": figures.goal_s,
        "waiting": watched.waiting,
        "starved": watched.starved,
        "hiccups": watched.hiccups,
        "seeks": watched.seeks,
        "errors": watched.unexpected_errors + watched.errors,
    }
    (ARTIFACTS / f"live-{container}-{seconds}s.json").write_text(json.dumps(report, indent=2))
    print(f"live {container} {seconds} s: {json.dumps(report)}")
    # Then the live edge never starved it, nothing failed, and it sought at most once
    # (joining at the lag it then holds)
    assert watched.starved == [], report
    assert watched.errors == [] and watched.unexpected_errors == [], report
    assert watched.seeks <= 1, report
    # And it showed every segment uploaded while it watched, in order, none skipped
    starts = [s.start_ms for s in camera.uploaded]
    shown = sorted({s for s in starts for _, m in watched.frames if s <= m < s + SEGMENT_MS})
    assert len(shown) >= seconds * 1000 // SEGMENT_MS - 5, report
    assert shown == starts[starts.index(shown[0]) : starts.index(shown[-1]) + 1]
    # And each came on screen at most a segment duration + 2 s after its upload finished
    assert figures.worst <= figures.goal_s, figures.shown_s
    # And the media sequence never went back, and moved on with the camera
    assert watch.sequences == sorted(watch.sequences)
    assert len(set(watch.sequences)) >= seconds * 1000 // SEGMENT_MS - 5


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def test_the_player_waits_at_the_edge_of_a_camera_that_stops(
    local_stack: RunningStack, browser: Browser
) -> None:
    # Given a camera that recorded a few segments and stopped
    device = "cam-live-stopped"
    url = f"{local_stack.ready['api']}/devices/{device}/live.m3u8"
    camera = LiveCamera(local_stack.client("s3"), local_stack.ready["bucket"], device)
    camera.start()
    try:
        poll(lambda: _listed_files(url), lambda n: n >= 4, "four files listed", 30)
    finally:
        camera.stop()
    stopped_at = time.time()
    # When the viewer's player follows its live playlist
    watched = watch_live(browser, local_stack.ready["viewer"], device, 8)
    # Then it shows the camera's last footage without an error, and nothing after it
    assert watched.errors == [] and watched.frames, watched
    last_end = camera.uploaded[-1].start_ms + SEGMENT_MS
    assert max(moment for _, moment in watched.frames) < last_end
    assert stopped_at * 1000 > last_end
