"""HLS media playlists of camera files that real players play (docs/playback.md, RFC 8216):
a window's (VOD, :func:`build_playlist`) and a camera's newest files (live,
:func:`build_live_playlist`), both listing their files the same way.

Pure code: the caller decides how each file is fetched (its URI, and for
fragmented MP4 its init and byte ranges); this module only turns those records
into playlist text, by these rules:

- files are sorted by start (ties: longer first, then URI); a zero-length file is
  dropped, and a file entirely covered by what was already played is skipped (a
  partial overlap is kept with its real duration);
- ``#EXT-X-DISCONTINUITY`` precedes every file after the first: cameras cut
  recordings into independent files whose timestamps each start anew (RFC 8216
  §4.3.2.3), so a player must reset its timeline at every file — which also
  covers every real gap in the recording;
- ``#EXT-X-PROGRAM-DATE-TIME`` on every file maps player time back to wall-clock
  time (overlays, annotations), gaps included;
- a fragmented MP4 file gets its own ``#EXT-X-MAP`` (its ``ftyp`` + ``moov``, by
  byte range) and ``#EXT-X-BYTERANGE`` for its media; a map applies until the
  next one (§4.3.2.5), so once a file has a map every later file needs one too;
- ``EXT-X-VERSION`` is the lowest the tags used allow: 6 with ``EXT-X-MAP``, 4
  with byte ranges only, 3 otherwise (§7);
- a live playlist has no end tag and numbers its files from their start times, so a
  number only moves forward (:func:`media_sequence`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = [
    "CONTENT_TYPE",
    "MAX_PLAYLIST_FILES",
    "MAX_WINDOW_MS",
    "PlaylistSegment",
    "build_live_playlist",
    "build_playlist",
    "discontinuity_sequence",
    "media_sequence",
]

#: Longest ``to - from`` window the playlist route serves (docs/api.md).
MAX_WINDOW_MS: Final = 24 * 3600 * 1000
#: The most files one playlist lists (docs/api.md, "Limits"): the answer is one synchronous
#: Lambda response, at most 6 MB. A file takes at most ~400 bytes of it (its longest key
#: file name twice, 13-digit byte ranges, six line breaks and four quotes escaped in the
#: JSON), so 14,400 files (4 hours of 1 s segments, 8 of 2 s) stay under 5.8 MB even then;
#: a day of 1 s segments (86,400 files, ~21 MB) could never be one answer.
MAX_PLAYLIST_FILES: Final = 14_400

CONTENT_TYPE: Final = "application/vnd.apple.mpegurl"
#: A live playlist numbers files by their start over their spacing, the median duration
#: rounded to this step (:func:`media_sequence`).
SEQUENCE_UNIT_STEP_MS: Final = 100

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_MS: Final = 24 * 3600 * 1000

# RFC 8216 §4.1 forbids the C0/C1 control characters in a playlist (CR and LF
# only as line terminators). U+2028/U+2029 are line breaks for many parsers
# (Python's str.splitlines among them). Any of these in a URI would cut it in two
# and let the rest be read as a tag or another URI; a quote would end a quoted URI.
_FORBIDDEN_IN_URI: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

ByteRange = tuple[int, int]  # (length, offset)


@dataclass(frozen=True, slots=True)
class PlaylistSegment:
    start_ms: int
    """Start of the file, epoch milliseconds UTC."""
    duration_ms: int
    """Length in milliseconds; 0 for a bad/zero-length entry (it is dropped)."""
    uri: str
    """Where a player fetches the file's media, emitted verbatim."""
    byte_range: ByteRange | None = None
    """The media's part of the file at ``uri`` (fragmented MP4), or the whole file."""
    map_uri: str | None = None
    """The file's init (fragmented MP4: ``ftyp`` + ``moov``), or None (MPEG-TS)."""
    map_range: ByteRange | None = None
    """The init's part of the file at ``map_uri``, or the whole file."""


def build_playlist(segments: Iterable[PlaylistSegment], *, comments: Iterable[str] = ()) -> str:
    """Return the text of an HLS VOD media playlist of ``segments``; each of ``comments``
    is one comment line after the header (``# …``: RFC 8216 §4.1, players ignore it).

    Raises ``ValueError`` for a negative duration or byte range, a map range
    without a map, a file without a map after one with a map, or a URI that could
    not be written (empty, starting with ``#``, surrounding whitespace, a line
    break, a control character or a double quote). Validation covers every input,
    including the files that would be dropped or skipped.
    """
    listing = _listing(segments)
    lines = [
        "#EXTM3U",
        f"#EXT-X-VERSION:{listing.version}",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        f"#EXT-X-TARGETDURATION:{listing.target_duration}",
        "#EXT-X-MEDIA-SEQUENCE:0",
        *(_comment(text) for text in comments),
        *listing.body,
        "#EXT-X-ENDLIST",
    ]
    return "\n".join(lines) + "\n"


def build_live_playlist(segments: Iterable[PlaylistSegment]) -> str:
    """Return the text of an HLS live (sliding window) media playlist of ``segments``, the
    newest files of a camera (docs/playback.md, "Live"): the files listed as
    :func:`build_playlist` lists them, without ``EXT-X-ENDLIST`` and without a playlist
    type (the server removes files from its start as new ones come), numbered from their
    start times (:func:`media_sequence`, :func:`discontinuity_sequence`). No files: an
    empty playlist (players wait and ask again). Raises ``ValueError`` as
    :func:`build_playlist` does."""
    listing = _listing(segments)
    lines = [
        "#EXTM3U",
        f"#EXT-X-VERSION:{listing.version}",
        f"#EXT-X-TARGETDURATION:{listing.target_duration}",
        f"#EXT-X-MEDIA-SEQUENCE:{media_sequence(listing.kept)}",
        f"#EXT-X-DISCONTINUITY-SEQUENCE:{discontinuity_sequence(listing.kept)}",
        *listing.body,
    ]
    return "\n".join(lines) + "\n"


def media_sequence(kept: Sequence[PlaylistSegment]) -> int:
    """The media sequence number of the first of ``kept`` (files in start order): its start
    over the files' spacing (:func:`sequence_unit_ms`), rounded.

    RFC 8216 numbers the files of a playlist consecutively and a file keeps its number
    across reloads (§6.2.2); a live window slides, so the number cannot be a position in
    it. For a camera that cuts files of one length back to back, start / spacing is the
    file's own count since the epoch: each file keeps one number, the next file's is one
    more, and the number only grows as the window slides. Rounding the spacing absorbs a
    file a frame longer or shorter; rounding the quotient absorbs starts a few
    milliseconds off a camera's grid. After a gap the numbers jump forward by about the
    gap over the spacing, which is also where hls.js expects the later files (it
    extrapolates a jump at the target duration). A camera whose files change length
    starts a new numbering (the number may then go back once); files of irregular
    lengths keep increasing numbers but not always one apart."""
    if not kept:
        return 0
    unit = sequence_unit_ms(kept)
    return (kept[0].start_ms + unit // 2) // unit


def discontinuity_sequence(kept: Sequence[PlaylistSegment]) -> int:
    """The discontinuity sequence number of the first of ``kept``: every file is its own
    discontinuity, so it moves with the media sequence (RFC 8216 §6.2.2: one more per file
    removed), counted from the first file of the first's UTC day rather than from the epoch.

    A discontinuity number is an index into hls.js's per-discontinuity timestamps (a sparse
    array it scans from 0 at every reload): the epoch's count, about 9 × 10^8 for 2-second
    files, froze its page for 15 s at each reload; a day's count stays under 86,400 even for
    1-second files. At midnight (UTC) it starts again from 0, the one place it goes back;
    hls.js carries its own count across by the files both playlists list."""
    if not kept:
        return 0
    unit = sequence_unit_ms(kept)
    day_start = kept[0].start_ms - kept[0].start_ms % _DAY_MS
    return media_sequence(kept) - (day_start + unit // 2) // unit


def sequence_unit_ms(kept: Sequence[PlaylistSegment]) -> int:
    """The files' spacing as numbering sees it: their median duration rounded to the nearest
    :data:`SEQUENCE_UNIT_STEP_MS` (at least one step)."""
    durations = sorted(s.duration_ms for s in kept)
    median = durations[len(durations) // 2] if durations else 0
    step = SEQUENCE_UNIT_STEP_MS
    return max(step, (median + step // 2) // step * step)


@dataclass(frozen=True, slots=True)
class _Listing:
    """What the files of a playlist become: the lines after the header, the files kept, and
    what the header says of them."""

    body: list[str]
    kept: list[PlaylistSegment]
    target_duration: int
    version: int


def _listing(segments: Iterable[PlaylistSegment]) -> _Listing:
    items = list(segments)
    for segment in items:
        _check(segment)
    items.sort(key=lambda s: (s.start_ms, -s.duration_ms, s.uri))

    body: list[str] = []
    kept: list[PlaylistSegment] = []
    played_end: int | None = None
    mapped = False
    uses_byte_ranges = False
    for segment in items:
        end = segment.start_ms + segment.duration_ms
        if segment.duration_ms == 0 or (played_end is not None and end <= played_end):
            continue  # nothing to play, or entirely covered by what was already played
        if played_end is not None:
            body.append("#EXT-X-DISCONTINUITY")
        body.append(f"#EXT-X-PROGRAM-DATE-TIME:{_program_date_time(segment.start_ms)}")
        if segment.map_uri is not None:
            mapped = True
            attributes = f'URI="{segment.map_uri}"'
            if segment.map_range is not None:
                attributes += f',BYTERANGE="{_byte_range(segment.map_range)}"'
                uses_byte_ranges = True
            body.append(f"#EXT-X-MAP:{attributes}")
        elif mapped:
            raise ValueError(
                f"{segment.uri!r} has no EXT-X-MAP after a file with one: the earlier map "
                "would apply to it (list every file of such a window with a map)"
            )
        body.append(f"#EXTINF:{_seconds(segment.duration_ms)},")
        if segment.byte_range is not None:
            body.append(f"#EXT-X-BYTERANGE:{_byte_range(segment.byte_range)}")
            uses_byte_ranges = True
        body.append(segment.uri)
        kept.append(segment)
        played_end = end  # a kept file always ends after what was played before

    # RFC 8216 §4.3.3.1: every EXTINF rounded to the nearest integer must be
    # <= TARGETDURATION; the ceiling of the longest one satisfies it for all.
    longest_ms = max((s.duration_ms for s in kept), default=0)
    target_duration = max(1, -(-longest_ms // 1000))
    version = 6 if mapped else 4 if uses_byte_ranges else 3
    return _Listing(body, kept, target_duration, version)


def _check(segment: PlaylistSegment) -> None:
    if segment.duration_ms < 0:
        raise ValueError(f"duration_ms must be >= 0, got {segment.duration_ms}")
    _check_uri(segment.uri)
    if segment.map_uri is not None:
        _check_uri(segment.map_uri)
    elif segment.map_range is not None:
        raise ValueError("map_range without map_uri")
    for byte_range in (segment.byte_range, segment.map_range):
        if byte_range is not None and (byte_range[0] <= 0 or byte_range[1] < 0):
            raise ValueError(f"a byte range must have length > 0 and offset >= 0: {byte_range}")


def _check_uri(uri: str) -> None:
    if not uri:
        raise ValueError("segment uri is empty")
    if _FORBIDDEN_IN_URI.search(uri) or '"' in uri:
        raise ValueError(f"segment uri contains a line break, control character or quote: {uri!r}")
    if uri.startswith("#"):
        raise ValueError(f"segment uri starts with '#' and would be read as a tag: {uri!r}")
    if uri != uri.strip():
        raise ValueError(f"segment uri has surrounding whitespace: {uri!r}")


def _comment(text: str) -> str:
    """A comment line: never a tag (``#EXT``), never more than one line."""
    if _FORBIDDEN_IN_URI.search(text):
        raise ValueError(f"a comment must be one line without control characters: {text!r}")
    return f"# {text}"


def _byte_range(byte_range: ByteRange) -> str:
    length, offset = byte_range
    return f"{length}@{offset}"


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
