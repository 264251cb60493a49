"""Media costs (docs/playback.md): the ingest probe, renditions, and export throughput.

Three figures, each beside a baseline measured in the same run:

* **probe** — video objects ingested through ``IngestService`` (S3 and DynamoDB in
  moto), every S3 GET counted with its ``Range``; the baseline is the same objects
  ingested as sensor data (no probe). Extra requests and bytes per video segment.
* **renditions** — a progressive 10-second clip fragmented on first request
  (``Renditions.ensure``) against answering a presigned redirect (what every later
  request costs); the rendition's bytes against the source's; priced per hour of
  video at a stated camera bitrate.
* **export** — ``export_mp4`` stream-copying a window of MPEG-TS files into one
  faststart MP4, against ``ffmpeg -f concat -c copy -movflags +faststart`` of the
  same files (the ffmpeg binary of imageio-ffmpeg). Both outputs are decoded and
  their frames counted: a figure of a wrong result is not a figure.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

import boto3
from moto import mock_aws
from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from video_index.aws.clients import S3_CONFIG, Clients
from video_index.aws.objects import ObjectStore
from video_index.core.keys import SegmentKey, segment_id
from video_index.core.settings import Settings
from video_index.core.table_schema import create_tables
from video_index.ingest.service import build_ingest_service
from video_index.media.remux import export_mp4
from video_index.media.renditions import Renditions
from video_index.media.synthetic import count_frames, epoch, synthetic_clip
from worlds import events as ev

#: S3 Standard, us-east-1, as published in 2026: $/GB-month, $/1,000 PUT, $/1,000 GET.
STORAGE_PER_GB_MONTH: Final = 0.023
PUT_PER_1000: Final = 0.005
GET_PER_1000: Final = 0.0004
#: What a typical 1080p camera records (H.264), for the per-hour price.
CAMERA_MBIT_S: Final = 4.0
FILE_SECONDS: Final = 10
FPS: Final = 25


@dataclass(frozen=True)
class Sizes:
    probe_objects: int
    rendition_files: int
    export_files: int
    frame: tuple[int, int]


FULL: Final = Sizes(probe_objects=300, rendition_files=6, export_files=18, frame=(640, 360))
QUICK: Final = Sizes(probe_objects=30, rendition_files=2, export_files=4, frame=(160, 96))


def media_benchmark(context: BenchContext) -> None:
    sizes = QUICK if context.quick else FULL
    console = context.console
    clip = synthetic_clip(seconds=FILE_SECONDS, container="ts", fps=FPS, size=sizes.frame)
    progressive = synthetic_clip(seconds=FILE_SECONDS, container="mp4", fps=FPS, size=sizes.frame)
    with mock_aws():
        probe = _probe(sizes.probe_objects, clip)
        rendition = _renditions(sizes.rendition_files, progressive)
    export = _export(sizes.export_files, clip)

    table = Table(
        title=f"Media costs ({FILE_SECONDS} s H.264 files, {sizes.frame[0]}x{sizes.frame[1]})"
    )
    table.add_column("figure")
    table.add_column("measured", justify="right")
    table.add_column("baseline (same run)", justify="right")
    table.add_column("note")
    table.add_row(
        "ingest: S3 GETs per segment",
        f"{probe['video_gets']:.2f}",
        f"{probe['sensor_gets']:.2f}",
        "baseline: the same objects ingested as sensor data (no probe)",
    )
    table.add_row(
        "ingest: bytes read per segment",
        f"{probe['video_bytes']:,.0f}",
        f"{probe['sensor_bytes']:,.0f}",
        f"of {len(clip):,} B files; the probe reads at most 65,536 B",
    )
    table.add_row(
        "ingest: ms per segment",
        f"{probe['video_ms']:.2f}",
        f"{probe['sensor_ms']:.2f}",
        "moto in-process: the CPU of the path, not S3 latency",
    )
    table.add_row(
        "rendition: first request, ms per file",
        f"{rendition['make_ms']:.1f}",
        f"{rendition['redirect_ms']:.2f}",
        "baseline: a later request (exists check + presign)",
    )
    table.add_row(
        "rendition: bytes / source bytes",
        f"{rendition['ratio']:.3f}",
        "1.000",
        "a stream copy: the same samples in fragments",
    )
    per_hour_gb = CAMERA_MBIT_S / 8 * 3600 / 1000 * rendition["ratio"]
    files = 3600 // FILE_SECONDS
    storage = per_hour_gb * STORAGE_PER_GB_MONTH
    requests = files * (2 * PUT_PER_1000 + GET_PER_1000) / 1000
    table.add_row(
        "rendition: $ per hour of video watched",
        f"{storage:.4f}/month + {requests:.4f}",
        "0",
        f"{per_hour_gb:.2f} GB at {CAMERA_MBIT_S:g} Mbit/s; {files} files × (1 GET + 2 PUT)",
    )
    table.add_row(
        "export: MB/s stream copy",
        f"{export['ours_mb_s']:.1f}",
        f"{export['ffmpeg_mb_s']:.1f}",
        f"{sizes.export_files} files, {export['mb']:.1f} MB; baseline: ffmpeg -c copy",
    )
    console.print(table)


def _world(s3: Any) -> tuple[Any, Settings]:
    dynamodb = boto3.client("dynamodb")
    settings = Settings(bucket=ev.BUCKET, table="bench-media")
    create_tables(dynamodb, settings.table)
    s3.create_bucket(Bucket=ev.BUCKET)
    return build_ingest_service(settings, Clients(dynamodb=dynamodb, s3=s3, sqs=None)), settings


def _probe(count: int, clip: bytes) -> dict[str, float]:
    s3 = boto3.client("s3", config=S3_CONFIG)
    service, _ = _world(s3)
    gets: list[dict[str, Any]] = []
    s3.meta.events.register(
        "provide-client-params.s3.GetObject", lambda params, **_: gets.append(dict(params))
    )
    figures: dict[str, float] = {}
    for kind, ext in (("sensor", "json"), ("video", "ts")):
        records = []
        for index in range(count):
            start = epoch() + timedelta(seconds=FILE_SECONDS * index)
            body = clip + index.to_bytes(4, "big") if kind == "sensor" else clip
            segment = SegmentKey(
                kind=kind,
                device=f"bench-{kind}",
                start=start,
                duration_ms=FILE_SECONDS * 1000,
                id=segment_id(kind, f"bench-{kind}", start, FILE_SECONDS * 1000, body),
                ext=ext,
            )
            etag = s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=body)["ETag"]
            records.append(
                ev.sqs_record(
                    ev.s3_notification(
                        ev.s3_record(segment.key, size=len(body), etag=etag.strip('"'))
                    )
                )
            )
        gets.clear()
        began = time.perf_counter()
        for batch in range(0, count, 10):
            response = service.handle(ev.sqs_event(*records[batch : batch + 10]), None)
            if response["batchItemFailures"]:
                raise BenchmarkFailed(f"ingest failed records: {response}")
        elapsed = time.perf_counter() - began
        read = sum(_range_length(g.get("Range")) for g in gets)
        figures[f"{kind}_gets"] = len(gets) / count
        figures[f"{kind}_bytes"] = read / count
        figures[f"{kind}_ms"] = elapsed * 1000 / count
    if figures["video_gets"] != 1.0 or figures["sensor_gets"] != 0.0:
        raise BenchmarkFailed(f"expected exactly one probe GET per video object: {figures}")
    return figures


def _range_length(header: str | None) -> int:
    if not header:
        raise BenchmarkFailed("a GET without a Range: the probe must never read a whole object")
    first, last = header.removeprefix("bytes=").split("-")
    return int(last) - int(first) + 1


def _renditions(count: int, progressive: bytes) -> dict[str, float]:
    s3 = boto3.client("s3", config=S3_CONFIG)
    s3.create_bucket(Bucket=ev.BUCKET)
    objects = ObjectStore(s3, ev.BUCKET)
    renditions = Renditions(objects)
    make, later, ratios = [], [], []
    for index in range(count):
        start = epoch() + timedelta(seconds=FILE_SECONDS * index)
        body = progressive
        key = SegmentKey(
            kind="video",
            device="bench-prog",
            start=start,
            duration_ms=FILE_SECONDS * 1000,
            id=segment_id("video", "bench-prog", start, FILE_SECONDS * 1000, body),
            ext="mp4",
        ).key
        s3.put_object(Bucket=ev.BUCKET, Key=key, Body=body)
        began = time.perf_counter()
        init_key, data_key = renditions.ensure(key)
        make.append(time.perf_counter() - began)
        began = time.perf_counter()
        renditions.ensure(key)
        objects.presign_get(data_key, 900)
        later.append(time.perf_counter() - began)
        made = objects.get_bytes(init_key) + objects.get_bytes(data_key)
        if count_frames(made) != FILE_SECONDS * FPS:
            raise BenchmarkFailed("a rendition lost frames")
        ratios.append(len(made) / len(body))
    return {
        "make_ms": statistics.median(make) * 1000,
        "redirect_ms": statistics.median(later) * 1000,
        "ratio": statistics.mean(ratios),
    }


def _export(count: int, clip: bytes) -> dict[str, float]:
    import imageio_ffmpeg

    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        root = Path(folder)
        sources = []
        for index in range(count):
            path = root / f"{index:04d}.ts"
            path.write_bytes(clip)
            sources.append(path)
        total_mb = sum(p.stat().st_size for p in sources) / 1e6
        ours = root / "ours.mp4"
        began = time.perf_counter()
        export_mp4(sources, ours)
        ours_s = time.perf_counter() - began
        listing = root / "list.txt"
        listing.write_text("".join(f"file '{p}'\n" for p in sources))
        theirs = root / "ffmpeg.mp4"
        began = time.perf_counter()
        subprocess.run(
            [
                imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-f", "concat", "-safe", "0",
                "-i", str(listing), "-c", "copy", "-movflags", "+faststart", str(theirs),
            ],
            check=True,
        )  # fmt: skip
        ffmpeg_s = time.perf_counter() - began
        expected = count * FILE_SECONDS * FPS
        for name, path in (("export_mp4", ours), ("ffmpeg", theirs)):
            frames = count_frames(path.read_bytes())
            if frames != expected:
                raise BenchmarkFailed(f"{name} wrote {frames} frames, not {expected}")
    return {"mb": total_mb, "ours_mb_s": total_mb / ours_s, "ffmpeg_mb_s": total_mb / ffmpeg_s}
