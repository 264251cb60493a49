"""HLS VOD playlists of independent camera files (docs/playback.md, RFC 8216).

Every playlist built here is parsed back with the ``m3u8`` library (lenient
``m3u8.loads`` for the model, ``m3u8.parse(strict=True)`` for syntax) and checked
line by line against the RFC rules the library does not enforce. The property
test's expectations come from the definitions (a file is played unless the files
starting before it cover it), not from the module's single pass.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import m3u8
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.query.playlist import (
    CONTENT_TYPE,
    MAX_WINDOW_MS,
    PlaylistSegment,
    build_playlist,
)

BASE_MS = 1_796_040_000_000  # 2026-11-30T12:00:00.000Z
PDT_LINE = re.compile(r"^#EXT-X-PROGRAM-DATE-TIME:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
EXTINF_LINE = re.compile(r"^#EXTINF:\d+\.\d{3},$")
BYTERANGE_LINE = re.compile(r"^#EXT-X-BYTERANGE:[1-9]\d*@\d+$")
MAP_LINE = re.compile(r'^#EXT-X-MAP:URI="[^"]+"(,BYTERANGE="[1-9]\d*@\d+")?$')


def ts(offset_ms: int, duration_ms: int, name: str | None = None) -> PlaylistSegment:
    """An MPEG-TS camera file, by its media route URI (relative, as the API lists it)."""
    return PlaylistSegment(
        start_ms=BASE_MS + offset_ms,
        duration_ms=duration_ms,
        uri=f"media/{name or f'f{offset_ms}-{duration_ms}'}.ts",
    )


def fmp4(offset_ms: int, duration_ms: int, size: int = 50_000, init: int = 800) -> PlaylistSegment:
    uri = f"media/f{offset_ms}-{duration_ms}.mp4"
    return PlaylistSegment(
        start_ms=BASE_MS + offset_ms,
        duration_ms=duration_ms,
        uri=uri,
        byte_range=(size - init, init),
        map_uri=uri,
        map_range=(init, 0),
    )


def utc(epoch_ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=epoch_ms)


def parse(text: str) -> m3u8.M3U8:
    """Parse ``text`` and check the rules every playlist of camera files must satisfy."""
    m3u8.parse(text, strict=True)  # strict syntax: no unknown lines
    playlist = m3u8.loads(text)

    lines = text.split("\n")
    assert lines[-1] == "", "the playlist ends with a line terminator"
    lines = lines[:-1]
    assert "\r" not in text
    assert lines[0] == "#EXTM3U"
    assert re.fullmatch(r"#EXT-X-VERSION:[346]", lines[1])
    assert lines[2] == "#EXT-X-PLAYLIST-TYPE:VOD"
    assert re.fullmatch(r"#EXT-X-TARGETDURATION:[1-9]\d*", lines[3])
    assert lines[4] == "#EXT-X-MEDIA-SEQUENCE:0"
    assert lines[-1] == "#EXT-X-ENDLIST"
    assert lines.count("#EXT-X-ENDLIST") == 1
    for number, line in enumerate(lines):
        assert line, "no blank lines"
        if line.startswith("#EXTINF:"):
            assert EXTINF_LINE.match(line), line
            after = lines[number + 1]
            assert not after.startswith("#") or BYTERANGE_LINE.match(after), after
        elif line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            assert PDT_LINE.match(line), line
        elif line.startswith("#EXT-X-BYTERANGE:"):
            assert BYTERANGE_LINE.match(line), line
            assert lines[number - 1].startswith("#EXTINF:")
        elif line.startswith("#EXT-X-MAP:"):
            assert MAP_LINE.match(line), line
        elif line == "#EXT-X-DISCONTINUITY":
            assert lines[number + 1].startswith("#EXT-X-PROGRAM-DATE-TIME:")
        elif not line.startswith("#"):
            assert re.match(r"#EXTINF:|#EXT-X-BYTERANGE:", lines[number - 1]), line

    # RFC 8216 §7: the lowest version the tags allow.
    expected_version = 6 if "#EXT-X-MAP:" in text else 4 if "BYTERANGE" in text else 3
    assert playlist.version == expected_version
    assert playlist.is_endlist
    assert playlist.playlist_type == "vod"
    assert playlist.media_sequence == 0
    assert not playlist.is_variant
    durations = [segment.duration for segment in playlist.segments]
    # RFC 8216 §4.3.3.1: each EXTINF (rounded) <= TARGETDURATION.
    assert playlist.target_duration == max([1, *(math.ceil(d) for d in durations)])
    assert all(0 < d <= playlist.target_duration for d in durations)
    for index, segment in enumerate(playlist.segments):
        # Independent files: a discontinuity before every file but the first, and the
        # wall-clock time of every file.
        assert segment.discontinuity == (index > 0)
        assert segment.program_date_time is not None
    return playlist


# --- examples -----------------------------------------------------------------


def test_every_file_after_the_first_is_a_discontinuity_with_its_own_date_time() -> None:
    # Given three 10 s TS files back to back, passed out of order, then one after a gap
    files = [ts(10_000, 10_000), ts(0, 10_000), ts(20_000, 10_000), ts(45_123, 4_000)]

    # When the playlist is built
    text = build_playlist(files)

    # Then they play in time order, each after the first behind a discontinuity (their
    # timestamps restart), each with its own wall-clock time (gap included)
    playlist = parse(text)
    assert [s.uri for s in playlist.segments] == [
        ts(0, 10_000).uri,
        ts(10_000, 10_000).uri,
        ts(20_000, 10_000).uri,
        ts(45_123, 4_000).uri,
    ]
    assert [s.program_date_time for s in playlist.segments] == [
        utc(BASE_MS),
        utc(BASE_MS + 10_000),
        utc(BASE_MS + 20_000),
        utc(BASE_MS + 45_123),
    ]
    assert playlist.version == 3
    assert (
        "#EXT-X-DISCONTINUITY\n"
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T12:00:45.123Z\n"
        "#EXTINF:4.000,\n" + ts(45_123, 4_000).uri + "\n"
    ) in text


def test_fragmented_mp4_files_each_get_their_own_map_and_byte_range() -> None:
    # Given two fragmented MP4 files with different init sizes
    first, second = fmp4(0, 10_000, size=60_000, init=900), fmp4(10_000, 10_000, init=1_200)

    # When the playlist is built
    text = build_playlist([second, first])

    # Then each file has its init as a map (by byte range) and its media by byte range,
    # at version 6
    playlist = parse(text)
    assert playlist.version == 6
    assert text.count("#EXT-X-MAP:") == 2
    assert (
        f'#EXT-X-MAP:URI="{first.uri}",BYTERANGE="900@0"\n'
        "#EXTINF:10.000,\n"
        "#EXT-X-BYTERANGE:59100@900\n" + first.uri + "\n"
    ) in text
    assert [s.init_section.uri for s in playlist.segments] == [first.uri, second.uri]
    assert [s.byterange for s in playlist.segments] == ["59100@900", "48800@1200"]


def test_a_rendition_is_listed_with_a_whole_file_map() -> None:
    # Given a progressive MP4 played through its rendition (init and media as two files)
    rendition = PlaylistSegment(
        start_ms=BASE_MS, duration_ms=10_000, uri="media/a.mp4?part=data",
        map_uri="media/a.mp4?part=init",
    )  # fmt: skip

    # When the playlist is built
    text = build_playlist([rendition])

    # Then the map has no byte range, the media no byte range, and the version is 6
    playlist = parse(text)
    assert '#EXT-X-MAP:URI="media/a.mp4?part=init"\n' in text
    assert "BYTERANGE" not in text
    assert playlist.version == 6


def test_byte_ranges_without_a_map_need_version_4() -> None:
    piece = PlaylistSegment(BASE_MS, 2_000, "media/a.ts", byte_range=(188 * 10, 188))
    assert parse(build_playlist([piece])).version == 4


def test_a_file_without_a_map_after_one_with_a_map_is_refused() -> None:
    # Given a TS file after a fragmented MP4 file (the MP4's map would apply to it)
    with pytest.raises(ValueError, match="no EXT-X-MAP after a file with one"):
        build_playlist([fmp4(0, 10_000), ts(10_000, 10_000)])
    # But the other order is fine: the map starts applying at the MP4 file
    parse(build_playlist([ts(0, 10_000), fmp4(10_000, 10_000)]))


def test_partial_overlap_is_kept_with_its_real_duration() -> None:
    playlist = parse(build_playlist([ts(0, 10_000), ts(8_000, 10_000)]))
    assert [s.duration for s in playlist.segments] == [10.0, 10.0]


def test_fully_covered_files_are_skipped() -> None:
    # Given a 60 s file covering a 5 s one and a 30 s one of the same start, then one more
    long_one, covered, same_start_shorter, after = (
        ts(0, 60_000), ts(5_000, 5_000), ts(0, 30_000), ts(60_000, 10_000)
    )  # fmt: skip

    # When the playlist is built
    playlist = parse(build_playlist([covered, after, same_start_shorter, long_one]))

    # Then the covered files are skipped
    assert [s.uri for s in playlist.segments] == [long_one.uri, after.uri]


def test_a_file_covered_by_the_union_of_two_earlier_ones_is_skipped() -> None:
    first, second, inside = ts(0, 10_000), ts(8_000, 12_000), ts(9_000, 10_000)
    playlist = parse(build_playlist([first, second, inside]))
    assert [s.uri for s in playlist.segments] == [first.uri, second.uri]


def test_tie_on_start_keeps_the_longer_then_the_smaller_uri() -> None:
    b, a, short = ts(0, 10_000, "b"), ts(0, 10_000, "a"), ts(0, 4_000, "c")
    playlist = parse(build_playlist([short, b, a]))
    assert [s.uri for s in playlist.segments] == [a.uri]


def test_zero_length_files_are_dropped() -> None:
    # Given zero-length entries at the start, in the middle and in a gap
    files = [
        ts(0, 0, "zero-first"), ts(0, 10_000), ts(10_000, 0, "zero-middle"),
        ts(10_000, 10_000), ts(25_000, 0, "zero-in-gap"), ts(30_000, 10_000),
    ]  # fmt: skip

    # When the playlist is built, then they do not appear
    text = build_playlist(files)
    playlist = parse(text)
    assert "zero" not in text
    assert [s.uri for s in playlist.segments] == [
        ts(0, 10_000).uri,
        ts(10_000, 10_000).uri,
        ts(30_000, 10_000).uri,
    ]


def test_empty_input_gives_a_valid_empty_playlist() -> None:
    for files in ([], [ts(0, 0)]):
        text = build_playlist(files)
        playlist = parse(text)
        assert playlist.segments == []
        assert "#EXT-X-TARGETDURATION:1\n" in text


@pytest.mark.parametrize(
    ("durations", "target"),
    [([10_000], 10), ([10_001], 11), ([999], 1), ([1], 1), ([2_500, 10_000, 9_999], 10)],
)
def test_target_duration_is_the_ceiling_of_the_longest_extinf(
    durations: list[int], target: int
) -> None:
    offsets = [sum(durations[:i]) for i in range(len(durations))]
    files = [ts(offset, d) for offset, d in zip(offsets, durations, strict=True)]
    playlist = parse(build_playlist(files))
    assert playlist.target_duration == target


@pytest.mark.parametrize(
    "bad_uri",
    [
        "",
        " media/a.ts",
        "media/a.ts ",
        "#media/a.ts",
        "media/a\n#EXT-X-ENDLIST",
        "media/a\r.ts",
        "media/a\u2028.ts",
        "media/a\x00.ts",
        'media/a".ts',
    ],
)
def test_a_uri_that_would_break_the_playlist_raises(bad_uri: str) -> None:
    with pytest.raises(ValueError, match="uri"):
        build_playlist([PlaylistSegment(BASE_MS, 1_000, bad_uri)])
    # Even as a map, and even on a file that would be dropped (zero length)
    with pytest.raises(ValueError, match="uri"):
        build_playlist([PlaylistSegment(BASE_MS, 0, "media/a.mp4", map_uri=bad_uri)])


@pytest.mark.parametrize(
    "bad",
    [
        PlaylistSegment(BASE_MS, -1, "media/a.ts"),
        PlaylistSegment(BASE_MS, 1_000, "media/a.mp4", byte_range=(0, 10)),
        PlaylistSegment(BASE_MS, 1_000, "media/a.mp4", byte_range=(10, -1)),
        PlaylistSegment(BASE_MS, 1_000, "media/a.mp4", map_range=(800, 0)),
    ],
)
def test_a_bad_duration_or_range_raises(bad: PlaylistSegment) -> None:
    with pytest.raises(ValueError):
        build_playlist([bad])


def test_program_date_time_is_utc_with_milliseconds_and_z() -> None:
    text = build_playlist([ts(7, 1_000)])
    assert "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T12:00:00.007Z\n" in text


def test_route_constants() -> None:
    assert CONTENT_TYPE == "application/vnd.apple.mpegurl"
    assert MAX_WINDOW_MS == 24 * 60 * 60 * 1000


# --- properties -----------------------------------------------------------------

files_strategy = st.lists(
    st.tuples(
        st.integers(0, 200_000),
        st.integers(0, 30_000),
        st.sampled_from(["ts", "fmp4"]),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(raw=files_strategy)
def test_property_playlist_plays_exactly_what_is_not_covered(
    raw: list[tuple[int, int, str]],
) -> None:
    # Given any camera files (TS first, then fragmented MP4, so no TS follows a map)
    files = [ts(o, d) for o, d, c in raw if c == "ts"]
    latest_ts = max((f.start_ms for f in files), default=BASE_MS)
    files += [fmp4(latest_ts - BASE_MS + 1 + o, d) for o, d, c in raw if c == "fmp4"]

    # When the playlist is built
    playlist = parse(build_playlist(files))

    # Then it plays, in start order, exactly the files not covered by those before them
    ordered = sorted(files, key=lambda f: (f.start_ms, -f.duration_ms, f.uri))
    expected = [
        f
        for i, f in enumerate(ordered)
        if f.duration_ms > 0
        and f.start_ms + f.duration_ms
        > max((g.start_ms + g.duration_ms for g in ordered[:i]), default=-1)
    ]
    assert [s.uri for s in playlist.segments] == [f.uri for f in expected]
    assert [s.program_date_time for s in playlist.segments] == [utc(f.start_ms) for f in expected]
    assert [round(s.duration * 1000) for s in playlist.segments] == [
        f.duration_ms for f in expected
    ]
    assert [s.init_section is not None for s in playlist.segments] == [
        f.map_uri is not None for f in expected
    ]
