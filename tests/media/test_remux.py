"""Stream-copy media work (video_index.media.remux): fragmenting an MP4, exporting camera files.

The expectations come from the sources themselves, read with PyAV here: frame counts
(``count_frames``), packet sizes, decoded pictures. A stream copy keeps every frame
bit for bit, so the pictures decoded from the output must equal the pictures decoded
from the sources, in order. The MP4 structure is checked by walking its boxes.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from video_index.core.errors import BadInput
from video_index.media.remux import FRAGMENTED_MOVFLAGS, ExportResult, export_mp4, fragment
from video_index.media.synthetic import ContainerName, count_frames, synthetic_clip

FPS = 25
FRAME = 1 / FPS
SIZE = (64, 48)

# --- independent readers of the media --------------------------------------------


def boxes(data: bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[bytes, int, int]]:
    """(type, payload start, box end) of the ISO BMFF boxes in data[start:end]."""
    end = len(data) if end is None else end
    offset = start
    while offset + 8 <= end:
        size, kind = int.from_bytes(data[offset : offset + 4], "big"), data[offset + 4 : offset + 8]
        header = 8
        if size == 1:
            size, header = int.from_bytes(data[offset + 8 : offset + 16], "big"), 16
        elif size == 0:
            size = end - offset
        assert size >= header, f"box {kind!r} at {offset} has size {size}"
        yield kind, offset + header, offset + size
        offset += size
    assert offset == end, "boxes do not cover the file exactly"


def top_level(data: bytes) -> list[bytes]:
    return [kind for kind, _, _ in boxes(data)]


def children(data: bytes, parent: bytes) -> list[bytes]:
    (payload, stop) = next((s, e) for kind, s, e in boxes(data) if kind == parent)
    return [kind for kind, _, _ in boxes(data, payload, stop)]


def packets(data: bytes) -> list[Any]:
    """The video packets a demuxer gets (flush packets left out)."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        return [p for p in container.demux(stream) if p.pts is not None]


def pictures(data: bytes) -> list[str]:
    """A digest of every decoded picture, in presentation order."""
    with av.open(io.BytesIO(data)) as container:
        return [
            hashlib.sha256(frame.to_ndarray(format="yuv420p").tobytes()).hexdigest()
            for frame in container.decode(video=0)
        ]


def length_prefixed(sample: bytes) -> bool:
    """Whether a sample is MP4-form H.264: NAL units each led by a 4-byte length, to the end."""
    offset = 0
    while offset + 4 <= len(sample):
        length = int.from_bytes(sample[offset : offset + 4], "big")
        if length == 0 or sample[offset + 4] & 0x80:  # forbidden_zero_bit
            return False
        offset += 4 + length
    return offset == len(sample)


# --- sources -----------------------------------------------------------------------


def clip(seconds: float, container: ContainerName, size: tuple[int, int] = SIZE) -> bytes:
    return synthetic_clip(seconds=seconds, container=container, size=size, fps=FPS)


@pytest.fixture(scope="module")
def sources() -> dict[str, bytes]:
    """1 s of MPEG-TS, 2 s of fragmented MP4, 1 s of progressive MP4."""
    return {"ts": clip(1, "ts"), "fmp4": clip(2, "fmp4"), "mp4": clip(1, "mp4")}


def late_ts(data: bytes, seconds: float) -> bytes:
    """The MPEG-TS ``data`` with every timestamp ``seconds`` later (a camera's running clock)."""
    out = io.BytesIO()
    with av.open(io.BytesIO(data)) as source, av.open(out, "w", format="mpegts") as target:
        stream = source.streams.video[0]
        copy = target.add_stream_from_template(stream)
        shift = round(seconds / stream.time_base)
        for packet in source.demux(stream):
            if packet.pts is None:
                continue
            packet.pts, packet.dts = packet.pts + shift, packet.dts + shift
            packet.stream = copy
            target.mux(packet)
    return out.getvalue()


def with_b_frames(container: str, folder: Path, frames: int = 25) -> bytes:
    """H.264 High profile with B-frames (decode order differs from presentation order)."""
    path = folder / f"b.{container}"
    with av.open(str(path), "w", format="mpegts" if container == "ts" else "mp4") as output:
        stream: Any = output.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        stream.options = {"preset": "veryfast", "bf": "2", "g": str(FPS)}
        for index in range(frames):
            picture = np.full((SIZE[1], SIZE[0], 3), index * 9 % 256, dtype=np.uint8)
            picture[:, index % SIZE[0]] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                output.mux(packet)
        for packet in stream.encode():
            output.mux(packet)
    return path.read_bytes()


# --- fragment ----------------------------------------------------------------------


def test_fragment_rewrites_a_progressive_mp4_as_fragments_of_the_same_packets() -> None:
    # Given a progressive MP4 of 2 s with a keyframe every second
    progressive = clip(2, "mp4")
    assert "moof" not in {k.decode() for k in top_level(progressive)}
    source_packets = packets(progressive)
    keyframes = sum(1 for p in source_packets if p.is_keyframe)
    assert keyframes == 2

    # When it is fragmented
    fragmented = fragment(progressive)

    # Then the file is an init (ftyp, moov with mvex) followed by moof+mdat pairs, one per keyframe
    kinds = top_level(fragmented)
    assert kinds[:2] == [b"ftyp", b"moov"]
    assert b"mvex" in children(fragmented, b"moov")
    fragments = [k for k in kinds if k == b"moof"]
    assert len(fragments) == keyframes
    assert kinds.index(b"moov") < kinds.index(b"moof")
    assert all(kinds[i + 1] == b"mdat" for i, k in enumerate(kinds) if k == b"moof")
    # And the same packets (sizes, keyframes, timestamps) decode to the same pictures
    result_packets = packets(fragmented)
    assert [p.size for p in result_packets] == [p.size for p in source_packets]
    assert [p.is_keyframe for p in result_packets] == [p.is_keyframe for p in source_packets]
    assert [p.pts * p.time_base for p in result_packets] == [
        p.pts * p.time_base for p in source_packets
    ]
    assert count_frames(fragmented) == count_frames(progressive) == 2 * FPS
    assert pictures(fragmented) == pictures(progressive)
    assert FRAGMENTED_MOVFLAGS == "frag_keyframe+empty_moov+default_base_moof"


@pytest.mark.parametrize("data", [b'{"x": 1}', b"", b"\x00" * 4096])
def test_fragment_refuses_what_is_not_video(data: bytes) -> None:
    # Given bytes that are no video file / When fragmented / Then BadInput names the file
    with pytest.raises(BadInput) as caught:
        fragment(data)
    assert caught.value.parameter == "file"


# --- export_mp4 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "order", [("ts", "fmp4", "mp4"), ("mp4", "ts", "fmp4"), ("fmp4", "mp4", "ts")]
)
def test_export_joins_mixed_containers_into_one_faststart_mp4(
    sources: dict[str, bytes], order: tuple[str, ...], tmp_path: Path
) -> None:
    # Given three camera files of different containers (the progressive one as a file on disk)
    (tmp_path / "clip.mp4").write_bytes(sources["mp4"])
    inputs: list[bytes | Path] = [
        tmp_path / "clip.mp4" if name == "mp4" else sources[name] for name in order
    ]
    frames = [count_frames(sources[name]) for name in order]
    assert frames == [{"ts": 25, "fmp4": 50, "mp4": 25}[name] for name in order]
    expected_seconds = sum(frames) * FRAME
    expected_pictures = [digest for name in order for digest in pictures(sources[name])]
    calls: list[tuple[int, int]] = []

    # When they are exported in that order
    destination = tmp_path / "export.mp4"
    result = export_mp4(
        inputs, destination, progress=lambda done, total: calls.append((done, total))
    )

    # Then one MP4 holds every frame, bit for bit, in the given order
    data = destination.read_bytes()
    assert count_frames(data) == sum(frames)
    assert pictures(data) == expected_pictures
    # And it is faststart: moov before mdat at the top level
    kinds = top_level(data)
    assert b"moof" not in kinds
    assert kinds.index(b"moov") < kinds.index(b"mdat")
    # And every sample is MP4-form H.264 (none left in the Annex B form of MPEG-TS)
    written = packets(data)
    assert all(length_prefixed(bytes(p)) for p in written)
    # And the timeline is continuous: dts strictly increase, the duration is the sum of the sources
    dts = [p.dts for p in written]
    assert all(a < b for a, b in pairwise(dts))
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        assert container.duration is not None
        assert abs(container.duration / 1_000_000 - expected_seconds) <= FRAME
        assert abs(float(stream.duration * stream.time_base) - expected_seconds) <= FRAME
        last = max(frame.time for frame in container.decode(stream))
    assert abs(last + FRAME - expected_seconds) <= FRAME
    # And the result and the progress tell the same
    assert result == ExportResult(
        files=3,
        packets=sum(len(packets(sources[name])) for name in order),
        duration_ms=round(expected_seconds * 1000),
        bytes=len(data),
        # each source starts where the previous ones end (an export's manifest maps its
        # clip time back to the files by these)
        starts_ms=tuple(round(sum(frames[:i]) * FRAME * 1000) for i in range(len(frames))),
    )
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_export_starts_each_source_where_the_previous_ended_whatever_its_clock(
    sources: dict[str, bytes], tmp_path: Path
) -> None:
    # Given an MPEG-TS whose timestamps start 10 s in, between two files starting at 0
    late = late_ts(sources["ts"], 10.0)
    with av.open(io.BytesIO(late)) as container:
        stream = container.streams.video[0]
        assert stream.start_time is not None
        assert stream.start_time * stream.time_base >= 10
    inputs = [sources["mp4"], late, sources["ts"]]
    expected_seconds = sum(count_frames(data) for data in inputs) * FRAME

    # When they are exported
    result = export_mp4(inputs, tmp_path / "export.mp4")

    # Then the 10 s do not appear: the output lasts as long as its frames
    data = (tmp_path / "export.mp4").read_bytes()
    times = sorted(p.pts * p.time_base for p in packets(data))
    assert times[0] == 0
    steps = {b - a for a, b in pairwise(times)}
    assert steps == {Fraction(1, FPS)}
    assert abs(result.duration_ms / 1000 - expected_seconds) <= FRAME
    assert pictures(data) == [d for source in inputs for d in pictures(source)]


@pytest.mark.parametrize("order", [("b-ts", "b-mp4", "b-ts"), ("ts", "b-ts", "b-mp4", "mp4")])
def test_export_keeps_b_frames_in_order_across_sources(
    sources: dict[str, bytes], order: tuple[str, ...], tmp_path: Path
) -> None:
    # Given files whose decode order differs from their presentation order (TS and MP4),
    # alone or after files without B-frames (whose last dts is closer to their end)
    b_frames = {"b-ts": with_b_frames("ts", tmp_path), "b-mp4": with_b_frames("mp4", tmp_path)}
    assert all(any(p.pts != p.dts for p in packets(data)) for data in b_frames.values())
    inputs = [{**sources, **b_frames}[name] for name in order]
    expected_seconds = sum(count_frames(data) for data in inputs) * FRAME

    # When they are exported
    result = export_mp4(inputs, tmp_path / "export.mp4")

    # Then the decode timestamps strictly increase and every picture comes out, in order
    data = (tmp_path / "export.mp4").read_bytes()
    dts = [p.dts for p in packets(data)]
    assert all(a < b for a, b in pairwise(dts))
    assert pictures(data) == [d for source in inputs for d in pictures(source)]
    assert all(length_prefixed(bytes(p)) for p in packets(data))
    # And the timeline grows by at most the reorder delay (2 frames) at each such join
    joins = sum(1 for a, b in pairwise(order) if b.startswith("b-"))
    assert 0 <= result.duration_ms / 1000 - expected_seconds <= joins * 2 * FRAME + 0.001


def test_export_refuses_a_source_of_another_resolution(
    sources: dict[str, bytes], tmp_path: Path
) -> None:
    # Given a second source of 96x48 after one of 64x48
    other = clip(1, "ts", size=(96, 48))

    # When exported together
    with pytest.raises(BadInput) as caught:
        export_mp4([sources["mp4"], other, sources["ts"]], tmp_path / "export.mp4")

    # Then BadInput names that source and what differs; no file is left behind
    assert caught.value.parameter == "sources[1]"
    assert "width" in caught.value.message and "96" in caught.value.message
    assert "height" not in caught.value.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("index", [0, 2])
def test_export_refuses_a_source_that_is_not_video(
    sources: dict[str, bytes], index: int, tmp_path: Path
) -> None:
    # Given a JSON document among the sources
    inputs: list[bytes | Path] = [sources["ts"], sources["mp4"], sources["fmp4"]]
    inputs[index] = b'{"x": 1}'

    # When exported / Then BadInput names its index; no file is left behind
    with pytest.raises(BadInput) as caught:
        export_mp4(inputs, tmp_path / "export.mp4")
    assert caught.value.parameter == f"sources[{index}]"
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_no_sources(tmp_path: Path) -> None:
    # Given no sources / When exported / Then BadInput names the sources
    with pytest.raises(BadInput) as caught:
        export_mp4([], tmp_path / "export.mp4")
    assert caught.value.parameter == "sources"
    assert not (tmp_path / "export.mp4").exists()
