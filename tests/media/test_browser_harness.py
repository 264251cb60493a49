"""The browser harness tests itself: real H.264 played by hls.js in headless Chromium.

The media are made on the spot (``synthetic_clip``) and the playlists are written by hand:
they are fixtures for the harness, not the product's playlist builder. Each check that
playback works has a negative control showing the harness also sees when it does not.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.browser import (
    Playback,
    browser_turn,
    chromium_path,
    hls_js_path,
    play_hls,
)
from tests.support.hls_server import HlsServer, hls_server
from video_index.media.synthetic import epoch, synthetic_clip

CLIP_SECONDS = 2
FPS = 25
NAMES = ("a", "b", "c")
# Each file's wall-clock start: back to back, then a 30 s hole before the third.
STARTS = tuple(epoch() + timedelta(seconds=s) for s in (0, CLIP_SECONDS, 2 * CLIP_SECONDS + 30))
# As hls.js reports them (Date.toISOString): milliseconds, "Z".
DATES = tuple(start.isoformat(timespec="milliseconds").replace("+00:00", "Z") for start in STARTS)
TOTAL_SECONDS = CLIP_SECONDS * len(NAMES)


def top_level_boxes(data: bytes) -> Iterator[tuple[str, int, int]]:
    """(type, offset, size) of each top-level ISO BMFF box."""
    offset = 0
    while offset < len(data):
        size, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if size == 1:
            (size,) = struct.unpack(">Q", data[offset + 8 : offset + 16])
        elif size == 0:
            size = len(data) - offset
        yield kind.decode("latin-1"), offset, size
        offset += size


def init_length(data: bytes) -> int:
    """Bytes before the first top-level ``moof``: the init segment (``ftyp`` + ``moov``)."""
    return next(offset for kind, offset, _ in top_level_boxes(data) if kind == "moof")


def ts_playlist() -> str:
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{CLIP_SECONDS}"]
    lines += ["#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD"]
    for index, (name, date) in enumerate(zip(NAMES, DATES, strict=True)):
        if index:
            lines.append("#EXT-X-DISCONTINUITY")  # each file's timestamps restart at 0
        lines += [f"#EXT-X-PROGRAM-DATE-TIME:{date}", f"#EXTINF:{CLIP_SECONDS:.3f},"]
        lines.append(f"{name}.ts")
    return "\n".join([*lines, "#EXT-X-ENDLIST", ""])


def fmp4_playlist(folder: Path) -> str:
    lines = ["#EXTM3U", "#EXT-X-VERSION:6", f"#EXT-X-TARGETDURATION:{CLIP_SECONDS}"]
    lines += ["#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD"]
    for index, (name, date) in enumerate(zip(NAMES, DATES, strict=True)):
        data = (folder / f"{name}.m4s").read_bytes()
        init = init_length(data)
        if index:
            lines.append("#EXT-X-DISCONTINUITY")
        lines.append(f'#EXT-X-MAP:URI="{name}.m4s",BYTERANGE="{init}@0"')
        lines += [f"#EXT-X-PROGRAM-DATE-TIME:{date}", f"#EXTINF:{CLIP_SECONDS:.3f},"]
        lines += [f"#EXT-X-BYTERANGE:{len(data) - init}@{init}", f"{name}.m4s"]
    return "\n".join([*lines, "#EXT-X-ENDLIST", ""])


def progressive_playlist() -> str:
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{CLIP_SECONDS}"]
    for index, name in enumerate(NAMES):
        if index:
            lines.append("#EXT-X-DISCONTINUITY")
        lines += [f"#EXTINF:{CLIP_SECONDS:.3f},", f"{name}.mp4"]
    return "\n".join([*lines, "#EXT-X-ENDLIST", ""])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HlsServer]:
    """Three 2 s files per container, timestamps from 0 in each, and the playlists over them."""
    folder = tmp_path_factory.mktemp("hls")
    for name, start in zip(NAMES, STARTS, strict=True):
        for container, suffix in (("ts", "ts"), ("fmp4", "m4s"), ("mp4", "mp4")):
            clip = synthetic_clip(seconds=CLIP_SECONDS, container=container, fps=FPS, start=start)
            (folder / f"{name}.{suffix}").write_bytes(clip)
    (folder / "ts.m3u8").write_text(ts_playlist())
    (folder / "fmp4.m3u8").write_text(fmp4_playlist(folder))
    (folder / "progressive.m3u8").write_text(progressive_playlist())
    with hls_server(folder) as running:
        yield running


def another_origin(server: HlsServer, kind: str) -> str:
    """An origin other than the server's (http://127.0.0.1:<port>) for the player page.

    ``localhost`` is the same machine under another host name. An invented host must be
    HTTPS: Chromium lets a page it takes for a public site reach a loopback server only from
    a secure context (Local Network Access), and the harness serves the page itself, so no
    certificate is involved.
    """
    if kind == "localhost":
        return server.origin.replace("127.0.0.1", "localhost")
    return "https://player.test"


def assert_played_through(playback: Playback) -> None:
    assert playback.fatal_errors == []
    assert playback.unexpected_errors == [], playback.errors  # see HARMLESS_PLAYER_ERRORS
    assert playback.console_errors == []
    assert playback.failed_requests == []
    assert playback.ended
    assert playback.played_seconds == pytest.approx(TOTAL_SECONDS, abs=0.3)
    assert playback.duration == pytest.approx(TOTAL_SECONDS, abs=0.3)


def test_this_chromium_decodes_h264_through_media_source_extensions(browser: Browser) -> None:
    # Given the machine's Chromium (Debian's build carries the proprietary codecs)
    page = browser.new_page()
    try:
        # When its Media Source Extensions are asked about H.264 in MP4
        supported = page.evaluate(
            "() => ['avc1.42E01E', 'avc1.64001F'].map("
            'c => MediaSource.isTypeSupported(`video/mp4; codecs="${c}"`))'
        )
    finally:
        page.close()

    # Then both Baseline and High profiles are (hls.js remuxes MPEG-TS into such MP4)
    assert supported == [True, True]


def test_mpeg_ts_with_discontinuities_plays_to_the_end(browser: Browser, server: HlsServer) -> None:
    # Given three MPEG-TS files, each restarting at 0, behind discontinuities and dated
    # When the playlist is played from a page on the server's own origin
    playback = play_hls(browser, server.url("ts.m3u8"), page_origin=server.origin, timeout_s=20)

    # Then it plays to the end with nothing failing
    assert_played_through(playback)
    # And every frame was decoded (at 16× most are not shown: dropped, yet decoded): 3 × 50,
    # exactly so in every run so far. ±2 because the count reaches the page asynchronously
    # from the media pipeline, and MSE may drop a frame where two appended files meet.
    assert playback.frames == pytest.approx(len(NAMES) * CLIP_SECONDS * FPS, abs=2)
    # And hls.js loaded each fragment once, in order, with the playlist's own dates
    assert playback.program_date_times == list(DATES)


def test_fragmented_mp4_with_byte_ranges_and_a_map_per_file_plays_to_the_end(
    browser: Browser, server: HlsServer
) -> None:
    # Given three fragmented MP4 files, each its own init (a byte range) and media (the rest)
    sizes = {name: len((server.root / f"{name}.m4s").read_bytes()) for name in NAMES}
    inits = {name: init_length((server.root / f"{name}.m4s").read_bytes()) for name in NAMES}
    before = len(server.requests)

    # When the playlist is played
    playback = play_hls(browser, server.url("fmp4.m3u8"), page_origin=server.origin, timeout_s=20)

    # Then it plays to the end with nothing failing
    assert_played_through(playback)
    assert playback.frames == pytest.approx(len(NAMES) * CLIP_SECONDS * FPS, abs=2)
    assert playback.program_date_times == list(DATES)
    # And each file was read as two ranges, its init and its media, never whole
    ranges = sorted((seen.path, seen.range) for seen in server.requests[before:])
    expected: list[tuple[str, str | None]] = [("/fmp4.m3u8", None)]
    for name in NAMES:
        expected.append((f"/{name}.m4s", f"bytes=0-{inits[name] - 1}"))
        expected.append((f"/{name}.m4s", f"bytes={inits[name]}-{sizes[name] - 1}"))
    assert ranges == sorted(expected)


@pytest.mark.parametrize("kind", ["localhost", "invented"])
def test_another_origin_plays_when_the_server_allows_it(
    browser: Browser, server: HlsServer, kind: str
) -> None:
    # Given a page on another origin than the server's, which the server allows
    origin = another_origin(server, kind)
    server.allowed_origins = {origin}
    before = len(server.requests)

    # When it plays the MPEG-TS playlist
    playback = play_hls(browser, server.url("ts.m3u8"), page_origin=origin, timeout_s=20)

    # Then it plays to the end, and every request reached the server with that origin
    assert_played_through(playback)
    assert playback.program_date_times == list(DATES)
    assert {seen.origin for seen in server.requests[before:]} == {origin}


@pytest.mark.parametrize("kind", ["localhost", "invented"])
def test_another_origin_the_server_does_not_allow_fails_visibly(
    browser: Browser, server: HlsServer, kind: str
) -> None:
    # Given a page on another origin than the server's, which the server does not allow
    origin = another_origin(server, kind)
    server.allowed_origins = set()
    before = len(server.requests)

    # When it plays the MPEG-TS playlist
    playback = play_hls(browser, server.url("ts.m3u8"), page_origin=origin, timeout_s=20)

    # Then the harness reports a fatal error, the failed request and no playback
    assert playback.fatal_errors == ["networkError/manifestLoadError"]
    assert playback.failed_requests
    assert all(failed.endswith("/ts.m3u8") for failed in playback.failed_requests)
    assert not playback.ended
    assert playback.played_seconds < 1
    # And the cause is CORS: the server answered, the browser withheld the answer
    assert any("Access-Control-Allow-Origin" in error for error in playback.console_errors)
    assert [seen.path for seen in server.requests[before:]] == ["/ts.m3u8"]


def test_progressive_mp4_as_segments_is_reported_as_a_failure(
    browser: Browser, server: HlsServer
) -> None:
    # Given a playlist listing progressive MP4 files (no EXT-X-MAP), which hls.js cannot play
    # When it is played
    playback = play_hls(
        browser, server.url("progressive.m3u8"), page_origin=server.origin, timeout_s=20
    )

    # Then the harness reports a fatal error (hls.js finds no demuxer for the data) and
    # (next to) no playback
    assert "mediaError/fragParsingError" in playback.fatal_errors
    assert not playback.ended
    assert playback.played_seconds < 1
    assert playback.frames == 0


def test_a_missing_chromium_or_hls_js_fails_with_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given neither Chromium nor hls.js where the environment points
    monkeypatch.setenv("CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("HLS_JS", str(tmp_path / "no-hls.min.js"))

    # When the harness looks for them, Then it fails (never skips), saying how to get them
    with pytest.raises(pytest.fail.Exception, match="apt-get install chromium"):
        chromium_path()
    with pytest.raises(pytest.fail.Exception, match="run make install"):
        hls_js_path()


def test_one_chromium_turn_at_a_time(tmp_path: Path) -> None:
    # Given one holder of the run's Chromium turn (flock: per open file, so a second opening
    # in this process contends as another worker's would)
    # When another asks for it, Then it waits, and past its deadline fails naming the lock
    with (
        browser_turn(tmp_path),
        pytest.raises(pytest.fail.Exception, match=r"chromium\.lock"),
        browser_turn(tmp_path, timeout_s=0.3),
    ):
        pass  # pragma: no cover - the turn is held
    # And once the holder is done, the next one gets it at once
    with browser_turn(tmp_path, timeout_s=0):
        pass
