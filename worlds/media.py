"""Real media for tests that need valid video bytes but are about something else.

Clips are H.264 made by :mod:`video_index.media.synthetic` (PyAV), once per process.
:func:`fmp4_with` makes any number of *distinct* valid fragmented MP4 files cheaply: one
real clip followed by a top-level ``free`` box (ISO/IEC 14496-12 §8.1.2: contents
ignored by readers) carrying the caller's tag, optionally padded to an exact size —
what upload mechanics tests need (distinct content, multipart sizes) without encoding
megabytes of video.
"""

from __future__ import annotations

import functools
import struct

from video_index.media.synthetic import ContainerName, synthetic_clip

_BOX_HEADER = 8
#: An MPEG-TS null packet (PID 0x1FFF, ISO/IEC 13818-1 §2.4.3.3): its payload is ignored.
_TS_NULL_HEADER = bytes((0x47, 0x1F, 0xFF, 0x10))
_TS_PAYLOAD = 184


@functools.cache
def clip(container: ContainerName, seconds: float = 1.0, label: str = "") -> bytes:
    """A small real H.264 clip in ``container``; cached, so the same call is free."""
    return synthetic_clip(seconds=seconds, container=container, label=label)


def fmp4_with(tag: bytes, size: int | None = None) -> bytes:
    """A valid fragmented MP4 whose bytes depend on ``tag``; exactly ``size`` bytes if given."""
    base = clip("fmp4")
    payload = tag
    if size is not None:
        room = size - len(base) - _BOX_HEADER
        if room < len(tag):
            raise ValueError(f"size {size} leaves no room for the clip and the tag")
        filler = tag or b"\0"
        payload = (filler * (room // len(filler) + 1))[:room]
    return base + struct.pack(">I4s", _BOX_HEADER + len(payload), b"free") + payload


def ts_with(tag: bytes) -> bytes:
    """A valid MPEG-TS stream whose bytes depend on ``tag``: the clip, then null packets."""
    packets = [tag[i : i + _TS_PAYLOAD] for i in range(0, len(tag), _TS_PAYLOAD)] or [b""]
    return clip("ts") + b"".join(_TS_NULL_HEADER + p.ljust(_TS_PAYLOAD, b"\xff") for p in packets)


def video_with(container: ContainerName, tag: bytes) -> bytes:
    """A distinct valid video in ``container`` ("ts" or "fmp4")."""
    if container == "ts":
        return ts_with(tag)
    if container == "fmp4":
        return fmp4_with(tag)
    raise ValueError(f"no cheap distinct variant of {container!r}")
