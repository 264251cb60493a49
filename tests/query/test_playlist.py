"""HLS VOD playlist of video segments (docs/api.md, RFC 8216).

Every playlist built here is parsed back with the ``m3u8`` library (lenient
``m3u8.loads`` for the model, ``m3u8.parse(strict=True)`` for syntax) and
checked line by line against the RFC rules the library does not enforce. The
expectations of the property test are computed from the definitions in docs/api.md
(unions of intervals, gaps longer than the tolerance), not from the module's
single-pass algorithm.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import m3u8
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.core.ranges import merge_ranges
from video_index.query.playlist import (
    CONTENT_TYPE,
    MAX_WINDOW_MS,
    PlaylistSegment,
    build_playlist,
)

BASE_MS = 1_796_040_000_000  # 2026-11-30T12:00:00.000Z
TOLERANCE_MS = 1000
PDT_LINE = re.compile(r"^#EXT-X-PROGRAM-DATE-TIME:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
EXTINF_LINE = re.compile(r"^#EXTINF:\d+\.\d{3},$")
HEADER = [
    "#EXTM3U",
    "#EXT-X-VERSION:3",
    "#EXT-X-PLAYLIST-TYPE:VOD",
]


def presigned(name: str) -> str:
    """A URL shaped like an S3 presigned GET (``&``, ``%`` and ``=`` included)."""
    return (
        f"https://bucket.s3.eu-west-1.amazonaws.com/v1/video/cam-1/{name}.mp4"
        "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=AKIAEXAMPLE%2F20261130%2Feu-west-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20261130T120000Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host"
        f"&X-Amz-Signature=5f{name}%3D"
    )


def seg(offset_ms: int, duration_ms: int, name: str | None = None) -> PlaylistSegment:
    return PlaylistSegment(
        start_ms=BASE_MS + offset_ms,
        duration_ms=duration_ms,
        url=presigned(name if name is not None else f"s{offset_ms}-{duration_ms}"),
    )


def utc(epoch_ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=epoch_ms)


def parse(text: str) -> m3u8.M3U8:
    """Parse ``text`` and check the RFC 8216 rules every result must satisfy."""
    # Strict syntax: no unknown lines, tags allowed by the declared version.
    m3u8.parse(text, strict=True)
    playlist = m3u8.loads(text)

    lines = text.split("\n")
    assert lines[-1] == "", "the playlist ends with a line terminator"
    lines = lines[:-1]
    assert "\r" not in text
    assert lines[:3] == HEADER
    assert re.fullmatch(r"#EXT-X-TARGETDURATION:[1-9]\d*", lines[3])
    assert lines[4] == "#EXT-X-MEDIA-SEQUENCE:0"
    assert lines[-1] == "#EXT-X-ENDLIST"
    assert lines.count("#EXT-X-ENDLIST") == 1
    for number, line in enumerate(lines):
        assert line, "no blank lines"
        if line.startswith("#EXTINF:"):
            assert EXTINF_LINE.match(line), line
            assert not lines[number + 1].startswith("#"), "an EXTINF is followed by its URI"
        elif line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            assert PDT_LINE.match(line), line
        elif line == "#EXT-X-DISCONTINUITY":
            assert lines[number + 1].startswith("#EXT-X-PROGRAM-DATE-TIME:")
        elif not line.startswith("#"):
            assert lines[number - 1].startswith("#EXTINF:"), "a URI follows its EXTINF"

    assert playlist.is_endlist
    assert playlist.playlist_type == "vod"
    assert playlist.version == 3
    assert playlist.media_sequence == 0
    assert not playlist.is_variant
    durations = [segment.duration for segment in playlist.segments]
    # RFC 8216 §4.3.3.1: each EXTINF (rounded) <= TARGETDURATION; here the
    # target is the ceiling of the longest one, so even unrounded they fit.
    assert playlist.target_duration == max([1, *(math.ceil(d) for d in durations)])
    assert all(d <= playlist.target_duration for d in durations)
    assert all(d > 0 for d in durations)
    if playlist.segments:
        assert playlist.segments[0].program_date_time is not None
        assert not playlist.segments[0].discontinuity
    for segment in playlist.segments:
        # A program-date-time appears on the first segment and after each
        # discontinuity, nowhere else.
        if segment is not playlist.segments[0]:
            assert (segment.program_date_time is not None) == segment.discontinuity
    return playlist


def discontinuities(playlist: m3u8.M3U8) -> list[int]:
    return [i for i, segment in enumerate(playlist.segments) if segment.discontinuity]


def program_date_times(playlist: m3u8.M3U8) -> list[datetime]:
    return [s.program_date_time for s in playlist.segments if s.program_date_time is not None]


# --- examples -----------------------------------------------------------------


def test_contiguous_segments_have_no_discontinuity_and_one_program_date_time() -> None:
    # Given three 10 s segments back to back, passed out of order
    segments = [seg(10_000, 10_000), seg(0, 10_000), seg(20_000, 10_000)]

    # When the playlist is built
    text = build_playlist(segments, TOLERANCE_MS)

    # Then they play in time order, without a discontinuity, anchored once
    playlist = parse(text)
    assert [s.uri for s in playlist.segments] == [
        seg(0, 10_000).url,
        seg(10_000, 10_000).url,
        seg(20_000, 10_000).url,
    ]
    assert [s.duration for s in playlist.segments] == [10.0, 10.0, 10.0]
    assert discontinuities(playlist) == []
    assert "#EXT-X-DISCONTINUITY" not in text
    assert program_date_times(playlist) == [utc(BASE_MS)]
    assert text.count("#EXT-X-PROGRAM-DATE-TIME:") == 1
    assert "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T12:00:00.000Z\n#EXTINF:10.000," in text


def test_gap_larger_than_tolerance_gives_one_discontinuity_at_the_next_segment() -> None:
    # Given two contiguous segments, then a 5 s hole, then a third one
    segments = [seg(0, 10_000), seg(10_000, 10_000), seg(25_123, 4_000)]

    # When the playlist is built with a 1 s tolerance
    text = build_playlist(segments, TOLERANCE_MS)

    # Then exactly one discontinuity precedes the third segment, followed by a
    # program-date-time equal to that segment's start
    playlist = parse(text)
    assert text.count("#EXT-X-DISCONTINUITY") == 1
    assert discontinuities(playlist) == [2]
    assert playlist.segments[2].uri == seg(25_123, 4_000).url
    assert playlist.segments[2].program_date_time == utc(BASE_MS + 25_123)
    assert playlist.segments[1].program_date_time is None
    assert program_date_times(playlist) == [utc(BASE_MS), utc(BASE_MS + 25_123)]
    assert (
        "#EXT-X-DISCONTINUITY\n"
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T12:00:25.123Z\n"
        "#EXTINF:4.000,\n" + seg(25_123, 4_000).url + "\n"
    ) in text


@pytest.mark.parametrize(
    ("gap_ms", "tolerance_ms", "expect_discontinuity"),
    [
        (1, 1000, False),
        (999, 1000, False),
        (1000, 1000, False),  # exactly the tolerance is still continuous (docs/read-model.md: ≤)
        (1001, 1000, True),
        (0, 0, False),
        (1, 0, True),
    ],
)
def test_gap_within_tolerance_gives_no_discontinuity(
    gap_ms: int, tolerance_ms: int, expect_discontinuity: bool
) -> None:
    # Given two segments separated by a gap of gap_ms
    segments = [seg(0, 10_000), seg(10_000 + gap_ms, 10_000)]

    # When the playlist is built with tolerance_ms
    playlist = parse(build_playlist(segments, tolerance_ms))

    # Then a discontinuity appears only when the gap exceeds the tolerance
    assert len(playlist.segments) == 2
    assert discontinuities(playlist) == ([1] if expect_discontinuity else [])
    assert len(program_date_times(playlist)) == (2 if expect_discontinuity else 1)


def test_partial_overlap_is_kept_with_its_real_duration_and_no_discontinuity() -> None:
    # Given a segment that starts 2 s before the previous one ends
    segments = [seg(0, 10_000), seg(8_000, 10_000)]

    # When the playlist is built
    text = build_playlist(segments, 0)

    # Then both play, the second with its real duration, continuously
    playlist = parse(text)
    assert [s.duration for s in playlist.segments] == [10.0, 10.0]
    assert discontinuities(playlist) == []
    assert "BYTERANGE" not in text


def test_fully_covered_segment_is_skipped_without_discontinuity() -> None:
    # Given a 60 s segment covering a 5 s one, then a segment right after the
    # 60 s one (far after the end of the covered one)
    long_one, covered, same_start_shorter, after = (
        seg(0, 60_000),
        seg(5_000, 5_000),
        seg(0, 30_000),
        seg(60_000, 10_000),
    )

    # When the playlist is built with no tolerance
    playlist = parse(build_playlist([covered, after, same_start_shorter, long_one], 0))

    # Then the covered segments are skipped and nothing is discontinuous: the
    # end played so far is the 60 s segment's end, not the covered one's
    assert [s.uri for s in playlist.segments] == [long_one.url, after.url]
    assert discontinuities(playlist) == []


def test_segment_covered_by_the_union_of_two_earlier_ones_is_skipped() -> None:
    # Given [0, 10 s) and [8 s, 20 s), and a segment [9 s, 19 s) inside their union
    first, second, inside = seg(0, 10_000), seg(8_000, 12_000), seg(9_000, 10_000)

    # When the playlist is built
    playlist = parse(build_playlist([first, second, inside], 0))

    # Then only the two covering segments play
    assert [s.uri for s in playlist.segments] == [first.url, second.url]
    assert discontinuities(playlist) == []


def test_overlaps_never_give_a_discontinuity() -> None:
    # Given a chain of overlapping, nested and touching segments
    segments = [
        seg(0, 10_000),
        seg(9_000, 10_000),
        seg(10_000, 2_000),
        seg(19_000, 1),
        seg(19_001, 30_000),
        seg(20_000, 5_000),
    ]

    # When the playlist is built with no tolerance
    playlist = parse(build_playlist(segments, 0))

    # Then no discontinuity appears
    assert discontinuities(playlist) == []
    assert len(program_date_times(playlist)) == 1


def test_tie_on_start_keeps_the_longer_then_the_smaller_url() -> None:
    # Given segments sharing a start: two equal 10 s ones and a shorter one
    b, a, short = seg(0, 10_000, "b"), seg(0, 10_000, "a"), seg(0, 4_000, "c")

    # When the playlist is built
    playlist = parse(build_playlist([short, b, a], 0))

    # Then the longest wins, ties broken by URL; the others are covered
    assert [s.uri for s in playlist.segments] == [a.url]


def test_zero_length_segment_is_dropped() -> None:
    # Given a zero-length entry in the window, one at the very start, and one
    # in the middle of a gap
    segments = [
        seg(0, 0, "zero-first"),
        seg(0, 10_000),
        seg(10_000, 0, "zero-middle"),
        seg(10_000, 10_000),
        seg(25_000, 0, "zero-in-gap"),
        seg(30_000, 10_000),
    ]

    # When the playlist is built
    text = build_playlist(segments, TOLERANCE_MS)

    # Then the zero-length entries do not appear, and the one in the gap does
    # not bridge it: the discontinuity is anchored on the next real segment
    playlist = parse(text)
    assert "zero" not in text
    assert [s.uri for s in playlist.segments] == [
        seg(0, 10_000).url,
        seg(10_000, 10_000).url,
        seg(30_000, 10_000).url,
    ]
    assert discontinuities(playlist) == [2]
    assert playlist.segments[0].program_date_time == utc(BASE_MS)
    assert playlist.segments[2].program_date_time == utc(BASE_MS + 30_000)


def test_only_zero_length_segments_give_an_empty_playlist() -> None:
    # Given nothing but zero-length entries
    # When the playlist is built
    playlist = parse(build_playlist([seg(0, 0), seg(5, 0)], TOLERANCE_MS))

    # Then it is a valid playlist without segments
    assert playlist.segments == []
    assert playlist.target_duration == 1


def test_empty_input_gives_a_valid_empty_playlist() -> None:
    # Given no segments
    # When the playlist is built
    text = build_playlist([], TOLERANCE_MS)

    # Then it is the minimal VOD playlist
    assert text == (
        "#EXTM3U\n"
        "#EXT-X-VERSION:3\n"
        "#EXT-X-PLAYLIST-TYPE:VOD\n"
        "#EXT-X-TARGETDURATION:1\n"
        "#EXT-X-MEDIA-SEQUENCE:0\n"
        "#EXT-X-ENDLIST\n"
    )
    playlist = parse(text)
    assert playlist.segments == []
    assert playlist.target_duration == 1


@pytest.mark.parametrize(
    ("durations_ms", "extinf", "target"),
    [
        ([10_001], "10.001", 11),
        ([10_000], "10.000", 10),
        ([9_999, 10_000], "10.000", 10),
        ([1], "0.001", 1),
        ([999], "0.999", 1),
        ([1_000], "1.000", 1),
        ([59_999], "59.999", 60),
        ([60_000, 2_500], "60.000", 60),
        ([3_600_000], "3600.000", 3600),
    ],
)
def test_target_duration_is_the_ceiling_of_the_longest_extinf(
    durations_ms: list[int], extinf: str, target: int
) -> None:
    # Given back-to-back segments of these durations
    segments, offset = [], 0
    for duration in durations_ms:
        segments.append(seg(offset, duration))
        offset += duration

    # When the playlist is built
    text = build_playlist(segments, 0)

    # Then TARGETDURATION is the ceiling of the longest EXTINF, written exactly
    playlist = parse(text)
    assert f"#EXTINF:{extinf},\n" in text
    assert f"#EXT-X-TARGETDURATION:{target}\n" in text
    assert playlist.target_duration == target
    assert all(s.duration <= target for s in playlist.segments)


def test_urls_are_emitted_verbatim() -> None:
    # Given presigned-looking URLs with &, %, = and a fragment-like tail
    urls = [
        presigned("a"),
        "https://example.com/v1/x.mp4?a=1&b=%2F%3D%26&c==&d=%E2%82%AC",
        "/relative/path%20with%20escapes.mp4?x=&y=1",
    ]
    segments = [PlaylistSegment(BASE_MS + i * 1000, 1000, url) for i, url in enumerate(urls)]

    # When the playlist is built
    text = build_playlist(segments, 0)

    # Then each URL is its own line, byte for byte
    playlist = parse(text)
    assert [s.uri for s in playlist.segments] == urls
    for url in urls:
        assert f"\n{url}\n" in text


@pytest.mark.parametrize(
    "bad_url",
    [
        "https://x/a.mp4\n#EXT-X-ENDLIST",
        "https://x/a.mp4\r#EXT-X-DISCONTINUITY",
        "https://x/a.mp4\r\n",
        "\nhttps://x/a.mp4",
        "https://x/a.mp4\u2028#EXT-X-ENDLIST",
        "https://x/a\x85.mp4",
        "https://x/a\x00.mp4",
        "https://x/a\t.mp4",
        "#EXT-X-ENDLIST",
        "",
        " https://x/a.mp4",
    ],
)
def test_url_that_would_break_the_playlist_raises(bad_url: str) -> None:
    # Given a segment whose URL contains a line break (or is otherwise not a
    # single URI line)
    segments = [seg(0, 10_000), PlaylistSegment(BASE_MS + 10_000, 10_000, bad_url)]

    # When / Then building the playlist refuses it instead of injecting tags
    with pytest.raises(ValueError, match="url"):
        build_playlist(segments, TOLERANCE_MS)


def test_bad_url_raises_even_on_a_segment_that_would_be_dropped() -> None:
    # Given a zero-length segment (dropped) with a newline in its URL
    segments = [seg(0, 10_000), PlaylistSegment(BASE_MS, 0, "a\nb")]

    # When / Then the input is still rejected: validation does not depend on
    # which segments happen to be skipped
    with pytest.raises(ValueError, match="url"):
        build_playlist(segments, TOLERANCE_MS)


def test_negative_duration_or_tolerance_raises() -> None:
    # Given / When / Then impossible inputs are refused
    with pytest.raises(ValueError, match="duration_ms"):
        build_playlist([seg(0, -1)], TOLERANCE_MS)
    with pytest.raises(ValueError, match="gap_tolerance_ms"):
        build_playlist([seg(0, 1000)], -1)


def test_program_date_time_is_utc_with_milliseconds_and_z() -> None:
    # Given a segment starting at a millisecond-precise instant
    start_ms = BASE_MS + 7_654  # 2026-11-30T12:00:07.654Z

    # When the playlist is built
    text = build_playlist([PlaylistSegment(start_ms, 1000, "a.mp4")], 0)

    # Then its program-date-time is written in the API's time format
    assert "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T12:00:07.654Z\n" in text
    assert parse(text).segments[0].program_date_time == utc(start_ms)


def test_route_constants() -> None:
    # Given / When / Then the playlist route serves HLS for at most 24 h
    assert CONTENT_TYPE == "application/vnd.apple.mpegurl"
    assert MAX_WINDOW_MS == 86_400_000


# --- properties ---------------------------------------------------------------


def union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of half-open intervals: overlapping or touching ones join."""
    out: list[list[int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(start, end) for start, end in out]


def covers(intervals: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a <= start and end <= b for a, b in union(intervals))


segment_lists = st.lists(
    st.tuples(st.integers(0, 400_000), st.integers(0, 60_000)),
    max_size=30,
)


@settings(max_examples=400, deadline=None)
@given(raw=segment_lists, tolerance_ms=st.integers(0, 5_000), data=st.data())
def test_property_playlist_matches_the_timeline(
    raw: list[tuple[int, int]], tolerance_ms: int, data: st.DataObject
) -> None:
    # Given random segments (gaps, overlaps, nesting, equal starts, zero
    # lengths) with unique URLs, in random order
    segments = [seg(offset, duration, f"u{i:02d}") for i, (offset, duration) in enumerate(raw)]
    shuffled = data.draw(st.permutations(segments))

    # When the playlist is built
    text = build_playlist(shuffled, tolerance_ms)

    # Then it parses and satisfies the RFC rules (checked in parse())
    playlist = parse(text)

    # ... the input order does not matter
    assert build_playlist(segments, tolerance_ms) == text

    # ... the played segments are the non-zero ones, in play order, minus those
    # whose interval lies inside the union of the segments played before them
    playable = sorted(
        (s for s in segments if s.duration_ms > 0),
        key=lambda s: (s.start_ms, -s.duration_ms, s.url),
    )
    expected: list[PlaylistSegment] = []
    for i, candidate in enumerate(playable):
        before = [(s.start_ms, s.start_ms + s.duration_ms) for s in playable[:i]]
        if not covers(before, candidate.start_ms, candidate.start_ms + candidate.duration_ms):
            expected.append(candidate)
    assert [s.uri for s in playlist.segments] == [s.url for s in expected]
    assert [s.duration for s in playlist.segments] == [s.duration_ms / 1000 for s in expected]

    # ... discontinuities are the real gaps: holes in the union of all
    # playable intervals longer than the tolerance
    pieces = union([(s.start_ms, s.start_ms + s.duration_ms) for s in playable])
    after_gap = [nxt[0] for prev, nxt in pairwise(pieces) if nxt[0] - prev[1] > tolerance_ms]
    assert len(discontinuities(playlist)) == len(after_gap)
    assert text.count("#EXT-X-DISCONTINUITY") == len(after_gap)
    # (the same boundaries as the continuous ranges of docs/read-model.md)
    ranges = merge_ranges(
        ((s.start_ms, s.start_ms + s.duration_ms) for s in playable), tolerance_ms
    )
    assert len(after_gap) == max(0, len(ranges) - 1)

    # ... each segment after a discontinuity carries its own start as
    # program-date-time, and these are exactly the starts after the gaps
    start_of = {s.url: s.start_ms for s in segments}
    for index in discontinuities(playlist):
        segment = playlist.segments[index]
        assert segment.program_date_time == utc(start_of[segment.uri])
    expected_anchors = [pieces[0][0], *after_gap] if pieces else []
    assert program_date_times(playlist) == [utc(ms) for ms in expected_anchors]

    # ... and TARGETDURATION is the ceiling of the longest played segment
    longest = max((s.duration_ms for s in expected), default=0)
    assert playlist.target_duration == max(1, math.ceil(longest / 1000))
    assert all(s.duration <= playlist.target_duration for s in playlist.segments)


@settings(max_examples=200, deadline=None)
@given(
    durations=st.lists(st.integers(1, 3_600_000), min_size=1, max_size=10),
    start=st.integers(0, 4_102_444_800_000),  # up to 2100-01-01
)
def test_property_every_extinf_fits_the_target_duration(durations: list[int], start: int) -> None:
    # Given contiguous segments of arbitrary positive durations up to one hour
    segments, offset = [], start
    for i, duration in enumerate(durations):
        segments.append(PlaylistSegment(offset, duration, f"https://x/{i}.mp4?a=1&b=%20"))
        offset += duration

    # When the playlist is built
    playlist = parse(build_playlist(segments, 0))

    # Then every EXTINF is <= TARGETDURATION (RFC 8216 §4.3.3.1), which is the
    # ceiling of the longest, and the EXTINF values are exact milliseconds
    assert all(s.duration <= playlist.target_duration for s in playlist.segments)
    assert playlist.target_duration == math.ceil(max(durations) / 1000)
    assert [round(s.duration * 1000) for s in playlist.segments] == durations
    assert program_date_times(playlist) == [utc(start)]
