"""Playback end to end (docs/playback.md): real H.264 through the running local stack.

Four devices upload what cameras upload — MPEG-TS, MP4 through the uploader (stored
fragmented), progressive MP4 put as it is (a camera that does not use the uploader),
and a camera's own fragmented MP4 (decode times from 0 in every file) — four 2-second
files each: three back to back, then one after a 30 s gap. Then every client a user
has plays the playlist:

* a decoder fed each listed segment as a player fetches it (init + byte range,
  following the media redirect), every frame counted;
* FFmpeg's own HLS demuxer (through PyAV), every frame counted;
* hls.js in a real Chromium, to the end, on a page served from the API's origin and on
  a page of another loopback origin (web security on).

Media is small (160x96, 25 fps) so the whole module runs in seconds.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin

import av
import m3u8
import pytest

from tests.support.browser import play_hls
from tests.support.local_stack import RunningStack
from video_index.media.synthetic import count_frames, synthetic_clip
from video_index.upload import upload_segment

FPS = 25
FILE_SECONDS = 2
FRAMES_PER_FILE = FPS * FILE_SECONDS
GAP = timedelta(seconds=30)
T0 = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
STARTS = [
    T0,
    T0 + timedelta(seconds=2),
    T0 + timedelta(seconds=4),
    T0 + timedelta(seconds=6) + GAP,
]


@dataclass(frozen=True)
class Device:
    name: str
    clip: str  # what the camera records: "ts", "mp4" (progressive) or "fmp4"
    as_is: bool  # True: put as it is (not through the uploader's rewrite)
    container: str  # what the index should find
    version: int  # the EXT-X-VERSION its playlist needs


DEVICES = [
    Device("media-ts", "ts", False, "mpegts", 3),
    Device("media-fmp4", "mp4", False, "fmp4", 6),
    Device("media-prog", "mp4", True, "mp4-progressive", 6),
    # fragmented by the camera itself, each file's decode times starting at 0
    Device("media-camera-fmp4", "fmp4", True, "fmp4", 6),
]
EXPECTED_FRAMES = FRAMES_PER_FILE * len(STARTS)
#: A loopback origin that is not the API's (Playwright serves the player page there).
OTHER_ORIGIN = "http://localhost:9"

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _window() -> dict[str, str]:
    return {
        "from": (T0 - timedelta(minutes=1)).isoformat(),
        "to": (STARTS[-1] + timedelta(minutes=1)).isoformat(),
    }


def _playlist_url(stack: RunningStack, device: Device) -> str:
    return f"{stack.ready['api']}/devices/{device.name}/playlist.m3u8?{urlencode(_window())}"


def _fetch(url: str, byterange: str | None = None) -> bytes:
    """GET as a player does: a ``Range`` for a byte range, redirects followed."""
    request = urllib.request.Request(url)
    if byterange:
        length, _, offset = byterange.partition("@")
        first = int(offset or 0)
        request.add_header("Range", f"bytes={first}-{first + int(length) - 1}")
    with _DIRECT.open(request, timeout=30) as response:
        data: bytes = response.read()
    return data


@pytest.fixture(scope="module")
def uploaded(local_stack: RunningStack) -> Iterator[RunningStack]:
    # Given each device's four files uploaded to the running stack, and indexed
    s3 = local_stack.client("s3")
    for device in DEVICES:
        for index, start in enumerate(STARTS):
            clip = synthetic_clip(
                seconds=FILE_SECONDS,
                container=device.clip,  # type: ignore[arg-type]
                fps=FPS,
                label=f"{device.name} {index}",
                start=start,
            )
            upload_segment(
                s3,
                local_stack.ready["bucket"],
                clip,
                kind="video",
                device=device.name,
                start=start,
                duration_ms=FILE_SECONDS * 1000,
                ext="ts" if device.clip == "ts" else "mp4",
                as_is=device.as_is,
            )
    deadline = time.monotonic() + 60
    for device in DEVICES:
        while True:
            status, body = local_stack.get(
                f"/devices/{device.name}/segments", kind="video", **_window()
            )
            items = body["items"] if status == 200 else []
            if len(items) == len(STARTS) and all(i["container"] != "unknown" for i in items):
                break
            assert time.monotonic() < deadline, f"{device.name} never indexed: {body}"
            time.sleep(0.2)
    yield local_stack


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_ingest_learned_each_files_container(uploaded: RunningStack, device: Device) -> None:
    # When the device's entries are listed
    _, body = uploaded.get(f"/devices/{device.name}/segments", kind="video", **_window())
    # Then each file has the container it really is, and is playable
    assert [(i["container"], i["playable"]) for i in body["items"]] == [
        (device.container, True)
    ] * len(STARTS)


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_playlist_tags_follow_rfc_8216(uploaded: RunningStack, device: Device) -> None:
    # When the playlist is fetched and parsed by the m3u8 library
    with _DIRECT.open(_playlist_url(uploaded, device), timeout=30) as response:
        assert response.headers["Content-Type"] == "application/vnd.apple.mpegurl"
        playlist = m3u8.loads(response.read().decode())
    # Then it is a finished VOD playlist at the version its tags need
    assert playlist.is_endlist and playlist.playlist_type == "vod"
    assert playlist.version == device.version
    assert playlist.target_duration == FILE_SECONDS
    segments = playlist.segments
    # And every file is listed once, with its duration and its own wall-clock time
    assert [s.duration for s in segments] == [float(FILE_SECONDS)] * len(STARTS)
    assert [s.program_date_time for s in segments] == STARTS
    # And each file after the first starts a discontinuity (its timestamps start anew)
    assert [s.discontinuity for s in segments] == [False, True, True, True]
    if device.container == "mpegts":
        # And TS files are listed as they are: no map, no byte range
        assert all(s.init_section is None and s.byterange is None for s in segments)
    elif device.container == "fmp4" and not device.as_is:
        # And each fMP4 file the product wrote (decode times on the wall clock) has its own
        # map (its init bytes) and its media by byte range
        for segment in segments:
            assert segment.init_section.uri == segment.uri
            init_length, _, init_offset = segment.init_section.byterange.partition("@")
            _, _, offset = segment.byterange.partition("@")
            assert init_offset == "0" and int(offset) == int(init_length)
    else:
        # And progressive files, and a camera's fMP4 whose decode times restart at 0 in
        # every file, are listed through their fragmented rendition
        for segment in segments:
            assert segment.uri.endswith("?part=data")
            assert segment.init_section.uri == segment.uri.replace("part=data", "part=init")


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_every_frame_decodes_when_fetched_as_a_player_fetches(
    uploaded: RunningStack, device: Device
) -> None:
    # Given the playlist
    url = _playlist_url(uploaded, device)
    with _DIRECT.open(url, timeout=30) as response:
        playlist = m3u8.loads(response.read().decode())
    # When each segment is fetched as listed (its init first, byte ranges as ranges)
    frames = []
    for segment in playlist.segments:
        data = _fetch(urljoin(url, segment.uri), segment.byterange)
        if segment.init_section is not None:
            init = _fetch(urljoin(url, segment.init_section.uri), segment.init_section.byterange)
            data = init + data
        frames.append(count_frames(data))
    # Then every file gives every frame it holds
    assert frames == [FRAMES_PER_FILE] * len(STARTS)


def _ffmpeg_frames(url: str) -> int:
    container: Any = av.open(url, format="hls", timeout=30)
    with container:
        return sum(1 for _ in container.decode(video=0))


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_ffmpeg_hls_demuxer_decodes_every_frame(uploaded: RunningStack, device: Device) -> None:
    # When FFmpeg's HLS demuxer opens the playlist URL and decodes the whole stream
    decoded = _ffmpeg_frames(_playlist_url(uploaded, device))
    # Then it gets every frame of every file, gap and discontinuities included — the
    # camera's own fMP4 too (decode times restarting at 0 in every file: listed through
    # renditions whose decode times run on the wall clock, docs/playback.md)
    assert decoded == EXPECTED_FRAMES


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_hls_js_in_chromium_plays_to_the_end(
    uploaded: RunningStack, browser: Any, device: Device
) -> None:
    # When hls.js plays the playlist on a page served from the API's origin
    playback = play_hls(
        browser, _playlist_url(uploaded, device), page_origin=uploaded.ready["api"], rate=8
    )
    # Then it plays to the end without a fatal error, nor any but the named harmless ones,
    # every file's seconds
    assert playback.fatal_errors == [], playback
    assert playback.unexpected_errors == [], playback
    assert playback.console_errors == [], playback
    assert playback.ended, playback
    assert playback.duration == pytest.approx(FILE_SECONDS * len(STARTS), abs=0.2)
    assert playback.played_seconds == pytest.approx(FILE_SECONDS * len(STARTS), abs=0.2)
    # And no request failed (redirects to the bucket included)
    assert playback.failed_requests == []
    # And each fragment carried its file's wall-clock time
    starts = [datetime.fromisoformat(t) for t in playback.program_date_times if t]
    assert sorted(set(starts)) == STARTS


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_hls_js_on_another_origin_plays_to_the_end(
    uploaded: RunningStack, browser: Any, device: Device
) -> None:
    # Given a page on another loopback origin than the API's (web security on: the API
    # answers it CORS as an allowed origin; the bucket sees `Origin: null` after the
    # media redirect)
    assert not uploaded.ready["api"].startswith(OTHER_ORIGIN)
    # When hls.js plays the playlist there
    playback = play_hls(browser, _playlist_url(uploaded, device), page_origin=OTHER_ORIGIN, rate=8)
    # Then it plays to the end, no request refused, every file's seconds
    assert playback.fatal_errors == [], playback
    assert playback.failed_requests == [], playback
    assert playback.ended, playback
    assert playback.played_seconds == pytest.approx(FILE_SECONDS * len(STARTS), abs=0.2)


# --- clip export ------------------------------------------------------------------------------


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with _DIRECT.open(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def _finished(stack: RunningStack, location: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status, job = stack.get(location)
        assert status == 200, job
        if job["state"] in ("done", "failed"):
            return job
        assert time.monotonic() < deadline, f"the export never finished: {job}"
        time.sleep(0.2)


def _duration_s(clip: bytes) -> float:
    container: Any = av.open(io.BytesIO(clip))
    with container:
        stream = container.streams.video[0]
        return float(stream.duration * stream.time_base)


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d.name)
def test_export_of_a_window_with_a_gap_is_one_faststart_mp4_of_every_frame(
    uploaded: RunningStack, device: Device
) -> None:
    # When the window is exported
    api = uploaded.ready["api"]
    status, headers, job = _post(f"{api}/devices/{device.name}/exports", _window())
    # Then the job is accepted and can be followed at its Location
    assert status == 202, job
    assert job["state"] == "queued" and job["segments"] == len(STARTS)
    assert headers["Location"] == f"/exports/{job['export_id']}"
    done = _finished(uploaded, headers["Location"])
    assert done["state"] == "done", done
    # And its clip holds every frame of the window, the gap skipped, moov before mdat
    clip = _fetch(done["url"])
    assert count_frames(clip) == EXPECTED_FRAMES
    assert _duration_s(clip) == pytest.approx(FILE_SECONDS * len(STARTS), abs=0.1)
    assert clip.index(b"moov") < clip.index(b"mdat")


def test_export_of_a_window_without_playable_video_fails_saying_why(
    local_stack: RunningStack,
) -> None:
    # Given a device whose only "video" is not video (a camera wrote text)
    key = f"v1/video/media-broken/{T0:%Y/%m/%d/%H}/{T0:%Y%m%dT%H%M%S}.000Z_2000_broken.mp4"
    local_stack.client("s3").put_object(
        Bucket=local_stack.ready["bucket"], Key=key, Body=b"not a video"
    )
    deadline = time.monotonic() + 30
    while not local_stack.get("/devices/media-broken/segments", **_window())[1].get("items"):
        assert time.monotonic() < deadline, "never indexed"
        time.sleep(0.2)
    # When its window is exported
    status, headers, job = _post(
        f"{local_stack.ready['api']}/devices/media-broken/exports", _window()
    )
    # Then the job is accepted, then fails, and says why
    assert status == 202 and job["segments"] == 0
    failed = _finished(local_stack, headers["Location"])
    assert failed["state"] == "failed"
    assert failed["error"] == "no playable video in the window"
    assert failed["url"] is None


def test_an_export_window_over_six_hours_is_a_400_naming_the_limit(
    local_stack: RunningStack,
) -> None:
    # When a window of 6 hours and 1 ms is exported
    window = {"from": T0.isoformat(), "to": (T0 + timedelta(hours=6, milliseconds=1)).isoformat()}
    status, _, body = _post(f"{local_stack.ready['api']}/devices/media-ts/exports", window)
    # Then it is refused, naming the parameter and the limit
    assert status == 400
    assert body["error"]["parameter"] == "to"
    assert "6 hours" in body["error"]["message"]


def test_cli_export_shows_progress_and_writes_the_clip(
    uploaded: RunningStack, tmp_path: Path
) -> None:
    # When `video-index export` runs against the local stack with --out
    out = tmp_path / "clip.mp4"
    window = _window()
    result = subprocess.run(
        [
            sys.executable, "-m", "video_index.cli", "export",
            "--ready-file", str(uploaded.ready_file),
            "--device", "media-ts", "--from", window["from"], "--to", window["to"],
            "--out", str(out),
        ],
        env={**uploaded.env(), "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    # Then it exits 0 after a progress bar over the files, and the clip has every frame
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(STARTS)}/{len(STARTS)}" in result.stdout
    assert count_frames(out.read_bytes()) == EXPECTED_FRAMES
    # And its signed manifest, downloaded beside it, verifies against the key the local
    # API publishes (GET /exports/public-key, fetched over HTTP by the command)
    verified = subprocess.run(
        [
            sys.executable, "-m", "video_index.cli", "verify", str(out),
            str(tmp_path / "clip.mp4.manifest.json"), "--ready-file", str(uploaded.ready_file),
        ],
        env={**uploaded.env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK clip.mp4: media-ts")
