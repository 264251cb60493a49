"""Ranged reads of a video file (docs/playback.md, "Frames"): the file the decoder reads is
the object's bytes, whatever was fetched when; checked against plain slicing."""

from __future__ import annotations

import io
import struct
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.media.ranged import RangedFile, extend, first_read_end, open_for


def _object(size: int) -> bytes:
    return bytes((index * 7 + index // 251) % 256 for index in range(size))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    size=st.integers(1, 5_000),
    first=st.integers(0, 5_000),
    steps=st.lists(st.tuples(st.integers(0, 5_000), st.integers(0, 700)), max_size=12),
)
def test_every_read_answers_the_objects_own_bytes(
    size: int, first: int, steps: list[tuple[int, int]]
) -> None:
    # Given an object, a first read of some of it, and the view widened to the whole file
    data = _object(size)
    fetched: list[tuple[int, int]] = []

    def fetch(start: int, end: int) -> bytes:
        fetched.append((start, end))
        return data[start:end]

    source = RangedFile(fetch, size)
    source.fetch(0, first)
    source.view = min(first, size)
    extend(source)
    # When the decoder seeks and reads anywhere
    for position, length in steps:
        source.seek(position)
        got = source.read(length)
        # Then it reads exactly what slicing the object gives
        assert got == data[position : position + length]
    # And no byte was fetched twice
    covered = sorted(fetched)
    for (_, end), (start, _) in pairwise(covered):
        assert start >= end


def test_an_mp4_with_its_index_last_reads_the_index_second() -> None:
    # Given an MP4's top-level boxes: ftyp, a large mdat, then moov
    ftyp = struct.pack(">I4s", 16, b"ftyp") + b"isom" + b"\0" * 4
    mdat = struct.pack(">I4s", 400_000, b"mdat") + b"\1" * (400_000 - 8)
    moov = struct.pack(">I4s", 2_000, b"moov") + b"\2" * (2_000 - 8)
    data = ftyp + mdat + moov
    reads: list[tuple[int, int]] = []

    def fetch(start: int, end: int) -> bytes:
        reads.append((start, end))
        return data[start:end]

    # When a picture early in it is read for
    source = open_for(fetch, len(data), 10_000, 500, mp4=True)
    # Then the first read is the estimate, the second the index (from the mdat's end)
    assert reads == [(0, first_read_end(len(data), 10_000, 500)), (16 + 400_000, len(data))]
    assert source.whole()
    source.seek(len(data) - 2_000)
    assert source.read(8) == moov[:8]
    assert len(reads) == 2


def test_a_fragmented_mp4_or_a_ts_is_read_once_as_far_as_the_estimate() -> None:
    data = struct.pack(">I4s", 24, b"ftyp") + b"\0" * 16 + struct.pack(">I4s", 500, b"moov")
    data += b"\0" * (1_000_000 - len(data))
    for mp4 in (True, False):
        source = open_for(lambda start, end: data[start:end], len(data), 60_000, 1_000, mp4)
        assert source.reads == [(0, first_read_end(len(data), 60_000, 1_000))]
        assert not source.whole() and source.bytes_read < len(data) // 4
        assert source.seek(0, io.SEEK_END) == source.view
