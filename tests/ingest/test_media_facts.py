"""Media facts learned at ingest (docs/playback.md): one ranged GET per video object.

Real clips (PyAV) and what cameras get wrong — a cut file, a wrong extension, a huge
``moov``, an empty object — arrive in ONE SQS batch. Each is indexed (it exists) with
the container it really is; what cannot be played is flagged and left out of the
playlist; none fails the batch. S3 calls are counted on the client ingest uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import m3u8
import pytest

from tests.support.tables import TableFactory
from video_index.core.keys import SegmentKey, segment_id
from video_index.media.probe import PROBE_BYTES
from video_index.media.synthetic import synthetic_clip
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world
from worlds.media import clip

DEVICE = "cam-probe"


def _huge_moov() -> bytes:
    """A real progressive MP4 whose sample tables outgrow the probe window (12,000 frames)."""
    return synthetic_clip(
        seconds=120, container="mp4", fps=100, size=(32, 32), keyframe_seconds=0.02
    )


def _cut_in_init() -> bytes:
    data = clip("fmp4")
    return data[: data.index(b"moov") + 16]


@dataclass(frozen=True)
class Case:
    name: str
    ext: str
    body: Callable[[], bytes]
    container: str
    playable: bool


CASES = [
    Case("ts", "ts", lambda: clip("ts"), "mpegts", True),
    Case("fmp4", "mp4", lambda: clip("fmp4"), "fmp4", True),
    Case("progressive", "mp4", lambda: clip("mp4"), "mp4-progressive", True),
    Case("huge-moov", "mp4", _huge_moov, "mp4-progressive", True),
    # a TS cut inside its last packet: players skip a partial packet
    Case("ts-cut", "ts", lambda: clip("ts")[:-100], "mpegts", True),
    # an MP4 cut inside its moov: nothing initialises a decoder
    Case("fmp4-cut-in-init", "mp4", _cut_in_init, "unknown", False),
    Case("mp4-named-ts", "ts", lambda: clip("fmp4"), "fmp4", False),
    Case("ts-named-mp4", "mp4", lambda: clip("ts"), "mpegts", False),
    Case("text", "mp4", lambda: b"camera firmware error 17\n", "unknown", False),
    Case("empty", "mp4", lambda: b"", "unknown", False),
]


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


def _gets(world: ApiWorld) -> list[dict[str, Any]]:
    """Records every GetObject the segment-bucket client makes (ingest shares it)."""
    calls: list[dict[str, Any]] = []
    world.s3.meta.events.register(
        "provide-client-params.s3.GetObject", lambda params, **_: calls.append(dict(params))
    )
    return calls


def _put_all(world: ApiWorld) -> tuple[dict[str, SegmentKey], list[dict[str, Any]]]:
    segments, records = {}, []
    for index, case in enumerate(CASES):
        body, start = case.body(), at(29, 10, index)
        segment = SegmentKey(
            kind="video",
            device=DEVICE,
            start=start,
            duration_ms=2000,
            id=segment_id("video", DEVICE, start, 2000, body),
            ext=case.ext,
        )
        put = world.s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=body)
        records.append(
            ev.sqs_record(
                ev.s3_notification(
                    ev.s3_record(
                        segment.key,
                        size=len(body),
                        etag=put["ETag"].strip('"'),
                        sequencer=f"{0x1000 + index:X}",
                    )
                )
            )
        )
        segments[case.name] = segment
    return segments, records


def test_one_batch_of_odd_files_indexes_each_as_what_it_is(world: ApiWorld) -> None:
    # Given every case uploaded, and the GETs ingest makes recorded
    segments, records = _put_all(world)
    gets = _gets(world)
    # When their events arrive in one batch
    response = world.ingest.handle(ev.sqs_event(*records), None)
    # Then no record fails
    assert response == {"batchItemFailures": []}
    # And each file is indexed with the container it really is, and flagged if unplayable
    window = {"from": iso(at(29, 10)), "to": iso(at(29, 10) + timedelta(hours=1))}
    status, body, _ = world.get(
        f"/devices/{DEVICE}/segments", "&".join(f"{k}={v}" for k, v in window.items())
    )
    assert status == 200
    found = {item["key"]: (item["container"], item["playable"]) for item in body["items"]}
    assert found == {segments[c.name].key: (c.container, c.playable) for c in CASES}
    # And ingest read each non-empty object once, its first 64 KiB at most
    non_empty = [c for c in CASES if c.body()]
    assert sorted(g["Key"] for g in gets) == sorted(segments[c.name].key for c in non_empty)
    for get in gets:
        assert get["Range"].startswith("bytes=0-")
        assert int(get["Range"].removeprefix("bytes=0-")) < PROBE_BYTES
    # And the playlist lists the playable files only
    status, text, _ = world.get(
        f"/devices/{DEVICE}/playlist.m3u8", "&".join(f"{k}={v}" for k, v in window.items())
    )
    assert status == 200
    listed = [s.program_date_time for s in m3u8.loads(text).segments]
    assert listed == [segments[c.name].start for c in CASES if c.playable]


def test_a_redelivered_batch_reads_no_object_again(world: ApiWorld) -> None:
    # Given a batch already ingested
    _, records = _put_all(world)
    assert world.ingest.handle(ev.sqs_event(*records), None) == {"batchItemFailures": []}
    gets = _gets(world)
    # When SQS delivers it again (at-least-once)
    response = world.ingest.handle(ev.sqs_event(*records), None)
    # Then nothing fails and no object is read a second time
    assert response == {"batchItemFailures": []}
    assert gets == []
