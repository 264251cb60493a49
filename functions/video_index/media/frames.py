"""Pictures of moments (docs/playback.md, "Frames"): the JPEG of the frame at, or just
before, an instant of a camera's video.

The picture comes from the one file whose span covers the instant (its key: start and
duration), found by listing the two hour folders a covering key can lie in (a video file
lasts at most an hour): a moment no file covers has no picture, and none is borrowed from
the file before or after. Only the bytes the picture needs are read (:mod:`.ranged`: one
ranged GET from the file's start to a little past the instant's estimated position; a
second only when that was not enough), the decoder seeks to the keyframe before the
instant and decodes up to the last frame whose time is not after it.

Pictures are derived data, like renditions: stored under ``renditions/<source key>/
frames/`` (where cameras cannot write, never indexed, removed with the source), each
with the ETag of the source it was made from; one whose source changed since is made
again. A key's file never changes content (its id is a hash of it), so the HTTP answer
may be kept by the browser for long.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import IO, Any, Final

from video_index.aws.objects import ObjectStore
from video_index.core.contract import RENDITIONS_PREFIX
from video_index.core.errors import Conflict, NotFound
from video_index.core.keys import InvalidKeyError, SegmentKey, hour_prefix, parse_key
from video_index.core.timeunits import to_epoch_ms
from video_index.media.ranged import extend, open_for
from video_index.media.renditions import SOURCE_ETAG_METADATA

MIN_WIDTH: Final = 64
MAX_WIDTH: Final = 1920
#: Sources larger than this are not decoded on demand (the media function's memory).
MAX_FRAME_SOURCE_BYTES: Final = 256 * 1024 * 1024
#: User metadata of a stored picture: the time of the frame it shows (ms since the epoch).
FRAME_MS_METADATA: Final = "frame-ms"
JPEG_QUALITY_SCALE: Final = 4  # FFmpeg's mjpeg qscale: 2 (best) .. 31; 4 is near-lossless


@dataclass(frozen=True, slots=True)
class Picture:
    jpeg: bytes
    #: The time of the frame shown (ms since the epoch): at or before the instant asked for.
    frame_ms: int
    source: SegmentKey
    #: Whether the picture was made by this request (False: read from the store).
    made: bool
    #: Bytes of the video file read to make it (0 when read from the store).
    bytes_read: int = 0


#: Decodes one file's frame: (the file as far as read, ms since the file's start, width,
#: whether that is the whole file) -> (JPEG, the frame's ms since the file's start), or
#: None when the bytes read end before the first frame after the moment.
Decoder = Callable[[io.RawIOBase | IO[bytes], int, int, bool], tuple[bytes, int] | None]


def frame_key(source_key: str, offset_ms: int, width: int) -> str:
    """Where the picture of ``offset_ms`` into the file at ``source_key`` is stored."""
    return f"{RENDITIONS_PREFIX}{source_key}/frames/{offset_ms:010d}_w{width}.jpg"


class Frames:
    """Finds, makes (once) and serves pictures of the moments of one bucket's video."""

    def __init__(self, objects: ObjectStore, decode: Decoder | None = None) -> None:
        self._objects = objects
        self._decode: Decoder = decode or decode_frame

    def covering(self, device: str, at_ms: int) -> tuple[SegmentKey, str, int]:
        """The video file covering ``at_ms`` as (segment, ETag, size); NotFound when none
        does. Of overlapping files, the one that started last."""
        moment = datetime.fromtimestamp(at_ms / 1000, UTC)
        best: tuple[SegmentKey, str, int] | None = None
        for hour in (moment - timedelta(hours=1), moment):
            for listed in self._objects.list(hour_prefix("video", device, hour)):
                try:
                    segment = parse_key(listed.key)
                except InvalidKeyError:
                    continue  # not a video file of the contract: never shown
                start_ms = to_epoch_ms(segment.start)
                if start_ms <= at_ms < start_ms + segment.duration_ms and (
                    best is None or segment.start >= best[0].start
                ):
                    best = (segment, listed.etag, listed.size)
        if best is None:
            raise NotFound("t", f"device {device!r} has no video at this moment")
        return best

    def picture(self, device: str, at_ms: int, width: int) -> Picture:
        """The picture of ``at_ms`` at ``width`` pixels: stored, or made and stored now."""
        segment, etag, size = self.covering(device, at_ms)
        offset_ms = at_ms - to_epoch_ms(segment.start)
        key = frame_key(segment.key, offset_ms, width)
        metadata = self._objects.metadata(key)
        if metadata is not None and metadata.get(SOURCE_ETAG_METADATA) == etag:
            stored = self._objects.get_optional_bytes(key)
            if stored is not None and FRAME_MS_METADATA in metadata:
                return Picture(stored, int(metadata[FRAME_MS_METADATA]), segment, made=False)
        if size > MAX_FRAME_SOURCE_BYTES:
            raise Conflict(
                f"{segment.key} is {size} bytes, more than the {MAX_FRAME_SOURCE_BYTES} bytes "
                "a picture is made of on demand"
            )
        source = open_for(
            lambda start, end: self._objects.get_bytes(segment.key, (start, end - 1)),
            size,
            segment.duration_ms,
            offset_ms,
            mp4=segment.ext == "mp4",
        )
        found = self._decode(source, offset_ms, width, source.whole())
        if found is None:  # the first read ended too soon: the rest of the file, once
            extend(source)
            found = self._decode(source, offset_ms, width, True)
        if found is None:
            raise Conflict(f"{segment.key} cannot be decoded up to this moment")
        jpeg, frame_offset_ms = found
        frame_ms = to_epoch_ms(segment.start) + frame_offset_ms
        self._objects.put_bytes(
            key,
            jpeg,
            "image/jpeg",
            {SOURCE_ETAG_METADATA: etag, FRAME_MS_METADATA: str(frame_ms)},
        )
        return Picture(jpeg, frame_ms, segment, made=True, bytes_read=source.bytes_read)


def decode_frame(
    source: io.RawIOBase | IO[bytes], offset_ms: int, width: int, whole: bool = True
) -> tuple[bytes, int] | None:
    """The JPEG (``width`` wide, aspect kept) of the last frame not after ``offset_ms``
    into the file ``source``, and that frame's own offset (ms) from the file's first frame.

    Seeks to the keyframe before the moment and decodes forward from there: the frames
    between are decoded (a P-frame needs them), none after the moment. When ``source`` is
    not the ``whole`` file, a frame counts only once the frame after it was decoded (the
    last bytes read may cut a frame short): None when the bytes end before that."""
    import av

    source.seek(0)
    try:
        container: Any
        with av.open(source) as container:
            stream = container.streams.video[0]
            time_base = Fraction(stream.time_base or Fraction(1, 90_000))
            origin = stream.start_time or 0
            target = origin + int(Fraction(offset_ms, 1000) / time_base)
            container.seek(target, stream=stream, backward=True, any_frame=False)
            found, passed = _last_frame_until(container, stream, target)
            if found is None:  # the seek overshot (a demuxer without an index): from the top
                container.seek(origin, stream=stream, backward=True, any_frame=False)
                found, passed = _last_frame_until(container, stream, target)
    except av.FFmpegError as error:
        if not whole:
            return None  # (a cut packet): read the rest
        raise Conflict(f"the video file cannot be decoded: {error}") from error
    if not whole and not passed:
        return None
    if found is None:
        raise NotFound("t", "the file has no frame at or before this moment")
    frame_offset_ms = int((found.pts - origin) * time_base * 1000)
    return _jpeg(found, width), frame_offset_ms


def _last_frame_until(container: Any, stream: Any, target: int) -> tuple[Any, bool]:
    """The last frame not after ``target``, and whether a frame after it was decoded."""
    best = None
    for frame in container.decode(stream):
        if frame.pts is None:
            continue
        if frame.pts > target:
            return best, True
        best = frame
    return best, False


def _jpeg(frame: Any, width: int) -> bytes:
    import av

    height = max(2, round(frame.height * width / frame.width / 2) * 2)
    scaled = frame.reformat(width=width, height=height, format="yuvj420p")
    encoder: Any = av.CodecContext.create("mjpeg", "w")
    encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuvj420p"
    encoder.time_base = Fraction(1, 25)
    encoder.options = {"qscale": str(JPEG_QUALITY_SCALE)}
    scaled.pts = 0
    return b"".join(bytes(packet) for packet in [*encoder.encode(scaled), *encoder.encode(None)])
