"""Reading only the bytes of a video file a picture needs (docs/playback.md, "Frames").

A camera writes its files in time order, so the bytes of the moment ``t`` lie near
``size * t / duration`` into the file. The first ranged GET reads from the file's start
(its header: the TS tables, the fragmented MP4's ``moov``, a ``faststart`` MP4's index)
to a little past that estimate (:func:`first_read_end`); the decoder sees only those bytes
as the file (a *view*: a demuxer that searches for a time, like MPEG-TS's, searches
within them). When the decoder has not reached the first frame after ``t`` in the view,
a second read fetches the rest of the file and it decodes again.

One shape needs more: a progressive MP4 whose index (``moov``) is written after its media
(``mdat``), as cameras often do. Its top-level boxes in the first read say where the
``moov`` starts: a second read fetches it (to the file's end), the view becomes the whole
file, and the samples the decoder asks for outside what was read are fetched as it asks.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import Final

#: Read past the estimated position of ``t`` by this share of the file (bitrate varies:
#: a keyframe is larger than the frames around it) ...
MARGIN_SHARE: Final = 0.10
#: ... and by this much time (the decoder must see the first frame after ``t``) ...
LOOKAHEAD_MS: Final = 1_000
#: ... and by this many bytes (the header, and very small files read whole).
HEAD_BYTES: Final = 64 * 1024
#: The least a read for bytes the decoder asks for outside what was read fetches.
MIN_READ: Final = 256 * 1024

#: Fetches the bytes ``[start, end)`` of the file (one ranged GET).
Fetch = Callable[[int, int], bytes]


def first_read_end(size: int, duration_ms: int, offset_ms: int) -> int:
    """Where the first read of a file of ``size`` bytes and ``duration_ms`` ends, for a
    picture ``offset_ms`` into it."""
    if duration_ms <= 0:
        return size
    share = min(1.0, max(0.0, (offset_ms + LOOKAHEAD_MS) / duration_ms) + MARGIN_SHARE)
    return min(size, int(size * share) + HEAD_BYTES)


class RangedFile(io.RawIOBase):
    """A read-only file over ranged reads of an object of ``size`` bytes: reads within
    ``view`` bytes (the file as the decoder sees it) are served from what was fetched, and
    fetch what is missing. ``reads`` lists each fetch as ``(start, end)``."""

    def __init__(self, fetch: Fetch, size: int) -> None:
        super().__init__()
        self._fetch = fetch
        self.size = size
        self.view = size
        self.reads: list[tuple[int, int]] = []
        self._spans: list[tuple[int, bytes]] = []
        self._position = 0

    @property
    def bytes_read(self) -> int:
        return sum(end - start for start, end in self.reads)

    def fetch(self, start: int, end: int) -> None:
        """Read ``[start, end)`` (clipped to the file) unless it was read already."""
        start, end = max(0, start), min(self.size, end)
        if end <= start or self.held(start, end) is not None:
            return
        data = self._fetch(start, end)
        self.reads.append((start, start + len(data)))
        self._add(start, data)

    def _add(self, start: int, data: bytes) -> None:
        """Keep ``data`` at ``start``, joined with the spans it touches (one span per
        contiguous run of bytes, so a read across two fetches is served)."""
        spans = sorted([*self._spans, (start, data)])
        joined: list[tuple[int, bytes]] = []
        for first, chunk in spans:
            if joined and first <= joined[-1][0] + len(joined[-1][1]):
                previous, held = joined[-1]
                skip = previous + len(held) - first
                joined[-1] = (previous, held + chunk[skip:])
            else:
                joined.append((first, chunk))
        self._spans = joined

    def whole(self) -> bool:
        """Whether the view is the whole file."""
        return self.view >= self.size

    def held(self, start: int, end: int) -> bytes | None:
        for first, data in self._spans:
            if first <= start and end <= first + len(data):
                return data[start - first : end - first]
        return None

    # -- io.RawIOBase ----------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.view}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        end = min(self._position + len(buffer), self.view)
        if end <= self._position:
            return 0
        data = self.held(self._position, end)
        if data is None:
            # Bytes outside what was read are fetched from here on (at least MIN_READ).
            self.fetch(self._position, max(end, self._position + MIN_READ))
            data = self.held(self._position, end) or b""
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)


def open_for(fetch: Fetch, size: int, duration_ms: int, offset_ms: int, mp4: bool) -> RangedFile:
    """The file of a picture ``offset_ms`` into it, after its first read (and, for an MP4
    whose index follows its media, the read of the index)."""
    source = RangedFile(fetch, size)
    first = first_read_end(size, duration_ms, offset_ms)
    source.fetch(0, first)
    source.view = first
    if mp4 and first < size:
        index_at = _index_after_media(source.held(0, first) or b"", first)
        if index_at is not None:
            source.fetch(index_at, size)
            source.view = size
    return source


def extend(source: RangedFile) -> None:
    """Make the whole file the view: a second read fetches what the first did not."""
    if not source.whole():
        source.fetch(source.view, source.size)
        source.view = source.size


def _index_after_media(head: bytes, read_end: int) -> int | None:
    """Where an MP4's ``moov`` starts when its top-level boxes, read from ``head`` (the
    first ``read_end`` bytes), show it lies after an ``mdat`` that runs past the read;
    None when the ``moov`` comes first (faststart, fragmented) or the boxes are unclear."""
    at = 0
    while at + 8 <= len(head):
        size, kind = struct.unpack(">I4s", head[at : at + 8])
        if size == 1 and at + 16 <= len(head):
            size = struct.unpack(">Q", head[at + 8 : at + 16])[0]
        if kind == b"moov" or size < 8:
            return None
        if at + size > read_end:
            return at + size if kind == b"mdat" else None
        at += size
    return None
