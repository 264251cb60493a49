"""HLS VOD media playlists of video segments (docs/api.md, RFC 8216).

Pure code: the caller looks the segments up and presigns their URLs; this
module only turns ``(start, duration, url)`` records into playlist text.

Timeline rules, applied after sorting by start (ties: longer first, then url):

- a zero-length segment cannot be played and is dropped;
- a segment entirely covered by what was already played (its end is not after
  the end played so far) is skipped;
- a segment that starts before the end played so far (partial overlap) is kept
  with its real duration and no discontinuity;
- ``#EXT-X-DISCONTINUITY`` marks a real gap only: the next start is more than
  ``gap_tolerance_ms`` after the end played so far — the same rule that splits
  continuous ranges (docs/read-model.md), so every discontinuity is a boundary between
  two ranges and vice versa;
- ``#EXT-X-PROGRAM-DATE-TIME`` anchors the first segment and the first one
  after each discontinuity to its wall-clock start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = [
    "CONTENT_TYPE",
    "HLS_VERSION",
    "MAX_WINDOW_MS",
    "PlaylistSegment",
    "build_playlist",
]

MAX_WINDOW_MS = 24 * 3600 * 1000
"""Longest ``to - from`` window the playlist route serves (docs/api.md)."""

CONTENT_TYPE = "application/vnd.apple.mpegurl"

HLS_VERSION = 3
"""Decimal ``EXTINF`` durations need protocol version 3 (RFC 8216 §7)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# RFC 8216 §4.1 forbids the C0/C1 control characters in a playlist (CR and LF
# only as line terminators). U+2028/U+2029 are line breaks for many parsers
# (Python's str.splitlines among them). Any of these in a URI line would cut it
# in two and let the rest be read as a tag or another URI.
_FORBIDDEN_IN_URI = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class PlaylistSegment:
    start_ms: int
    """Start of the segment, epoch milliseconds UTC."""
    duration_ms: int
    """Length in milliseconds; 0 for a bad/zero-length entry (it is dropped)."""
    url: str
    """Presigned URL of the media segment, emitted verbatim."""


def build_playlist(segments: Iterable[PlaylistSegment], gap_tolerance_ms: int) -> str:
    """Return the text of an HLS VOD media playlist of ``segments``.

    Raises ``ValueError`` for a negative ``gap_tolerance_ms``, a negative
    duration, or a URL that could not be written as one URI line (empty,
    starting with ``#``, with surrounding whitespace, or containing a line
    break or control character). Validation covers every input, including the
    segments that would be dropped or skipped.
    """
    if gap_tolerance_ms < 0:
        raise ValueError(f"gap_tolerance_ms must be >= 0, got {gap_tolerance_ms}")
    items = list(segments)
    for segment in items:
        _check(segment)
    items.sort(key=lambda s: (s.start_ms, -s.duration_ms, s.url))

    body: list[str] = []
    longest_ms = 0
    played_end: int | None = None
    for segment in items:
        if segment.duration_ms == 0:
            continue
        end = segment.start_ms + segment.duration_ms
        if played_end is None:
            body.append(f"#EXT-X-PROGRAM-DATE-TIME:{_program_date_time(segment.start_ms)}")
        elif end <= played_end:
            continue  # entirely covered by what was already played
        elif segment.start_ms - played_end > gap_tolerance_ms:
            body.append("#EXT-X-DISCONTINUITY")
            body.append(f"#EXT-X-PROGRAM-DATE-TIME:{_program_date_time(segment.start_ms)}")
        body.append(f"#EXTINF:{_seconds(segment.duration_ms)},")
        body.append(segment.url)
        longest_ms = max(longest_ms, segment.duration_ms)
        played_end = end  # a kept segment always ends after what was played before

    # RFC 8216 §4.3.3.1: every EXTINF rounded to the nearest integer must be
    # <= TARGETDURATION; the ceiling of the longest one satisfies it for all.
    target_duration = max(1, -(-longest_ms // 1000))
    lines = [
        "#EXTM3U",
        f"#EXT-X-VERSION:{HLS_VERSION}",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        f"#EXT-X-TARGETDURATION:{target_duration}",
        "#EXT-X-MEDIA-SEQUENCE:0",
        *body,
        "#EXT-X-ENDLIST",
    ]
    return "\n".join(lines) + "\n"


def _check(segment: PlaylistSegment) -> None:
    if segment.duration_ms < 0:
        raise ValueError(f"duration_ms must be >= 0, got {segment.duration_ms}")
    url = segment.url
    if not url:
        raise ValueError("segment url is empty")
    if _FORBIDDEN_IN_URI.search(url):
        raise ValueError(f"segment url contains a line break or control character: {url!r}")
    if url.startswith("#"):
        raise ValueError(f"segment url starts with '#' and would be read as a tag: {url!r}")
    if url != url.strip():
        raise ValueError(f"segment url has surrounding whitespace: {url!r}")


def _seconds(milliseconds: int) -> str:
    """Exact decimal seconds with three places (no float rounding)."""
    return f"{milliseconds // 1000}.{milliseconds % 1000:03d}"


def _program_date_time(epoch_ms: int) -> str:
    """``2026-11-30T12:00:00.000Z``: UTC, milliseconds, ``Z``."""
    try:
        moment = _EPOCH + timedelta(milliseconds=epoch_ms)
    except OverflowError as error:
        raise ValueError(f"start_ms out of the datetime range: {epoch_ms}") from error
    return moment.isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"
