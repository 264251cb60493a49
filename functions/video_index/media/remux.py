"""Stream-copy media work: the same packets (the same frames) in another container.

* :func:`fragment` — any MP4 (or other video file) rewritten as fragmented MP4
  (an init of ``ftyp`` + ``moov``, then a ``moof`` + ``mdat`` per keyframe);
* :func:`export_mp4` — camera files of any container (MPEG-TS, fragmented or
  progressive MP4) joined into one progressive MP4 (``faststart``: ``moov`` before
  ``mdat``), each file shifted to start where the previous one ended.

Nothing is decoded or encoded. Two FFmpeg facts shape :func:`export_mp4`:

* H.264/H.265 in MPEG-TS is Annex B (start codes, parameter sets in band); in MP4 it is
  length-prefixed NAL units with the parameter sets in the extradata (``avcC``/``hvcC``,
  first byte 1). FFmpeg's MP4 muxer converts Annex B packets to length-prefixed ones
  only when the track's extradata is Annex B, and writes packets untouched otherwise,
  so one output track must get packets of one form. Every MP4 source therefore goes
  through the ``h264_mp4toannexb``/``hevc_mp4toannexb`` bitstream filter (which also
  puts the parameter sets in band before each keyframe) and the output track gets
  Annex B extradata: the muxer then writes every sample length-prefixed.
* Time bases differ (MPEG-TS 1/90000, MP4 whatever the writer chose), and MPEG-TS
  files rarely start at 0: every timestamp is rescaled to one 90 kHz timeline and
  each source is moved to start at the previous source's end. The muxer wants dts
  strictly increasing: a source whose decoding leads its presentation by more than the
  previous one's (B-frames after a file without) starts that much later (a gap of at
  most its reorder delay).

PyAV is imported inside the functions, never at import time.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from video_index.core.errors import BadInput

FRAGMENTED_MOVFLAGS: Final = "frag_keyframe+empty_moov+default_base_moof"
FASTSTART_MOVFLAGS: Final = "+faststart"

#: The timeline of an export: the video clock of MPEG-TS, exact for the usual frame rates.
TIMELINE: Final = Fraction(1, 90_000)

#: Codecs whose MP4 form (length-prefixed, extradata starting with 1) has an Annex B twin.
_TO_ANNEX_B: Final[dict[str, str]] = {"h264": "h264_mp4toannexb", "hevc": "hevc_mp4toannexb"}


def fragment(progressive: bytes, *, decode_start_ms: int | None = None) -> bytes:
    """A progressive (or any) MP4 rewritten as fragmented MP4 by stream copy: same packets, same
    frames, an init (ftyp+moov) then moof+mdat fragments (a fragment per keyframe). Raises
    BadInput("file", reason) when the bytes are not a readable video file.

    With ``decode_start_ms`` (the file's wall-clock start, ms since the Unix epoch) the
    fragments' decode times (``tfdt``, 64-bit) continue from it instead of from 0, so the
    files of one camera carry increasing decode times: FFmpeg's HLS demuxer feeds every
    file of a playlist to one MP4 demuxer, which drops a fragment whose decode time goes
    back (docs/playback.md); hls.js and Safari do not care either way."""
    import av

    movflags, options = FRAGMENTED_MOVFLAGS, {}
    if decode_start_ms is not None:
        # frag_discont: keep the packets' own decode times (not rebased to 0);
        # avoid_negative_ts=disabled: and do not shift them either.
        movflags, options = f"{movflags}+frag_discont", {"avoid_negative_ts": "disabled"}
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "fragmented.mp4"
        with _opened(progressive, "file") as source:
            try:
                output: Any = av.open(
                    str(target), mode="w", format="mp4", options={"movflags": movflags, **options}
                )
                with output:
                    copies = _copy_streams(source, output)
                    shifts: dict[int, int] = {}
                    for packet in source.demux(*[source.streams[i] for i in copies]):
                        if packet.pts is None or packet.dts is None:
                            continue  # a demuxer's flush packet: no data
                        if decode_start_ms is not None:
                            shift = shifts.setdefault(
                                packet.stream_index,
                                int(Fraction(decode_start_ms, 1000) / packet.time_base)
                                - packet.dts,
                            )
                            packet.pts += shift
                            packet.dts += shift
                        packet.stream = copies[packet.stream_index]
                        output.mux(packet)
            except av.FFmpegError as error:
                raise BadInput("file", f"cannot be remuxed: {error}") from error
        return target.read_bytes()


def _copy_streams(source: Any, output: Any) -> dict[int, Any]:
    """Output streams for the source's video and audio (audio MP4 cannot carry is left out)."""
    copies: dict[int, Any] = {}
    for stream in source.streams:
        if stream.type == "video":
            copies[stream.index] = output.add_stream_from_template(stream)
        elif stream.type == "audio":
            try:
                copies[stream.index] = output.add_stream_from_template(stream)
            except ValueError:
                continue  # "'mp4' format does not support '…' codec"
    return copies


@dataclass(frozen=True, slots=True)
class ExportResult:
    files: int  # sources used
    packets: int  # video packets written
    duration_ms: int  # duration of the output timeline
    bytes: int  # size of the output file
    #: Where each source starts in the output, ms of its timeline (an export's manifest).
    starts_ms: tuple[int, ...] = ()


def export_mp4(
    sources: Sequence[bytes | Path],
    destination: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ExportResult:
    """One MP4 (faststart: moov before mdat) of the sources' video, in the given order, by stream
    copy. Each source's timestamps start anew (camera files), so each is shifted to start where the
    previous one ended (its last packet's pts + duration): the output plays continuously and gaps
    between the files in wall-clock time are skipped. Sources may mix containers (MPEG-TS,
    fragmented and progressive MP4) as long as the video codec parameters agree (codec, width,
    height); otherwise BadInput naming the source index and what differs. No sources → BadInput.
    A source that is not readable video → BadInput naming its index."""
    if not sources:
        raise BadInput("sources", "at least one source is needed")
    destination = Path(destination)
    # Written beside the destination and renamed at the end: no half-written file under its
    # name. faststart rewrites the file in a second pass, by name: a real file, not a buffer.
    partial = destination.with_name(f".{destination.name}.partial")
    try:
        writer = _Writer(partial)
        starts: list[int] = []
        try:
            for index, source in enumerate(sources):
                starts.append(round(writer.end * TIMELINE * 1000))
                writer.append(source, index)
                if progress is not None:
                    progress(index + 1, len(sources))
        finally:
            writer.close()
        os.replace(partial, destination)
    finally:
        partial.unlink(missing_ok=True)
    return ExportResult(
        files=len(sources),
        packets=writer.packets,
        duration_ms=round(writer.end * TIMELINE * 1000),
        bytes=destination.stat().st_size,
        starts_ms=tuple(starts),
    )


class _Writer:
    """The output of an export: one video track on the 90 kHz timeline, fed source by source."""

    def __init__(self, path: Path) -> None:
        import av

        self._av: Any = av
        self._output: Any = av.open(
            str(path), mode="w", format="mp4", options={"movflags": FASTSTART_MOVFLAGS}
        )
        self._track: Any = None
        self._first: tuple[str, int, int] | None = None
        self._failed = False
        self._shift: int | None = None  # of the current source, set by its first packet
        self._last_dts: int | None = None
        self.packets = 0
        self.end = 0  # where the next source starts, in TIMELINE units

    def append(self, source: bytes | Path, index: int) -> None:
        parameter = f"sources[{index}]"
        try:
            with _opened(source, parameter) as container:
                stream = container.streams.video[0]
                self._check(stream, parameter)
                annex_b = self._annex_b_filter(stream, first=index == 0)
                written, self._shift = self.packets, None
                for packet in container.demux(stream):
                    if packet.pts is None:
                        continue  # a demuxer's flush packet: no data
                    for out in annex_b.filter(packet) if annex_b else (packet,):
                        self._write(out, stream)
                for out in annex_b.filter(None) if annex_b else ():
                    self._write(out, stream)  # what the filter still holds
                if self.packets == written:
                    raise BadInput(parameter, "has no video packets")
        except self._av.FFmpegError as error:
            self._failed = True
            raise BadInput(parameter, f"cannot be remuxed: {error}") from error
        except Exception:
            self._failed = True
            raise

    def close(self) -> None:
        """Finish the file (the trailer; faststart's second pass); after a failure, just let go."""
        try:
            self._output.close()
        except self._av.FFmpegError:
            if not self._failed:
                raise

    def _check(self, stream: Any, parameter: str) -> None:
        context = stream.codec_context
        facts = (context.name, context.width, context.height)
        if self._first is None:
            self._first = facts
            self._track = self._output.add_stream_from_template(stream)
            self._track.time_base = TIMELINE
            return
        differences = [
            f"{name} {mine} (source 0: {theirs})"
            for name, mine, theirs in zip(
                ("codec", "width", "height"), facts, self._first, strict=True
            )
            if mine != theirs
        ]
        if differences:
            raise BadInput(parameter, "video differs from source 0: " + ", ".join(differences))

    def _annex_b_filter(self, stream: Any, *, first: bool) -> Any:
        """The bitstream filter to Annex B for an MP4-form source (None for an Annex B one);
        for the first source it also gives the output track its (Annex B) extradata."""
        name = _TO_ANNEX_B.get(stream.codec_context.name)
        extradata = stream.codec_context.extradata
        if name is None or not extradata or extradata[0] != 1:
            return None
        return self._av.bitstream.BitStreamFilterContext(
            name, stream, self._track if first else None
        )

    def _write(self, packet: Any, stream: Any) -> None:
        scale = Fraction(packet.time_base or stream.time_base) / TIMELINE
        pts = round(packet.pts * scale)
        dts = pts if packet.dts is None else round(packet.dts * scale)
        duration = round((packet.duration or 0) * scale) or _frame_ticks(stream)
        if self._shift is None:
            # A camera file starts anew: its start goes where the previous source ended
            # (and its first dts after the last one written, should its decoding lead more).
            start = pts if stream.start_time is None else round(stream.start_time * scale)
            self._shift = self.end - min(start, pts)
            if self._last_dts is not None and dts + self._shift <= self._last_dts:
                self._shift = self._last_dts + 1 - dts
        pts, dts = pts + self._shift, dts + self._shift
        if self._last_dts is not None and dts <= self._last_dts:
            dts = self._last_dts + 1  # the muxer wants dts strictly increasing
        pts = max(pts, dts)
        packet.time_base = TIMELINE
        packet.pts, packet.dts, packet.duration = pts, dts, duration
        packet.stream = self._track
        self._output.mux(packet)
        self._last_dts = dts
        self.end = max(self.end, pts + duration)
        self.packets += 1


def _frame_ticks(stream: Any) -> int:
    """One frame on the timeline, for packets without a duration."""
    rate = Fraction(stream.average_rate or stream.guessed_rate or 25)
    return max(1, round(1 / (rate * TIMELINE)))


@contextmanager
def _opened(source: bytes | Path, parameter: str) -> Iterator[Any]:
    """The source opened for reading, with a video stream; BadInput naming ``parameter``
    when it is not a readable video file."""
    import av

    try:
        container: Any = av.open(
            str(source) if isinstance(source, Path) else io.BytesIO(source), mode="r"
        )
    except (av.FFmpegError, OSError) as error:
        raise BadInput(parameter, f"is not a readable video file: {error}") from error
    with container:
        if not container.streams.video:
            raise BadInput(parameter, "has no video stream")
        yield container
