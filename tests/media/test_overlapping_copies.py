"""A clock that jumped back, played end to end on the running local stack
(docs/playback.md#overlapping-copies): real H.264, FFmpeg's own HLS demuxer.

A camera uploads three 2 s MPEG-TS files; then, its clock set back, four more under the
same moments and one beyond (different pictures: different keys). Both copies stay in the
bucket and the index; the ranges answer marks the overlap; FFmpeg (through PyAV), opening
the playlist URL, decodes each moment's frames once: four files' worth, not seven — the
first copy S3 received, then the second copy's last file.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import av
import pytest

from tests.support.local_stack import RunningStack
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment

DEVICE = "media-jump"
FPS = 25
SECONDS = 2
T0 = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
WINDOW = {
    "from": (T0 - timedelta(minutes=1)).isoformat(),
    "to": (T0 + timedelta(hours=1)).isoformat(),
}


def _upload(stack: RunningStack, copy: str, count: int) -> None:
    s3 = stack.client("s3")
    for index in range(count):
        start = T0 + timedelta(seconds=SECONDS * index)
        clip = synthetic_clip(
            seconds=SECONDS, container="ts", fps=FPS, label=f"{copy} {index}", start=start
        )
        upload_segment(
            s3,
            stack.ready["bucket"],
            clip,
            kind="video",
            device=DEVICE,
            start=start,
            duration_ms=SECONDS * 1000,
            ext="ts",
        )


def _poll(stack: RunningStack, path: str, ready: Any, **query: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status, body = stack.get(path, **query)
        if status == 200 and ready(body):
            return dict(body)
        assert time.monotonic() < deadline, f"{path} never ready: {body}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def jumped(local_stack: RunningStack) -> RunningStack:
    # Given three files of the first copy, then four of the copy after the jump back
    _upload(local_stack, "first", 3)
    _poll(local_stack, f"/devices/{DEVICE}/segments", lambda b: len(b["items"]) == 3, **WINDOW)
    _upload(local_stack, "after the jump", 4)
    return local_stack


def test_both_copies_stay_and_the_overlap_is_marked(jumped: RunningStack) -> None:
    # When the window is listed, Then all seven objects are indexed
    _poll(jumped, f"/devices/{DEVICE}/segments", lambda b: len(b["items"]) == 7, **WINDOW)
    # And the ranges answer marks the 6 s both copies cover: 3 files played, 3 set aside
    body = _poll(jumped, f"/devices/{DEVICE}/ranges", lambda b: b["overlaps"], **WINDOW)
    (overlap,) = body["overlaps"]
    assert datetime.fromisoformat(overlap["start"]) == T0
    assert datetime.fromisoformat(overlap["end"]) == T0 + timedelta(seconds=6)
    assert (overlap["played"]["files"], overlap["set_aside"]["files"]) == (3, 3)
    assert overlap["played"]["received_to"] <= overlap["set_aside"]["received_from"]


def test_ffmpeg_decodes_each_moment_of_the_playlist_once(jumped: RunningStack) -> None:
    _poll(jumped, f"/devices/{DEVICE}/segments", lambda b: len(b["items"]) == 7, **WINDOW)
    url = f"{jumped.ready['api']}/devices/{DEVICE}/playlist.m3u8?{urlencode(WINDOW)}"
    # When FFmpeg's HLS demuxer opens the playlist URL and decodes the whole stream
    container: Any = av.open(url, format="hls", timeout=30)
    with container:
        decoded = sum(1 for _ in container.decode(video=0))
    # Then it decodes 8 s of frames (the first copy's 6 s and the second's last 2 s), once
    assert decoded == 4 * SECONDS * FPS
