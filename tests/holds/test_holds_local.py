"""Holds end to end on ``video-index local`` (docs/holds.md): footage past retention, a hold
over part of it, a retention run, a deletion refused over the hold, a release and the
next run.

The stack runs on an injected clock (``--now``), so "past retention" never depends on
today's date; the retention run is ``video-index retention run --ready-file``, the
daily job's code on the stack's bucket, holds table, retention and clock. Segments are
real H.264 (MPEG-TS) clips; "plays" means the playlist the viewer loads lists the held
segments and their bytes, fetched from its URLs, decode to the frames they were made of.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from tests.support.local_stack import (
    EVENT_TIMEOUT,
    RunningStack,
    iso,
    listed,
    poll,
    start_local,
    stop,
)
from video_index.cli.main import main
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.silence import DEFAULT_RETENTION_DAYS
from video_index.media.synthetic import synthetic_clip

DEVICE = "cam-evidence"
NOW = datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
#: Footage recorded twice the video retention before the stack's "now".
FIRST = NOW - timedelta(days=2 * DEFAULT_RETENTION_DAYS["video"])
SECONDS, FPS, COUNT = 2, 25, 6
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    running = start_local(tmp_path_factory.mktemp("holds-local"), "--now", iso(NOW))
    try:
        yield running
    finally:
        stop(running.process)


def _cli(stack: RunningStack, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main([*args, "--ready-file", str(stack.ready_file)])
    return code, capsys.readouterr().out


def _upload(stack: RunningStack) -> list[SegmentKey]:
    """``COUNT`` back-to-back real clips of ``SECONDS`` from ``FIRST``."""
    s3, segments = stack.client("s3"), []
    for n in range(COUNT):
        start = FIRST + timedelta(seconds=n * SECONDS)
        content = synthetic_clip(seconds=SECONDS, fps=FPS, container="ts", label=f"s{n}")
        duration = SECONDS * 1000
        segment = SegmentKey(
            kind="video",
            device=DEVICE,
            start=start,
            duration_ms=duration,
            id=segment_id("video", DEVICE, start, duration, content),
            ext="ts",
        )
        s3.put_object(Bucket=stack.ready["bucket"], Key=format_key(segment), Body=content)
        segments.append(segment)
    return segments


def _frames_played(stack: RunningStack, low: datetime, high: datetime) -> tuple[int, int]:
    """(files, decoded frames) of the HLS playlist of ``[low, high)``, every file fetched."""
    from video_index.media.synthetic import count_frames

    url = f"{stack.ready['api']}/devices/{DEVICE}/playlist.m3u8?from={iso(low)}&to={iso(high)}"
    with _OPENER.open(url, timeout=10) as response:
        playlist = response.read().decode()
    uris = [line for line in playlist.splitlines() if line and not line.startswith("#")]
    frames = 0
    for uri in uris:
        with _OPENER.open(urljoin(url, uri), timeout=10) as media:
            frames += count_frames(media.read(), "mpegts")
    return len(uris), frames


def _device_names(stack: RunningStack) -> set[str]:
    with _OPENER.open(f"{stack.ready['api']}/devices?limit=100", timeout=10) as response:
        return {item["device"] for item in json.loads(response.read())["items"]}


def _bucket_keys(stack: RunningStack) -> set[str]:
    s3 = stack.client("s3")
    listing = s3.list_objects_v2(Bucket=stack.ready["bucket"], Prefix=f"v1/video/{DEVICE}/")
    return {item["Key"] for item in listing.get("Contents", [])}


def _retention_run(stack: RunningStack, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out = _cli(stack, capsys, "retention", "run", "--json")
    assert code == 0, out
    report: dict[str, Any] = json.loads(out)
    return report


def test_held_footage_outlives_retention_until_released(
    stack: RunningStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given six segments recorded twice the retention ago, indexed
    segments = _upload(stack)
    keys = [format_key(s) for s in segments]
    low, high = FIRST - timedelta(minutes=1), FIRST + timedelta(minutes=1)
    poll(lambda: listed(stack, DEVICE, low, high), lambda k: k == set(keys), "indexed", 60)
    # (and in the device list, which the stream consumer writes a moment later: `hold add`
    # refuses a device the read model does not know)
    poll(lambda: _device_names(stack), lambda names: DEVICE in names, "a known device", 60)
    # And a hold from inside the third segment to inside the fourth (both kept whole)
    hold_from = segments[2].start + timedelta(milliseconds=500)
    hold_to = segments[3].end - timedelta(milliseconds=500)
    span = ["--from", iso(hold_from), "--to", iso(hold_to)]
    code, out = _cli(stack, capsys, "hold", "add", "--device", DEVICE, *span, "--reason", "case 9",
                     "--by", "officer", "--json")  # fmt: skip
    assert code == 0, out
    hold = json.loads(out)
    # And the API's clock is the stack's: the hold was created at its "now"
    created = datetime.fromisoformat(hold["created_at"])
    assert NOW <= created < NOW + timedelta(minutes=10)
    held = {keys[2], keys[3]}

    # When a deletion request overlaps the hold
    status, body, _ = stack.call(
        "DELETE", f"/devices/{DEVICE}/segments?from={iso(low)}&to={iso(high)}"
    )
    # Then it answers 409 naming the hold, and nothing is deleted
    assert status == 409, body
    assert hold["hold_id"] in json.dumps(body)
    assert _bucket_keys(stack) == set(keys)

    # When retention runs
    report = _retention_run(stack, capsys)
    # Then the held segments are kept and every other one is deleted
    assert (report["deleted"], report["kept_held"]) == (COUNT - len(held), len(held))
    assert _bucket_keys(stack) == held
    # And the API lists only the held part once the deletes are indexed
    poll(lambda: listed(stack, DEVICE, low, high), lambda k: k == held, "forgotten", EVENT_TIMEOUT)
    # And it plays: the playlist of the whole window lists the two held files, whose
    # bytes decode to every frame they were made of
    assert _frames_played(stack, low, high) == (len(held), len(held) * SECONDS * FPS)

    # When a second run comes before the release: nothing changes
    assert _retention_run(stack, capsys)["deleted"] == 0
    assert _bucket_keys(stack) == held

    # When the hold is released (by its creator) and retention runs again
    code, out = _cli(stack, capsys, "hold", "release", hold["hold_id"], "--by", "officer")
    assert code == 0, out
    report = _retention_run(stack, capsys)
    # Then the footage it kept is gone, from the bucket and from the API
    assert (report["deleted"], report["kept_held"]) == (len(held), 0)
    assert _bucket_keys(stack) == set()
    poll(lambda: listed(stack, DEVICE, low, high), lambda k: k == set(), "released", EVENT_TIMEOUT)
    # And the hold stays readable, released, with its history
    status, body = stack.get(f"/holds/{hold['hold_id']}")
    assert status == 200
    assert [c["action"] for c in body["history"]] == ["create", "release"]


def test_a_hold_on_footage_still_in_retention_changes_nothing(
    stack: RunningStack, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a recent segment of another device (inside retention at the stack's now)
    s3 = stack.client("s3")
    start = NOW - timedelta(days=1)
    content = synthetic_clip(seconds=1, fps=FPS, container="ts", label="recent")
    segment = SegmentKey(
        kind="video",
        device="cam-recent",
        start=start,
        duration_ms=1000,
        id=segment_id("video", "cam-recent", start, 1000, content),
        ext="ts",
    )
    s3.put_object(Bucket=stack.ready["bucket"], Key=format_key(segment), Body=content)
    # When retention runs
    _retention_run(stack, capsys)
    # Then the recent segment is still there
    listing = s3.list_objects_v2(Bucket=stack.ready["bucket"], Prefix="v1/video/cam-recent/")
    assert [o["Key"] for o in listing["Contents"]] == [format_key(segment)]
