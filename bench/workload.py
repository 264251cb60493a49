"""A realistic camera workload: devices uploading fixed-length video segments.

Each device records back to back from a random offset within the first segment
length, and uploads a segment shortly after it ends, so the uploads of all
devices interleave in time the way a fleet's would. Object bodies put into S3
are tiny; the sizes the events report are realistic (~2.5 MB), and that is what
the read model indexes (events carry sequencers, so ingest never asks S3).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from video_index.core.keys import SegmentKey, format_key, segment_id
from worlds import events as ev

START: Final = datetime(2026, 11, 30, 12, tzinfo=UTC)
SEGMENT_MS: Final = 10_000
MEAN_SIZE: Final = 2_500_000
SQS_BATCH: Final = 10


@dataclass(frozen=True)
class Upload:
    segment: SegmentKey
    key: str
    body: bytes
    size: int
    uploaded_at: datetime


@dataclass(frozen=True)
class Workload:
    devices: int
    minutes: int
    seed: int = 20261130
    device_prefix: str = "cam"

    @property
    def segments_per_device(self) -> int:
        return self.minutes * 60_000 // SEGMENT_MS

    @property
    def segments(self) -> int:
        return self.devices * self.segments_per_device

    def describe(self) -> str:
        return (
            f"{self.devices} devices x {self.minutes} min of {SEGMENT_MS // 1000} s video "
            f"segments = {self.segments:,} segments"
        )

    def uploads(self) -> list[Upload]:
        """Every segment, in the order the cameras finish uploading them."""
        rng = random.Random(self.seed)
        out: list[Upload] = []
        for number in range(1, self.devices + 1):
            device = f"{self.device_prefix}-{number:03d}"
            offset = timedelta(milliseconds=rng.randrange(SEGMENT_MS))
            for index in range(self.segments_per_device):
                start = START + offset + timedelta(milliseconds=index * SEGMENT_MS)
                body = f"{device}/{index}".encode()
                segment = SegmentKey(
                    kind="video",
                    device=device,
                    start=start,
                    duration_ms=SEGMENT_MS,
                    id=segment_id("video", device, start, SEGMENT_MS, body),
                    ext="mp4",
                )
                out.append(
                    Upload(
                        segment=segment,
                        key=format_key(segment),
                        body=body,
                        size=rng.randint(MEAN_SIZE - 200_000, MEAN_SIZE + 200_000),
                        uploaded_at=segment.end + timedelta(milliseconds=rng.randint(300, 2_500)),
                    )
                )
        out.sort(key=lambda upload: (upload.uploaded_at, upload.key))
        return out


def put_objects(s3: Any, bucket: str, uploads: list[Upload]) -> dict[str, str]:
    """Put every segment's (tiny) object; the ETag S3 returned, by key."""
    return {
        upload.key: str(
            s3.put_object(Bucket=bucket, Key=upload.key, Body=upload.body)["ETag"]
        ).strip('"')
        for upload in uploads
    }


def sequencers(uploads: list[Upload]) -> Iterator[str]:
    """S3-like sequencers (18 upper-case hex digits), increasing in upload order."""
    base = 0x0055AED6DCD9028100
    for index, _ in enumerate(uploads):
        yield f"{base + index * 0x1F3:018X}"


def sqs_events(uploads: list[Upload], etags: dict[str, str]) -> list[dict[str, Any]]:
    """The S3 notifications of the uploads, one record per SQS message, in batches of 10."""
    messages = [
        ev.sqs_record(
            ev.s3_notification(
                ev.s3_record(
                    upload.key,
                    event_name="ObjectCreated:Put",
                    size=upload.size,
                    etag=etags[upload.key],
                    sequencer=sequencer,
                    event_time=upload.uploaded_at,
                )
            )
        )
        for upload, sequencer in zip(uploads, sequencers(uploads), strict=True)
    ]
    return [ev.sqs_event(*messages[i : i + SQS_BATCH]) for i in range(0, len(messages), SQS_BATCH)]
