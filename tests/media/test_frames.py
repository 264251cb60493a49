"""Pictures of moments: ``GET /devices/{device}/frame?t=…&width=…`` (docs/playback.md).

The clips are made here with PyAV (a moving pattern: every frame differs), and the
expected frame is found by decoding the source here with PyAV: the last frame whose
time is not after the moment asked for.
"""

from __future__ import annotations

import base64
import io
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

import av
import numpy as np
import pytest

from tests.support.tables import TableFactory
from video_index.core.keys import SegmentKey, segment_id
from video_index.media.frames import frame_key
from video_index.media.synthetic import ContainerName, synthetic_clip
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world

DEVICE = "cam-frames"
START = at(29, 10)
SECONDS = 3.0


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


def _upload(world: ApiWorld, body: bytes, start: datetime, duration_ms: int, ext: str) -> str:
    segment = SegmentKey(
        kind="video",
        device=DEVICE,
        start=start,
        duration_ms=duration_ms,
        id=segment_id("video", DEVICE, start, duration_ms, body),
        ext=ext,
    )
    world.s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=body)
    return str(segment.key)


def _frames_of(source: bytes) -> list[tuple[int, Any]]:
    """Every frame of ``source`` as (ms from the first frame, RGB array), by PyAV."""
    container: Any
    with av.open(io.BytesIO(source)) as container:
        stream = container.streams.video[0]
        base, origin = Fraction(stream.time_base), stream.start_time or 0
        return [
            (int((frame.pts - origin) * base * 1000), frame.to_ndarray(format="rgb24"))
            for frame in container.decode(stream)
        ]


def _decode_jpeg(body: bytes) -> Any:
    image: Any
    with av.open(io.BytesIO(body)) as image:
        return next(image.decode(video=0))


def _frame(world: ApiWorld, moment: datetime, width: int = 160) -> tuple[int, Any, dict[str, str]]:
    status, body, headers = world.get(f"/devices/{DEVICE}/frame", f"t={iso(moment)}&width={width}")
    if status == 200:
        body = base64.b64decode(body)
    return status, body, headers


def _distance(picture: Any, frame: Any) -> float:
    return float(np.abs(picture.astype(int) - frame.astype(int)).mean())


@pytest.mark.parametrize("container", ["ts", "fmp4", "mp4", "mp4-index-last"])
def test_the_picture_is_the_frame_at_or_just_before_the_moment(
    world: ApiWorld, container: ContainerName
) -> None:
    # Given a 3-second clip (25 fps, a keyframe a second) covering its key's span
    source = synthetic_clip(seconds=SECONDS, container=container)
    _upload(world, source, START, int(SECONDS * 1000), "ts" if container == "ts" else "mp4")
    frames = _frames_of(source)
    # When the picture of a moment between two frames, after the second keyframe, is asked for
    offset_ms = 1_530
    status, body, headers = _frame(world, START + timedelta(milliseconds=offset_ms))
    # Then it is a JPEG of the last frame not after the moment, at the source's size
    assert status == 200 and headers["Content-Type"] == "image/jpeg"
    expected_index = max(i for i, (ms, _) in enumerate(frames) if ms <= offset_ms)
    expected_ms, expected = frames[expected_index]
    assert headers["X-Frame-Time"] == iso(START + timedelta(milliseconds=expected_ms))
    picture = _decode_jpeg(body)
    assert (picture.width, picture.height) == (160, 96)
    rgb = picture.to_ndarray(format="rgb24")
    # ... the very frame: nearer to it than to the frame before or after it
    assert _distance(rgb, expected) < 8
    for neighbour in (expected_index - 1, expected_index + 1):
        assert _distance(rgb, frames[neighbour][1]) > _distance(rgb, expected)
    # ... and a browser may keep it
    assert "immutable" in headers["Cache-Control"]


def test_the_picture_is_scaled_to_the_width_asked_for(world: ApiWorld) -> None:
    # Given a clip
    _upload(world, synthetic_clip(seconds=1, container="ts"), START, 1000, "ts")
    # When its picture is asked for 80 pixels wide
    status, body, _ = _frame(world, START, width=80)
    # Then it is 80 wide, the aspect kept
    assert status == 200
    picture = _decode_jpeg(body)
    assert (picture.width, picture.height) == (80, 48)


def test_a_moment_without_footage_has_no_picture_even_between_two_files(
    world: ApiWorld,
) -> None:
    # Given two files with a gap of a second between them
    _upload(world, synthetic_clip(seconds=1, container="ts"), START, 1000, "ts")
    _upload(
        world, synthetic_clip(seconds=1, container="ts"), START + timedelta(seconds=2), 1000, "ts"
    )
    # When the picture of a moment in the gap is asked for
    status, body, _ = _frame(world, START + timedelta(milliseconds=1_500))
    # Then there is none: 404 naming t, no frame borrowed from either file
    assert status == 404 and body["error"]["parameter"] == "t"


def test_the_file_covering_the_moment_is_found_across_an_hour_boundary(world: ApiWorld) -> None:
    # Given a file starting a second before the hour (its key in the previous hour's folder)
    start = at(29, 10, 59, 59)
    _upload(world, synthetic_clip(seconds=2, container="ts"), start, 2000, "ts")
    # When the picture of a moment after the hour is asked for
    status, _, headers = _frame(world, at(29, 11, 0, 0, 500))
    # Then it comes from that file
    assert status == 200
    assert headers["X-Frame-Time"] == iso(at(29, 11, 0, 0, 480))


@pytest.mark.parametrize(
    ("query", "parameter"),
    [("", "t"), ("t=yesterday", "t"), ("t=2026-11-29T10:00:00Z&width=10", "width"),
     ("t=2026-11-29T10:00:00Z&width=5000", "width")],
)  # fmt: skip
def test_a_bad_frame_request_is_a_400_naming_the_parameter(
    world: ApiWorld, query: str, parameter: str
) -> None:
    status, body, _ = world.get(f"/devices/{DEVICE}/frame", query)
    assert status == 400 and body["error"]["parameter"] == parameter


def _count_gets(world: ApiWorld) -> list[str]:
    keys: list[str] = []
    world.s3.meta.events.register(
        "provide-client-params.s3.GetObject", lambda params, **_: keys.append(params["Key"])
    )
    return keys


def test_the_second_request_is_served_from_the_store(world: ApiWorld) -> None:
    # Given a clip and the picture of one of its moments asked for once
    source_key = _upload(world, synthetic_clip(seconds=2, container="ts"), START, 2000, "ts")
    moment = START + timedelta(milliseconds=700)
    first = _frame(world, moment)
    gets = _count_gets(world)
    # When it is asked for again
    second = _frame(world, moment)
    # Then the same picture comes back without reading the video file again
    assert first[0] == second[0] == 200 and first[1] == second[1]
    assert source_key not in gets
    assert frame_key(source_key, 700, 160) in gets


def test_a_stored_picture_of_another_version_of_the_file_is_made_again(world: ApiWorld) -> None:
    # Given a picture made of a file, and a planted (or stale) picture in its place
    source_key = _upload(world, synthetic_clip(seconds=2, container="ts"), START, 2000, "ts")
    moment = START + timedelta(milliseconds=700)
    made = _frame(world, moment)[1]
    world.s3.put_object(
        Bucket=ev.BUCKET,
        Key=frame_key(source_key, 700, 160),
        Body=b"not this",
        Metadata={"source-etag": "another", "frame-ms": "0"},
    )
    gets = _count_gets(world)
    # When the picture is asked for again
    status, body, _ = _frame(world, moment)
    # Then it is made again from the file, not taken from the store
    assert status == 200 and body == made
    assert source_key in gets


def _count_ranged_gets(world: ApiWorld, key: str) -> list[int]:
    """The bytes of each GET of ``key`` from now on (each must be a ranged one)."""
    sizes: list[int] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        if params["Key"] == key:
            assert params.get("Range", "").startswith("bytes="), params
            sizes.append(-1)

    def measure(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        if sizes and sizes[-1] == -1:
            sizes[-1] = int(parsed.get("ContentLength", 0))

    world.s3.meta.events.register("provide-client-params.s3.GetObject", record)
    world.s3.meta.events.register("after-call.s3.GetObject", measure)
    return sizes


#: The most GETs of the video file one picture may take: the first read; the index of an
#: MP4 that ends with it; samples outside the first read (docs/playback.md, "Frames").
MOST_READS = {"ts": 1, "fmp4": 1, "mp4": 1, "mp4-index-last": 3}


@pytest.mark.parametrize("container", ["ts", "fmp4", "mp4", "mp4-index-last"])
def test_a_picture_early_in_a_file_reads_a_part_of_it(
    world: ApiWorld, container: ContainerName
) -> None:
    # Given a 10-second 640x360 clip, its frames decoded here
    source = synthetic_clip(seconds=10, container=container, size=(640, 360))
    key = _upload(world, source, START, 10_000, "ts" if container == "ts" else "mp4")
    frames = _frames_of(source)
    gets = _count_ranged_gets(world, key)
    # When the picture of a moment 1.5 s into it is asked for
    status, body, headers = _frame(world, START + timedelta(milliseconds=1_530), width=320)
    # Then it is the last frame not after the moment
    assert status == 200
    expected_ms = max(ms for ms, _ in frames if ms <= 1_530)
    assert headers["X-Frame-Time"] == iso(START + timedelta(milliseconds=expected_ms))
    assert _decode_jpeg(body).width == 320
    # And it was made of ranged reads of less than the file, in as few reads as its shape needs
    assert 1 <= len(gets) <= MOST_READS[container], gets
    assert sum(gets) < len(source) * 0.75, (sum(gets), len(source))


@pytest.mark.parametrize("container", ["ts", "fmp4", "mp4"])
def test_a_first_read_that_ends_too_soon_is_followed_by_one_read_of_the_rest(
    world: ApiWorld, container: ContainerName, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a clip, and a first read that ends well before the moment's bytes
    from video_index.media import ranged

    monkeypatch.setattr(ranged, "first_read_end", lambda size, *_: size // 10)
    source = synthetic_clip(seconds=10, container=container, size=(640, 360))
    key = _upload(world, source, START, 10_000, "ts" if container == "ts" else "mp4")
    frames = _frames_of(source)
    gets = _count_ranged_gets(world, key)
    # When the picture of a moment late in the file is asked for
    status, body, headers = _frame(world, START + timedelta(milliseconds=8_730))
    # Then the rest of the file was read once more, and the picture is the right frame
    assert status == 200
    assert len(gets) == 2 and sum(gets) == len(source), gets
    expected_index = max(i for i, (ms, _) in enumerate(frames) if ms <= 8_730)
    expected_ms, expected = frames[expected_index]
    assert headers["X-Frame-Time"] == iso(START + timedelta(milliseconds=expected_ms))
    rgb = _decode_jpeg(body).to_ndarray(format="rgb24")
    small = expected[::4, ::4][: rgb.shape[0], : rgb.shape[1]]
    assert rgb.shape[:2] == (90, 160) and _distance(rgb, small) < 16


def test_a_moment_in_the_last_frame_of_a_file_is_read_to_the_end(world: ApiWorld) -> None:
    # Given a clip, and the moment of its very last frame
    source = synthetic_clip(seconds=2, container="ts", size=(320, 180))
    key = _upload(world, source, START, 2_000, "ts")
    last_ms = _frames_of(source)[-1][0]
    gets = _count_ranged_gets(world, key)
    # When its picture is asked for
    status, _, headers = _frame(world, START + timedelta(milliseconds=1_999))
    # Then it is that last frame (no frame after it exists: the whole file was read)
    assert status == 200
    assert headers["X-Frame-Time"] == iso(START + timedelta(milliseconds=last_ms))
    assert sum(gets) == len(source)
