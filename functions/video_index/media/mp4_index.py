"""Where each moment of a progressive MP4 lies in its bytes, from its sample table alone.

An export is one progressive MP4 (``moov`` first, then ``mdat``) with one video track.
Its manifest (:mod:`.manifest`) hashes the file in **fragments**: the *header* (every byte
before the first sample: ``ftyp``, ``moov``, the ``mdat`` box header), then one fragment per
keyframe group — the bytes from a keyframe's first byte to the next keyframe's (the last
one to the end of the file) — each with the presentation times it shows. The fragments
tile the file, so any changed byte falls in exactly one, and a verifier with no media
library names the moment from the manifest alone.

Read here, with no media library: ``mdhd`` (timescale), ``elst`` (the first edit's media
time, subtracted from every presentation time), ``stts``, ``ctts``, ``stss``, ``stsz``,
``stsc``, ``stco``/``co64`` of the first video track (``hdlr`` ``vide``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from video_index.core.errors import BadInput

_CONTAINERS: Final = frozenset({b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts"})


@dataclass(frozen=True, slots=True)
class Fragment:
    """Bytes ``[start, end)`` of the file; ``from_ms``/``to_ms``: the clip time they show,
    ms from its start (None for the header)."""

    start: int
    end: int
    from_ms: int | None
    to_ms: int | None


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """``(type, payload start, box end)`` of the boxes in ``data[start:end]``."""
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, at)
        header = 8
        if size == 1:
            size = struct.unpack_from(">Q", data, at + 8)[0]
            header = 16
        elif size == 0:
            size = end - at
        if size < header or at + size > end:
            raise BadInput("clip", f"a malformed {kind!r} box at byte {at}")
        yield kind, at + header, at + size
        at += size


def _child(data: bytes, start: int, end: int, kind: bytes) -> tuple[int, int] | None:
    return next(((s, e) for k, s, e in _boxes(data, start, end) if k == kind), None)


def _table(data: bytes, start: int, fmt: str) -> list[tuple[int, ...]]:
    """A full box's entries: version/flags, a count, then ``count`` entries of ``fmt``."""
    (count,) = struct.unpack_from(">I", data, start + 4)
    size = struct.calcsize(fmt)
    return [struct.unpack_from(fmt, data, start + 8 + i * size) for i in range(count)]


def _video_trak(data: bytes, moov: tuple[int, int]) -> tuple[int, int]:
    for kind, start, end in _boxes(data, *moov):
        if kind != b"trak":
            continue
        mdia = _child(data, start, end, b"mdia")
        hdlr = mdia and _child(data, *mdia, b"hdlr")
        if hdlr and data[hdlr[0] + 8 : hdlr[0] + 12] == b"vide":
            return start, end
    raise BadInput("clip", "no video track")


def _edit_shift(data: bytes, trak: tuple[int, int]) -> int:
    edts = _child(data, *trak, b"edts")
    elst = edts and _child(data, *edts, b"elst")
    if not elst:
        return 0
    version = data[elst[0]]
    fmt = ">Qq" if version == 1 else ">Ii"
    for entry in _table(data, elst[0], fmt):
        if entry[1] != -1:
            return int(entry[1])
    return 0


def _offsets(data: bytes, stbl: tuple[int, int], sizes: list[int]) -> list[int]:
    """Each sample's file offset (``stsc`` chunks of ``stco``/``co64``)."""
    co = _child(data, *stbl, b"stco")
    chunks = [c[0] for c in _table(data, co[0], ">I")] if co else []
    if co is None:
        co64 = _child(data, *stbl, b"co64")
        if co64 is None:
            raise BadInput("clip", "no chunk offsets")
        chunks = [c[0] for c in _table(data, co64[0], ">Q")]
    stsc = _child(data, *stbl, b"stsc")
    runs = _table(data, stsc[0], ">III") if stsc else []
    offsets: list[int] = []
    sample = 0
    for index, (first, per_chunk, _) in enumerate(runs):
        last = runs[index + 1][0] - 1 if index + 1 < len(runs) else len(chunks)
        for chunk in range(first, last + 1):
            at = chunks[chunk - 1]
            for _ in range(per_chunk):
                if sample == len(sizes):
                    return offsets
                offsets.append(at)
                at += sizes[sample]
                sample += 1
    return offsets


def _sizes(data: bytes, stbl: tuple[int, int]) -> list[int]:
    stsz = _child(data, *stbl, b"stsz")
    if stsz is None:
        raise BadInput("clip", "no sample sizes")
    uniform, count = struct.unpack_from(">II", data, stsz[0] + 4)
    if uniform:
        return [uniform] * count
    return list(struct.unpack_from(f">{count}I", data, stsz[0] + 12))


def moov_end(handle: BinaryIO) -> int:
    """Where the ``moov`` box of an open MP4 ends (its top-level boxes' headers read only):
    the bytes :func:`fragments` needs, without reading the media."""
    at = 0
    while True:
        handle.seek(at)
        head = handle.read(16)
        if len(head) < 8:
            raise BadInput("clip", "no moov box: not a progressive MP4")
        size, kind = struct.unpack_from(">I4s", head)
        size = int(size)
        if size == 1 and len(head) == 16:
            size = int(struct.unpack_from(">Q", head, 8)[0])
        if size < 8:
            raise BadInput("clip", f"a malformed {kind!r} box at byte {at}")
        if kind == b"moov":
            return at + size
        at += size


def fragments(data: bytes, size: int | None = None) -> tuple[list[Fragment], int]:
    """The header and the keyframe groups of a progressive MP4 whose first bytes (through
    its ``moov``) are ``data`` and whose size is ``size`` (default: ``data`` is the whole
    file), tiling the file; and the video track's timescale. Raises BadInput("clip", …) for
    anything else."""
    moov = _child(data, 0, len(data), b"moov")
    if moov is None:
        raise BadInput("clip", "no moov box: not a progressive MP4")
    trak = _video_trak(data, moov)
    mdia = _child(data, *trak, b"mdia")
    assert mdia is not None
    mdhd = _child(data, *mdia, b"mdhd")
    minf = _child(data, *mdia, b"minf")
    stbl = minf and _child(data, *minf, b"stbl")
    if mdhd is None or stbl is None:
        raise BadInput("clip", "no sample table")
    version = data[mdhd[0]]
    timescale = struct.unpack_from(">I", data, mdhd[0] + (20 if version == 1 else 12))[0]
    sizes = _sizes(data, stbl)
    offsets = _offsets(data, stbl, sizes)
    stts = _child(data, *stbl, b"stts")
    durations = [d for n, d in (_table(data, stts[0], ">II") if stts else []) for _ in range(n)]
    ctts = _child(data, *stbl, b"ctts")
    shifts = [o for n, o in (_table(data, ctts[0], ">Ii") if ctts else []) for _ in range(n)]
    stss = _child(data, *stbl, b"stss")
    keys = [k[0] - 1 for k in _table(data, stss[0], ">I")] if stss else list(range(len(sizes)))
    shift = _edit_shift(data, trak)
    times, dts = [], 0
    for index, duration in enumerate(durations[: len(sizes)]):
        pts = dts + (shifts[index] if index < len(shifts) else 0) - shift
        times.append((pts, pts + duration))
        dts += duration
    return _tiles(keys, offsets, times, timescale, len(data) if size is None else size), timescale


def _tiles(
    keys: list[int], offsets: list[int], times: list[tuple[int, int]], scale: int, size: int
) -> list[Fragment]:
    if not offsets or not keys:
        raise BadInput("clip", "no samples")
    keys = [k for k in keys if k < len(offsets)]
    out = [Fragment(0, offsets[keys[0]], None, None)]
    for number, first in enumerate(keys):
        last = keys[number + 1] if number + 1 < len(keys) else len(offsets)
        end = offsets[last] if last < len(offsets) else size
        group = times[first:last]
        out.append(
            Fragment(
                offsets[first],
                end,
                min(t[0] for t in group) * 1000 // scale if group else None,
                -(-max(t[1] for t in group) * 1000 // scale) if group else None,
            )
        )
    return out
