"""Clips whose every frame says which frame it is, and whose timestamps start where a test
says: the media for "the frame of t is the frame of t" (docs/playback.md, "Frames").

Each frame carries its index as a row of :data:`BITS` black or white blocks across its top
(most significant bit first), large enough to survive JPEG at a quarter of the width:
:func:`frame_number` reads it back from any decoded picture. The clip's timestamps start at
``start_s`` (seconds on the container's own clock): 0 as cameras that restart their clock
in every file write, 1.4 as FFmpeg's MPEG-TS muxer does by default (``max_delay`` of 0.7 s:
its delay doubled), or any large value, as cameras whose clocks never restart do. H.264
by libx264 through PyAV; decoded back with PyAV by :func:`decoded_frames`, independently of
the product.
"""

from __future__ import annotations

import io
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

#: Bits of the frame number drawn on each frame (up to 4,095 frames).
BITS: Final = 12
#: The options of FFmpeg's command line for MPEG-TS: ``-muxdelay 0.7`` (its default), which
#: the muxer doubles into the first timestamp (1.4 s).
FFMPEG_DEFAULT_TS: Final = {"max_delay": "700000"}
#: Muxer settings per container name.
MUXERS: Final[dict[str, tuple[str, dict[str, str]]]] = {
    "ts": ("mpegts", {}),
    "fmp4": (
        "mp4",
        {
            "movflags": "frag_keyframe+empty_moov+default_base_moof+frag_discont",
            "avoid_negative_ts": "disabled",
        },
    ),
    "mp4": ("mp4", {"movflags": "+faststart", "avoid_negative_ts": "disabled"}),
}


def coded_clip(
    container: str,
    *,
    seconds: float,
    start_s: float = 0.0,
    fps: int = 25,
    size: tuple[int, int] = (320, 180),
    keyframe_s: float = 1.0,
    muxer_options: dict[str, str] | None = None,
) -> bytes:
    """An H.264 clip in ``container`` (``ts``, ``fmp4``, ``mp4``) whose frame ``i`` shows
    the number ``i`` and whose first timestamp is ``start_s`` seconds (plus what the muxer
    adds: see :data:`FFMPEG_DEFAULT_TS`)."""
    import av
    import numpy as np

    fmt, options = MUXERS[container]
    width, height = size
    rate = Fraction(1, fps)
    first = round(Fraction(str(start_s)) * fps)  # in frames: exact for 1.4 s at 25 fps
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clip"
        with av.open(
            str(path), "w", format=fmt, options={**options, **(muxer_options or {})}
        ) as out:
            stream: Any = out.add_stream("libx264", rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.codec_context.time_base = rate
            stream.options = {"preset": "ultrafast", "g": str(max(1, round(keyframe_s * fps)))}
            coarse = np.random.default_rng(7).integers(0, 256, (height // 8, width // 8, 3))
            noise = np.kron(coarse, np.ones((8, 8, 1))).astype(np.uint8)
            for index in range(round(seconds * fps)):
                picture = np.roll(noise, index * 3, axis=1)  # every frame differs, and weighs
                _draw_number(picture, index)
                frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
                frame.pts, frame.time_base = first + index, rate
                for packet in stream.encode(frame):
                    out.mux(packet)
            for packet in stream.encode():
                out.mux(packet)
        return path.read_bytes()


def _draw_number(picture: Any, number: int) -> None:
    height, width = picture.shape[:2]
    block = width // BITS
    band = max(8, height // 6)
    for bit in range(BITS):
        on = (number >> (BITS - 1 - bit)) & 1
        picture[:band, bit * block : (bit + 1) * block, :] = 255 if on else 0


def frame_number(rgb: Any) -> int:
    """The number drawn on a decoded picture (an RGB array of any width)."""
    height, width = rgb.shape[:2]
    block = width / BITS
    band = max(8, round(height / 6))
    number = 0
    for bit in range(BITS):
        left, right = round(bit * block + block / 4), round((bit + 1) * block - block / 4)
        level = float(rgb[band // 4 : band * 3 // 4, left:right, :].mean())
        number = number * 2 + (1 if level > 127 else 0)
    return number


def decoded_frames(data: bytes) -> list[tuple[Fraction, int]]:
    """Every frame of ``data`` as (seconds from the stream's first frame, its number), in
    presentation order: decoded here, by PyAV, from the first frame's own timestamp."""
    import av

    container: Any
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        base = Fraction(stream.time_base)
        frames = [
            (f.pts, frame_number(f.to_ndarray(format="rgb24"))) for f in container.decode(stream)
        ]
    frames.sort()
    origin = frames[0][0]
    return [((pts - origin) * base, number) for pts, number in frames]


def first_timestamp_s(data: bytes) -> float:
    """The first frame's timestamp (s) on the container's own clock."""
    import av

    container: Any
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        pts = min(f.pts for f in container.decode(stream))
        return float(pts * Fraction(stream.time_base))
