"""The live edge on the local stack (docs/playback.md, "Live"): how far the picture in hls.js
stays behind the camera, and whether it ever stalls.

``video-index local`` in-process with its real clock; a camera thread uploads real H.264
2-second MPEG-TS segments through the uploader, each as its wall-clock end passes
(:class:`worlds.live.LiveCamera`); a thread polls ``live.m3u8`` four times a second (when
each file was first listed, and that the media sequence never goes back); Chromium plays
the live playlist with the viewer's own player (``playLive``: hls.js, the live options,
the follower holding the picture two segments + 1.5 s behind the wall clock) for five
minutes (40 s with ``--quick``), then, as the baseline of the same run, with hls.js's own
live options and no follower for two minutes (30 s). Per segment: upload finished →
listed → its first frame on screen. The issue's goal: at most one segment duration + 2 s
after the upload, no stall.
"""

from __future__ import annotations

import statistics
import time
from typing import Final

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from worlds.chromium import chromium_executable, launched
from worlds.live import LiveCamera, LiveFigures, PlaylistWatch, Watched, live_figures, watch_live

DEVICE: Final = "cam-live-bench"
SEGMENT_MS: Final = 2000


def live_benchmark(context: BenchContext) -> None:
    executable = chromium_executable()
    if executable is None:
        raise BenchmarkFailed("Chromium is missing: apt-get install chromium, or set $CHROMIUM")
    follow_s, baseline_s = (40, 30) if context.quick else (300, 120)
    from video_index.local.stack import LocalStack

    with LocalStack() as stack, launched(executable) as browser:
        endpoints = stack.endpoints
        camera = LiveCamera(stack.clients.s3, endpoints["bucket"], DEVICE, duration_ms=SEGMENT_MS)
        watch = PlaylistWatch(f"{endpoints['api']}/devices/{DEVICE}/live.m3u8")
        camera.start()
        watch.start()
        try:
            deadline = time.monotonic() + 30
            while len(camera.uploaded) < 3:  # a few segments in, as a viewer would find it
                if camera.failure is not None or time.monotonic() > deadline:
                    raise BenchmarkFailed(f"the camera did not start: {camera.failure!r}")
                time.sleep(0.1)
            viewer = endpoints["viewer"]
            runs = [
                ("the viewer's live player", watch_live(browser, viewer, DEVICE, follow_s)),
                (
                    "hls.js's own live options (baseline)",
                    watch_live(browser, viewer, DEVICE, baseline_s, plain=True),
                ),
            ]
        finally:
            camera.stop()
            watch.stop()
    if camera.failure is not None or watch.failure is not None:
        raise BenchmarkFailed(f"camera: {camera.failure!r}, playlist: {watch.failure!r}")
    if watch.sequences != sorted(watch.sequences):
        raise BenchmarkFailed("the live playlist's media sequence went back")
    _report(
        context,
        [(name, seen, live_figures(camera.uploaded, watch.listed, seen)) for name, seen in runs],
    )
    followed = live_figures(camera.uploaded, watch.listed, runs[0][1])
    live = runs[0][1]
    if live.errors or live.unexpected_errors or live.starved or followed.worst > followed.goal_s:
        raise BenchmarkFailed(f"the live player stalled or fell behind the goal: {live}")


def _report(context: BenchContext, runs: list[tuple[str, Watched, LiveFigures]]) -> None:
    table = Table(title=f"Live edge: {SEGMENT_MS // 1000}-second MPEG-TS segments, local stack")
    for column in ("player", "watched", "segments", "upload → listed", "upload → shown",
                   "goal", "starved", "hiccups", "waiting", "seeks"):  # fmt: skip
        table.add_column(column, justify="left" if column == "player" else "right")
    for name, seen, figures in runs:
        watched_s = (seen.frames[-1][0] - seen.frames[0][0]) / 1000 if seen.frames else 0.0
        table.add_row(
            name,
            f"{watched_s:.0f} s",
            str(len(figures.shown_s)),
            _spread(figures.listed_s),
            _spread(figures.shown_s),
            f"{figures.goal_s:.1f} s",
            str(len(seen.starved)),
            str(len(seen.hiccups)),
            str(seen.waiting),
            str(seen.seeks),
        )
    context.console.print(table)
    context.console.print(
        "  upload → shown: from the upload's last request returning to the segment's first "
        "frame presented (requestVideoFrameCallback), median / worst, after the first three "
        "segments shown; the live player holds 2 x 2 s + 1.5 s behind the wall clock. A stall "
        "(hls.js's, or a wait no picture ended within 100 ms) is starved with under 0.5 s "
        "buffered ahead, a hiccup with more (the page waiting for the CPU); waiting: every "
        "'waiting' event once playing, most a dip of the decoded-frame queue."
    )


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} / {max(values):.2f} s"
