"""Pictures of moments (docs/playback.md, "Frames"): time to a picture, cold and stored.

``Frames.picture`` over moto in-process S3, for moments spread over 10-second MPEG-TS,
fragmented MP4, progressive MP4 (``faststart``) and progressive MP4 with its index last
(a keyframe every 2 s, so a cold picture decodes up to 50 frames): the first request
(list, ranged GETs of the file, decode from the keyframe before the moment, JPEG, PUT)
against a repeated one (list, HEAD and GET of the stored picture). Every S3 GET is
counted with its bytes: the bytes read per picture against the file's size (ranged
reads, :mod:`video_index.media.ranged`: a moment early in a file reads little of it,
one near its end nearly all). Each picture is decoded again and its frame time checked
against the moment asked for: a figure of a wrong picture is not a figure.
"""

from __future__ import annotations

import io
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import av
import boto3
from moto import mock_aws
from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from video_index.aws.clients import S3_CONFIG
from video_index.aws.objects import ObjectStore
from video_index.core.keys import SegmentKey, segment_id
from video_index.core.timeunits import to_epoch_ms
from video_index.media.frames import Frames
from video_index.media.synthetic import ContainerName, synthetic_clip
from worlds import events as ev

FILE_SECONDS: Final = 10
FPS: Final = 25
KEYFRAME_SECONDS: Final = 2.0
WIDTH: Final = 320
START: Final = datetime(2026, 11, 29, 10, tzinfo=UTC)
DEVICE: Final = "bench-frames"


def frames_benchmark(context: BenchContext) -> None:
    size = (160, 96) if context.quick else (1280, 720)
    moments = 4 if context.quick else 12
    table = Table(
        title=f"Frame pictures ({FILE_SECONDS} s H.264 files {size[0]}x{size[1]}, "
        f"keyframe every {KEYFRAME_SECONDS:g} s, {WIDTH} px JPEG, moto in-process)"
    )
    for column in ("container", "cold ms (median)", "stored ms (median)",
                   "bytes read cold: median (min-max)", "file bytes", "GETs cold / stored",
                   "JPEG bytes"):  # fmt: skip
        table.add_column(column, justify="right" if column != "container" else "left")
    containers: tuple[ContainerName, ...] = ("ts", "fmp4", "mp4", "mp4-index-last")
    for container in containers:
        row = _measure(container, size, moments)
        table.add_row(container, *row)
    context.console.print(table)


def _measure(container: ContainerName, size: tuple[int, int], moments: int) -> list[str]:
    clip = synthetic_clip(
        seconds=FILE_SECONDS,
        container=container,
        fps=FPS,
        size=size,
        keyframe_seconds=KEYFRAME_SECONDS,
    )
    with mock_aws():
        s3 = boto3.client("s3", config=S3_CONFIG)
        s3.create_bucket(Bucket=ev.BUCKET)
        segment = SegmentKey(
            kind="video",
            device=DEVICE,
            start=START,
            duration_ms=FILE_SECONDS * 1000,
            id=segment_id("video", DEVICE, START, FILE_SECONDS * 1000, clip),
            ext="ts" if container == "ts" else "mp4",
        )
        s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=clip)
        gets: list[int] = []
        s3.meta.events.register("after-call.s3.GetObject", _counter(gets))
        frames = Frames(ObjectStore(s3, ev.BUCKET))
        cold, stored, cold_bytes, cold_gets, stored_gets, jpeg = [], [], [], [], [], 0
        for index in range(moments):
            # Spread over the file, each just before a keyframe (the most decoding).
            offset_ms = int((index + 0.97) * FILE_SECONDS * 1000 / moments)
            at_ms = to_epoch_ms(START) + offset_ms
            gets.clear()
            began = time.perf_counter()
            picture = frames.picture(DEVICE, at_ms, WIDTH)
            cold.append((time.perf_counter() - began) * 1000)
            cold_bytes.append(sum(gets))
            cold_gets.append(len(gets))
            _check(picture.jpeg, picture.frame_ms, at_ms)
            gets.clear()
            began = time.perf_counter()
            again = frames.picture(DEVICE, at_ms, WIDTH)
            stored.append((time.perf_counter() - began) * 1000)
            stored_gets.append(len(gets))
            if again.made or again.jpeg != picture.jpeg:
                raise BenchmarkFailed("a repeated picture was made again")
            jpeg = max(jpeg, len(picture.jpeg))
    return [
        f"{statistics.median(cold):.1f}",
        f"{statistics.median(stored):.1f}",
        f"{statistics.median(cold_bytes):,.0f} = {statistics.median(cold_bytes) / len(clip):.0%} "
        f"({min(cold_bytes) / len(clip):.0%}-{max(cold_bytes) / len(clip):.0%})",
        f"{len(clip):,}",
        f"{max(cold_gets)} / {max(stored_gets)}",
        f"{jpeg:,}",
    ]


def _counter(gets: list[int]) -> Any:
    def count(http_response: Any, parsed: dict[str, Any], **_: Any) -> None:
        gets.append(int(parsed.get("ContentLength", 0)))

    return count


def _check(jpeg: bytes, frame_ms: int, at_ms: int) -> None:
    image: Any
    with av.open(io.BytesIO(jpeg)) as image:
        picture = next(image.decode(video=0))
    if picture.width != WIDTH:
        raise BenchmarkFailed(f"a picture is {picture.width} px wide, not {WIDTH}")
    if not at_ms - timedelta(seconds=1 / FPS) / timedelta(milliseconds=1) < frame_ms <= at_ms:
        raise BenchmarkFailed(f"the picture of {at_ms} shows the frame of {frame_ms}")
