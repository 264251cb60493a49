"""The frame of t is the frame of t, whatever the file's first timestamp (docs/playback.md,
"Where a moment lies in a file").

A camera file's key says when it starts; the container's own clock may start anywhere: at 0,
at 1.4 s (FFmpeg's MPEG-TS default, and cameras whose timestamps do not restart at 0), or
at a large value (a clock that never restarts; for MPEG-TS, one that wraps its 33 bits
inside the file). A moment ``t`` lies ``t - start`` into the file *counted from its first
frame*. The clips are made here (:mod:`tests.support.coded_clips`: each frame shows its
number) and decoded here with PyAV to find the expected frame: the last one whose time
from the first frame is not after the moment.
"""

from __future__ import annotations

import base64
import io
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import av
import pytest

from tests.support.coded_clips import (
    FFMPEG_DEFAULT_TS,
    coded_clip,
    decoded_frames,
    first_timestamp_s,
    frame_number,
)
from tests.support.tables import TableFactory
from video_index.core.keys import SegmentKey, segment_id
from video_index.media.remux import export_mp4, fragment
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world

DEVICE: Final = "cam-origins"
START: Final = at(29, 10)
SECONDS: Final = 8
#: Moments asked for, as ms into the file: its first frame, a keyframe, between frames
#: (the issue's 3.4 s and 6.0 s among them), and its last frame.
MOMENTS_MS: Final = (0, 1_000, 3_400, 3_419, 6_000, 7_990)
#: (container, first timestamp in s, muxer options): 0, 1.4 s (as FFmpeg's TS muxer puts it
#: by itself, and by the clip's own timestamps), and a large value — for MPEG-TS one 3.7 s
#: before its 33-bit clock wraps (2**33 / 90 kHz = 95,443.7 s), so the file crosses the wrap.
ORIGINS: Final = [
    ("ts", 0.0, None),
    ("ts", 0.0, FFMPEG_DEFAULT_TS),
    ("ts", 1.4, None),
    ("ts", 95_440.0, None),
    ("fmp4", 0.0, None),
    ("fmp4", 1.4, None),
    ("fmp4", 95_440.0, None),
    ("mp4", 0.0, None),
    ("mp4", 1.4, None),
    ("mp4", 95_440.0, None),
]


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


def _upload(world: ApiWorld, body: bytes, start: datetime, ext: str) -> None:
    duration_ms = SECONDS * 1000
    key = SegmentKey(
        kind="video",
        device=DEVICE,
        start=start,
        duration_ms=duration_ms,
        id=segment_id("video", DEVICE, start, duration_ms, body),
        ext=ext,
    ).key
    world.s3.put_object(Bucket=ev.BUCKET, Key=key, Body=body)


def _expected(frames: list[tuple[Fraction, int]], offset_ms: int) -> tuple[int, int]:
    """(number, ms from the first frame) of the last frame not after ``offset_ms``."""
    seconds, number = max((s, n) for s, n in frames if s * 1000 <= offset_ms)
    return number, int(seconds * 1000)


def _picture_number(jpeg: bytes) -> int:
    image: Any
    with av.open(io.BytesIO(jpeg)) as image:
        return frame_number(next(image.decode(video=0)).to_ndarray(format="rgb24"))


@pytest.mark.parametrize(("container", "start_s", "options"), ORIGINS)
def test_the_picture_of_t_is_the_frame_at_or_just_before_t_whatever_the_first_timestamp(
    world: ApiWorld, container: str, start_s: float, options: dict[str, str] | None
) -> None:
    # Given a file whose timestamps start at start_s (and FFmpeg's own 1.4 s for TS)
    body = coded_clip(container, seconds=SECONDS, start_s=start_s, muxer_options=options)
    expected_first = start_s + (1.4 if options else 0.0)
    if container == "ts" and expected_first > 2**33 / 90_000 - SECONDS:
        expected_first -= 2**33 / 90_000  # FFmpeg unwraps a file that crosses the wrap
    assert first_timestamp_s(body) == pytest.approx(expected_first, abs=1e-3)
    _upload(world, body, START, "ts" if container == "ts" else "mp4")
    frames = decoded_frames(body)
    for offset_ms in MOMENTS_MS:
        # When the picture of the moment offset_ms into the file is asked for
        moment = START + timedelta(milliseconds=offset_ms)
        status, answer, headers = world.get(
            f"/devices/{DEVICE}/frame", f"t={iso(moment)}&width=320"
        )
        assert status == 200, (offset_ms, answer)
        # Then it shows the frame at or just before it, counted from the file's first frame
        number, frame_ms = _expected(frames, offset_ms)
        assert _picture_number(base64.b64decode(answer)) == number, offset_ms
        assert headers["X-Frame-Time"] == iso(START + timedelta(milliseconds=frame_ms))


@pytest.mark.parametrize(("container", "start_s", "options"), ORIGINS)
def test_a_rendition_starts_its_first_frame_at_the_file_start(
    container: str, start_s: float, options: dict[str, str] | None
) -> None:
    # Given a file whose timestamps start at start_s
    body = coded_clip(container, seconds=2, start_s=start_s, muxer_options=options)
    start_ms = int(START.timestamp() * 1000)
    # When it is stream-copied into its fragmented rendition (decode times on the wall clock)
    rendition = fragment(body, decode_start_ms=start_ms)
    # Then its first frame is frame 0 at the file's wall-clock start, every frame kept in order
    assert first_timestamp_s(rendition) == pytest.approx(start_ms / 1000, abs=1e-3)
    assert [n for _, n in decoded_frames(rendition)] == [n for _, n in decoded_frames(body)]


def test_an_export_puts_each_file_where_the_previous_one_ended(tmp_path: Path) -> None:
    # Given three 2-second files whose clocks start at 1.4 s, at a large value and at 0,
    # in three containers
    sources = [
        coded_clip("ts", seconds=2, start_s=0, muxer_options=FFMPEG_DEFAULT_TS),
        coded_clip("fmp4", seconds=2, start_s=95_440.0),
        coded_clip("mp4", seconds=2, start_s=0.0),
    ]
    # When they are exported into one clip
    clip = tmp_path / "clip.mp4"
    export_mp4(sources, clip)
    # Then the clip shows each file's frames from its first one, each file starting where
    # the previous ended (frame i of file k at k * 2 s + i / 25 s)
    frames = decoded_frames(clip.read_bytes())
    per_file = 50
    assert len(frames) == 3 * per_file
    for position, (seconds, number) in enumerate(frames):
        assert number == position % per_file
        assert seconds == pytest.approx(position / 25, abs=0.002), position
