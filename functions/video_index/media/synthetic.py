"""Real, playable H.264 made on the spot: the demo's cameras and the tests' media.

A moving test pattern (colour bars sliding by one step per frame, so every frame
differs) with a label burned in (a camera name and the wall-clock time of each
frame, in a small built-in bitmap font, so no font library is needed), encoded
with libx264 through PyAV in any of the containers cameras upload:

* ``ts`` — MPEG-TS;
* ``fmp4`` — fragmented MP4 (``frag_keyframe+empty_moov+default_base_moof``: an init
  of ``ftyp`` + ``moov``, then ``moof`` + ``mdat`` per fragment);
* ``mp4`` — progressive MP4 with ``faststart`` (samples described in ``moov``);
* ``mp4-index-last`` — progressive MP4 as a camera writes it while recording: ``mdat``
  first, its index (``moov``) after it.

Each file's timestamps start at 0, as cameras cut them. PyAV and numpy are
imported when a clip is made, never at import time.
"""

from __future__ import annotations

import io
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal

ContainerName = Literal["ts", "fmp4", "mp4", "mp4-index-last"]

#: What ``av.open`` needs per container: the format and the muxer options.
MUXERS: Final[dict[str, tuple[str, dict[str, str]]]] = {
    "ts": ("mpegts", {}),
    "fmp4": ("mp4", {"movflags": "frag_keyframe+empty_moov+default_base_moof"}),
    "mp4": ("mp4", {"movflags": "+faststart"}),
    "mp4-index-last": ("mp4", {}),
}

# A 3x5 bitmap font: each glyph is five rows of three bits.
_GLYPHS: Final[dict[str, tuple[int, int, int, int, int]]] = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 1, 1, 1),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7), ":": (0, 2, 0, 2, 0), "-": (0, 0, 7, 0, 0),
    ".": (0, 0, 0, 0, 2), " ": (0, 0, 0, 0, 0), "A": (7, 5, 7, 5, 5), "B": (6, 5, 6, 5, 6),
    "C": (7, 4, 4, 4, 7), "D": (6, 5, 5, 5, 6), "E": (7, 4, 6, 4, 7), "F": (7, 4, 6, 4, 4),
    "G": (7, 4, 5, 5, 7), "H": (5, 5, 7, 5, 5), "I": (7, 2, 2, 2, 7), "J": (1, 1, 1, 5, 7),
    "K": (5, 5, 6, 5, 5), "L": (4, 4, 4, 4, 7), "M": (5, 7, 7, 5, 5), "N": (6, 5, 5, 5, 5),
    "O": (7, 5, 5, 5, 7), "P": (7, 5, 7, 4, 4), "Q": (7, 5, 5, 7, 1), "R": (7, 5, 6, 5, 5),
    "S": (7, 4, 7, 1, 7), "T": (7, 2, 2, 2, 2), "U": (5, 5, 5, 5, 7), "V": (5, 5, 5, 5, 2),
    "W": (5, 5, 7, 7, 5), "X": (5, 5, 2, 5, 5), "Y": (5, 5, 2, 2, 2), "Z": (7, 1, 2, 4, 7),
}  # fmt: skip


def synthetic_clip(
    *,
    seconds: float,
    container: ContainerName,
    fps: int = 25,
    size: tuple[int, int] = (160, 96),
    label: str = "",
    start: datetime | None = None,
    keyframe_seconds: float = 1.0,
) -> bytes:
    """An H.264 clip of ``seconds`` at ``fps`` (timestamps from 0) in ``container``.

    With ``start``, each frame also shows its own wall-clock time (UTC) under ``label``.
    """
    width, height = size
    if width % 2 or height % 2:
        raise ValueError("width and height must be even (yuv420p)")
    fmt, options = MUXERS[container]
    frames = round(seconds * fps)
    # faststart rewrites the file in a second pass, by name: a real file, not a buffer.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"clip.{fmt}"
        _encode(str(path), fmt, options, frames, fps, size, label, start, keyframe_seconds)
        return path.read_bytes()


def _encode(
    path: str,
    fmt: str,
    options: dict[str, str],
    frames: int,
    fps: int,
    size: tuple[int, int],
    label: str,
    start: datetime | None,
    keyframe_seconds: float,
) -> None:
    import av
    import numpy as np

    width, height = size
    with av.open(path, mode="w", format=fmt, options=options) as output:
        stream: Any = output.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast", "g": str(max(1, round(keyframe_seconds * fps)))}
        bars = np.array(
            [[192, 192, 192], [192, 192, 0], [0, 192, 192], [0, 192, 0], [192, 0, 192],
             [192, 0, 0], [0, 0, 192], [16, 16, 16]],
            dtype=np.uint8,
        )  # fmt: skip
        columns = np.arange(width)
        for index in range(frames):
            shift = index * 2
            image = bars[((columns + shift) * len(bars) // width) % len(bars)]
            picture = np.repeat(image[np.newaxis, :, :], height, axis=0).copy()
            lines = [label.upper()] if label else []
            if start is not None:
                moment = start + timedelta(seconds=index / fps)
                lines.append(f"{moment.astimezone(UTC):%H:%M:%S}.{moment.microsecond // 100000}")
            _burn(picture, lines)
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            for packet in stream.encode(frame):
                output.mux(packet)
        for packet in stream.encode():
            output.mux(packet)


def _burn(picture: Any, lines: list[str], scale: int = 2) -> None:
    """Draw ``lines`` in white on a black band at the top left of ``picture`` (in place)."""
    if not lines:
        return
    height, width = picture.shape[:2]
    band = min(height, (len(lines) * 6 + 1) * scale)
    picture[:band, :, :] = 0
    for row, text in enumerate(lines):
        top = (row * 6 + 1) * scale
        for position, char in enumerate(text):
            glyph = _GLYPHS.get(char, _GLYPHS[" "])
            left = (position * 4 + 1) * scale
            for y, bits in enumerate(glyph):
                for x in range(3):
                    if bits & (4 >> x):
                        y0, x0 = top + y * scale, left + x * scale
                        if y0 + scale <= height and x0 + scale <= width:
                            picture[y0 : y0 + scale, x0 : x0 + scale, :] = 255


def count_frames(data: bytes, container_format: str | None = None) -> int:
    """Frames a decoder gets out of ``data`` (every video frame, decoded)."""
    import av

    source: Any = av.open(io.BytesIO(data), format=container_format)
    with source:
        return sum(1 for _ in source.decode(video=0))


def epoch() -> datetime:
    """A fixed start for reproducible clips."""
    return datetime(2026, 11, 30, 12, tzinfo=UTC)
