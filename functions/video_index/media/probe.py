"""What container a video object really is, from its first bytes (docs/playback.md).

HLS needs to know, for every video object, whether it is MPEG-TS (played as is),
fragmented MP4 (played as is, with its init segment named in ``#EXT-X-MAP``) or
progressive MP4 (played through a fragmented rendition). The extension is the
camera's word, not proof, so ingest reads ONE ranged GET of the first
:data:`PROBE_BYTES` (``Range: bytes=0-65535``) and :func:`probe` decides from those
bytes and the object's exact size (which S3 reports). The module is pure — no AWS,
no decoder, no I/O — so ingest, the uploader and the tests share one set of rules:

* **Empty** (size 0 or no bytes) → ``UNKNOWN``: there is nothing to play.
* **MPEG-TS**: the sync byte ``0x47`` at offset 0 and at every 188-byte packet start
  whose packet lies wholly inside the bytes given (at most :data:`PROBE_BYTES` of
  them are looked at, so more bytes never change the answer). Fewer bytes than one
  packet → ``UNKNOWN``: one byte is no evidence. A file cut inside a later packet
  is still MPEG-TS: players skip a partial last packet.
* **ISO BMFF (MP4)**: the top-level boxes are walked from offset 0 (4-byte big-endian
  size, 4-byte type of ASCII letters, digits or spaces; size 1 → a 64-bit size
  follows; size 0 → the box runs to the end of the object). Boxes are skipped by
  their declared size, so the walk may leave the bytes given: only the header of the
  next box must be inside them. The object's size is exact, so a box shorter than
  its header or running past the end means the object is cut or is not MP4 → the
  walk stops, ``UNKNOWN``. The first box that decides must itself be whole:

  * the first ``moof`` (no ``mdat`` before it) → ``FMP4``, ``init_end`` = its offset,
    if a ``moov`` came before it; without one (a bare media segment) → ``UNKNOWN``,
    since nothing initialises a decoder;
  * a top-level ``mdat`` before any ``moof`` → ``MP4_PROGRESSIVE`` (samples described
    by ``moov``, before or after the media);
  * the object ends before either → ``UNKNOWN``: there is no media.

  When the next box header lies beyond the bytes given, nothing decided yet:

  * ``moov`` wholly inside them: ``FMP4`` when it has an ``mvex`` child (movie
    extends: fragments follow), with ``init_end`` = the offset of the unseen box
    (everything before it is init); without ``mvex`` → ``MP4_PROGRESSIVE``;
  * ``moov`` running past them ("huge moov") → ``MP4_PROGRESSIVE``: an fMP4 ``moov``
    holds no sample tables and is a few hundred bytes, while a progressive ``moov``
    grows by several bytes per sample, so a ``moov`` over 64 KiB is progressive;
  * no ``moov`` → ``UNKNOWN``.

Anything else (no box structure, text, random bytes) → ``UNKNOWN``. The walk never
raises and always ends: each step advances by at least one header, and at most
:data:`MAX_BOXES` boxes are read per level.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal

from video_index.core.errors import BadInput

#: The probe reads bytes [0, PROBE_BYTES): one ranged GET, ``Range: bytes=0-65535``.
PROBE_BYTES: Final = 65536
#: MPEG-TS packets are 188 bytes, each starting with the sync byte 0x47.
TS_PACKET: Final = 188
TS_SYNC: Final = 0x47
#: Boxes read per level at most: bounded work on hostile input (a real init has ~10).
MAX_BOXES: Final = 4096

_TYPE_BYTES: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ")


class Container(StrEnum):
    MPEGTS = "mpegts"
    FMP4 = "fmp4"
    """Fragmented MP4: an init (``ftyp`` + ``moov``), then ``moof`` + ``mdat`` fragments."""
    MP4_PROGRESSIVE = "mp4-progressive"
    """Samples described in ``moov``, no ``moof``."""
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class MediaFacts:
    container: Container
    #: fMP4 only: bytes [0, init_end) are the init segment (ftyp + moov and any box before
    #: the first top-level moof); the media is [init_end, size). None otherwise.
    init_end: int | None = None
    #: fMP4 only: the decode time of its first fragment in ms (``tfdt`` over its track's
    #: ``mdhd`` timescale), when the probe window holds the first moof; None otherwise.
    #: A camera's files whose decode times restart (0 in every file) lose a fragment each
    #: in FFmpeg's HLS demuxer, so those are played through renditions (docs/playback.md).
    decode_start_ms: int | None = None

    def restarts(self, start_ms: int) -> bool:
        """Whether this fMP4's decode times are known not to run on the wall clock from
        ``start_ms`` (the file's start, within a second) as every fMP4 the product writes
        does — a camera's own files typically restart at 0. Unknown is False."""
        return self.decode_start_ms is not None and abs(self.decode_start_ms - start_ms) >= 1000


UNKNOWN: Final = MediaFacts(Container.UNKNOWN)
#: Box types an MP4 starts with, to tell a cut MP4 from a file that is not MP4 at all.
_KNOWN: Final = frozenset({b"ftyp", b"styp", b"moov", b"moof", b"mdat", b"free", b"skip", b"wide"})
_PLAYABLE: Final[dict[str, frozenset[Container]]] = {
    "ts": frozenset({Container.MPEGTS}),
    "mp4": frozenset({Container.FMP4, Container.MP4_PROGRESSIVE}),
}


def probe(head: bytes, size: int) -> MediaFacts:
    """The facts of an object of ``size`` bytes whose first min(size, PROBE_BYTES) bytes
    are ``head``. Never raises for any input (see the module docstring for the rules)."""
    ts, bmff = _examine(head, size)
    return ts.facts if ts.facts.container is Container.MPEGTS else bmff.facts


def playable(ext: str, facts: MediaFacts) -> bool:
    """Whether an object with key extension ``ext`` can be played: ``ts`` needs MPEG-TS;
    ``mp4`` needs fragmented or progressive MP4 (progressive is played through a
    fragmented rendition). Any other extension (keys are lower case) is not video."""
    return facts.container in _PLAYABLE.get(ext, frozenset())


def check_container(ext: str, head: bytes, size: int) -> MediaFacts:
    """For the uploader: the facts of a file about to be uploaded as ``.ext``.

    Raises :class:`BadInput` (``"file"``) when the content is not the container its
    extension says, naming what was found, so a camera's mistake is refused before it
    lands in the bucket instead of failing later in a player.
    """
    if ext not in _PLAYABLE:
        raise BadInput("ext", f"{ext!r} is not a video extension (ts or mp4)")
    if size <= 0 or not head:
        raise BadInput("file", "the file is empty")
    ts, bmff = _examine(head, size)
    if ext == "ts" and ts.facts.container is Container.MPEGTS:
        return ts.facts
    if ext == "mp4" and playable(ext, bmff.facts):
        return bmff.facts
    if ext == "ts":
        found = (
            f"it is {_name(bmff.facts)}; name it .mp4"
            if bmff.facts.container is not Container.UNKNOWN
            else f"{ts.why}; {_preview(head)}"
        )
        raise BadInput(
            "file",
            "the file is not MPEG-TS (a .ts file must start with the sync byte 0x47 "
            f"every 188 bytes): {found}",
        )
    found = "it is MPEG-TS; name it .ts" if ts.facts.container is Container.MPEGTS else bmff.why
    raise BadInput("file", f"the file is not ISO BMFF (MP4): {found}")


# --- the rules ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Finding:
    facts: MediaFacts
    why: str = ""  # why not decided, for check_container's message


@dataclass(frozen=True, slots=True)
class _Box:
    offset: int
    type: bytes
    header: int
    end: int


@dataclass(frozen=True, slots=True)
class _Halt:
    #: "end": the parent ends here; "window": the next header is beyond the bytes
    #: given; "malformed": the bytes are not (or no longer) a box structure.
    kind: Literal["end", "window", "malformed"]
    why: str = ""


def _examine(head: bytes, size: int) -> tuple[_Finding, _Finding]:
    """The MPEG-TS finding and the ISO BMFF finding (the latter only when not MPEG-TS)."""
    if size <= 0 or not head:
        empty = _Finding(UNKNOWN, "the file is empty")
        return empty, empty
    head = bytes(head[:size])  # the object cannot hold more than its size
    ts = _ts(head)
    if ts.facts.container is Container.MPEGTS:
        return ts, _Finding(UNKNOWN, "it is MPEG-TS")
    return ts, _bmff(head, size)


def _ts(head: bytes) -> _Finding:
    window = min(len(head), PROBE_BYTES)
    if window < TS_PACKET:
        return _Finding(UNKNOWN, f"it is shorter than one {TS_PACKET}-byte packet")
    for offset in range(0, window - TS_PACKET + 1, TS_PACKET):
        if head[offset] != TS_SYNC:
            return _Finding(UNKNOWN, f"found byte 0x{head[offset]:02x} at offset {offset}")
    return _Finding(MediaFacts(Container.MPEGTS))


def _bmff(head: bytes, size: int) -> _Finding:
    offset, moov = 0, None
    seen: list[str] = []
    for _ in range(MAX_BOXES):
        step = _box_at(head, offset, size)
        if isinstance(step, _Halt):
            return _undecided(head, step, offset, moov, seen)
        if step.type == b"moof":
            if moov is None:
                return _Finding(
                    UNKNOWN,
                    f"a fragment (moof at offset {offset}) with no moov before it: "
                    "nothing initialises a decoder",
                )
            # (only the window's bytes: more bytes never change the answer)
            decode_start = _decode_start_ms(head[:PROBE_BYTES], moov, step)
            return _Finding(MediaFacts(Container.FMP4, offset, decode_start))
        if step.type == b"mdat":
            return _Finding(MediaFacts(Container.MP4_PROGRESSIVE))
        if step.type == b"moov" and moov is None:
            moov = step
        seen.append(step.type.decode("ascii"))
        offset = step.end
    return _Finding(UNKNOWN, f"more than {MAX_BOXES} boxes before any moof or mdat")


def _undecided(
    head: bytes, halt: _Halt, offset: int, moov: _Box | None, seen: list[str]
) -> _Finding:
    """The walk stopped at ``offset`` before any moof or mdat."""
    if halt.kind == "window" and moov is not None:
        if moov.end > len(head) or not _has_child(head, moov, b"mvex"):
            return _Finding(MediaFacts(Container.MP4_PROGRESSIVE))  # huge moov, or no mvex
        return _Finding(MediaFacts(Container.FMP4, init_end=offset))
    if not seen:
        if head[4:8] in _KNOWN and halt.why:
            return _Finding(UNKNOWN, f"{halt.why}: the file is cut or damaged")
        return _Finding(UNKNOWN, f"it has no MP4 boxes (ftyp, moov, mdat …); {_preview(head)}")
    boxes = f"after boxes {', '.join(seen[:8])}{' …' if len(seen) > 8 else ''}"
    if halt.kind == "window":
        return _Finding(UNKNOWN, f"no moov in the first {len(head)} bytes ({boxes})")
    if halt.kind == "end":
        return _Finding(UNKNOWN, f"the file ends {boxes} with no media (moof or mdat)")
    return _Finding(UNKNOWN, f"{halt.why} ({boxes}): the file is cut or damaged")


def _has_child(head: bytes, parent: _Box, kind: bytes) -> bool:
    """Whether ``parent`` (wholly inside ``head``) has a well-formed child box ``kind``."""
    offset = parent.offset + parent.header
    for _ in range(MAX_BOXES):
        step = _box_at(head, offset, parent.end)
        if isinstance(step, _Halt):
            return False
        if step.type == kind:
            return True
        offset = step.end
    return False


def _children(head: bytes, parent: _Box) -> list[_Box]:
    """The well-formed child boxes of ``parent`` that lie wholly inside ``head``."""
    found: list[_Box] = []
    offset = parent.offset + parent.header
    for _ in range(MAX_BOXES):
        step = _box_at(head, offset, min(parent.end, len(head)))
        if isinstance(step, _Halt) or step.end > len(head):
            break
        found.append(step)
        offset = step.end
    return found


def _child(head: bytes, parent: _Box, kind: bytes) -> _Box | None:
    return next((box for box in _children(head, parent) if box.type == kind), None)


def _full_box_field(head: bytes, box: _Box, v0: tuple[int, int], v1: tuple[int, int]) -> int:
    """A field of a full box (version + flags first) at (offset, size) after the version
    and flags, by version; raises struct.error / IndexError when it is not there."""
    at = box.offset + box.header
    offset, size = v1 if head[at] == 1 else v0
    start = at + 4 + offset
    if start + size > box.end:
        raise IndexError(f"{box.type!r} is too short")
    return int.from_bytes(head[start : start + size], "big")


def _decode_start_ms(head: bytes, moov: _Box, moof: _Box) -> int | None:
    """The first fragment's decode time in ms: its first ``traf``'s ``tfdt`` over the
    ``mdhd`` timescale of the ``trak`` whose ``tkhd`` names the same track. None when the
    boxes are not all inside ``head`` or are malformed (the file is still fMP4)."""
    try:
        traf = _child(head, moof, b"traf")
        tfhd = traf and _child(head, traf, b"tfhd")
        tfdt = traf and _child(head, traf, b"tfdt")
        if not (tfhd and tfdt):
            return None
        track = _full_box_field(head, tfhd, (0, 4), (0, 4))
        decode_time = _full_box_field(head, tfdt, (0, 4), (0, 8))
        for trak in (b for b in _children(head, moov) if b.type == b"trak"):
            tkhd = _child(head, trak, b"tkhd")
            mdia = _child(head, trak, b"mdia")
            mdhd = mdia and _child(head, mdia, b"mdhd")
            if tkhd and mdhd and _full_box_field(head, tkhd, (8, 4), (16, 4)) == track:
                timescale = _full_box_field(head, mdhd, (8, 4), (16, 4))
                return decode_time * 1000 // timescale if timescale else None
    except (IndexError, struct.error):
        return None
    return None


def _box_at(head: bytes, offset: int, end: int) -> _Box | _Halt:
    """The box whose header starts at ``offset`` in a parent ending at ``end``."""
    if offset >= end:
        return _Halt("end")
    if offset + 8 > end:
        return _Halt("malformed", f"{end - offset} stray bytes at offset {offset}")
    if offset + 8 > len(head):
        return _Halt("window")
    declared, kind = struct.unpack_from(">I4s", head, offset)
    if not _TYPE_BYTES.issuperset(kind):
        return _Halt("malformed", f"no box type at offset {offset} (bytes {kind!r})")
    name, header = kind.decode("ascii"), 8
    if declared == 1:
        if offset + 16 > end:
            return _Halt("malformed", f"box {name!r} at offset {offset} has a cut 64-bit size")
        if offset + 16 > len(head):
            return _Halt("window")
        (declared,), header = struct.unpack_from(">Q", head, offset + 8), 16
    elif declared == 0:
        declared = end - offset
    if declared < header:
        return _Halt("malformed", f"box {name!r} at offset {offset} declares {declared} bytes")
    if offset + declared > end:
        return _Halt(
            "malformed",
            f"box {name!r} at offset {offset} declares {declared} bytes, "
            f"past the end ({end} bytes)",
        )
    return _Box(offset, kind, header, offset + declared)


def _name(facts: MediaFacts) -> str:
    if facts.container is Container.FMP4:
        return "a fragmented MP4"
    if facts.container is Container.MP4_PROGRESSIVE:
        return "a progressive MP4"
    return str(facts.container)


def _preview(head: bytes) -> str:
    """How the file starts: as text when it is text (a JSON file, an HTML error page)."""
    start = head[:24]
    text = start.decode("utf-8", errors="replace")
    if "\ufffd" not in text and all(c.isprintable() or c in "\r\n\t" for c in text):
        return f"it starts with the text {text!r}"
    return f"it starts with the bytes {start.hex(' ')}"
