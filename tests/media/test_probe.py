"""What container a video object really is, from its first 64 KiB (media/probe.py).

The media are real H.264 clips encoded on the spot (media/synthetic.py). Expectations
are computed from the files themselves — a small box lister written here, the
188-byte packet size of MPEG-TS, and decoding with PyAV — not from the module under
test, so a failure means the probe and the file disagree.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.core.errors import BadInput
from video_index.media.probe import (
    MAX_BOXES,
    PROBE_BYTES,
    Container,
    MediaFacts,
    check_container,
    playable,
    probe,
)
from video_index.media.synthetic import count_frames, synthetic_clip

Box = tuple[int, bytes, int]  # offset, type, size
UNKNOWN = MediaFacts(Container.UNKNOWN)
PROGRESSIVE = MediaFacts(Container.MP4_PROGRESSIVE)
TS_PACKET = 188  # ISO/IEC 13818-1
FPS = 25


# --- the media and an independent look at their structure --------------------------


@cache
def clip(container: str) -> bytes:
    """A small real clip (two one-second GOPs, so an fMP4 has two fragments)."""
    return synthetic_clip(seconds=2, container=container, size=(64, 48), fps=FPS)  # type: ignore[arg-type]


@cache
def big_clip(container: str) -> bytes:
    """A real clip larger than the probe window."""
    seconds = 8 if container == "ts" else 40
    return synthetic_clip(seconds=seconds, container=container, size=(96, 64))  # type: ignore[arg-type]


@cache
def huge_moov_clip() -> bytes:
    """A progressive MP4 with 12,000 tiny frames: its sample tables (a size per sample,
    a sync-sample entry per keyframe, every other frame) outgrow the probe window."""
    return synthetic_clip(
        seconds=120, container="mp4", fps=100, size=(32, 32), keyframe_seconds=0.02
    )


def top_boxes(data: bytes) -> list[Box]:
    """The top-level boxes of a well-formed file as PyAV writes it (32-bit sizes)."""
    boxes, offset = [], 0
    while offset < len(data):
        size, kind = struct.unpack(">I4s", data[offset : offset + 8])
        assert size >= 8, f"not a box at {offset}"
        boxes.append((offset, kind, size))
        offset += size
    return boxes


def first(data: bytes, *kinds: bytes) -> Box:
    return next(box for box in top_boxes(data) if box[1] in kinds)


def free_box(size: int) -> bytes:
    return struct.pack(">I4s", size, b"free") + bytes(size - 8)


def after_moov(data: bytes, insert: bytes) -> bytes:
    """``data`` with ``insert`` spliced in right after its moov."""
    offset, _, size = first(data, b"moov")
    return data[: offset + size] + insert + data[offset + size :]


def window(data: bytes) -> bytes:
    """What the ranged GET returns: the first PROBE_BYTES bytes (or fewer)."""
    return data[:PROBE_BYTES]


def fragment_at(data: bytes, offset: int) -> bytes:
    """The fragment (moof + mdat) starting at ``offset``."""
    (_, moof, moof_size), (_, mdat, mdat_size) = top_boxes(data[offset:])[:2]
    assert (moof, mdat) == (b"moof", b"mdat")
    return data[offset : offset + moof_size + mdat_size]


# --- real clips -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("container", "expected"),
    [("ts", Container.MPEGTS), ("fmp4", Container.FMP4), ("mp4", Container.MP4_PROGRESSIVE)],
)
def test_a_real_clip_is_recognised(container: str, expected: Container) -> None:
    # Given a real clip in the container (that decodes: these tests use real media)
    data = clip(container)
    assert count_frames(data) == 2 * FPS
    # When it is probed
    facts = probe(window(data), len(data))
    # Then its container is named, with an init only for fMP4
    assert facts.container is expected
    assert (facts.init_end is not None) == (expected is Container.FMP4)


@pytest.mark.parametrize("decode_start_ms", [None, 1_767_225_600_000])
def test_the_first_fragments_decode_time_is_read_from_tfdt_and_mdhd(
    decode_start_ms: int | None,
) -> None:
    # Given a camera's fMP4 (decode times from 0) or one written as the product writes
    # them (64-bit decode times from the file's wall-clock start: 2026-01-01T00:00:00Z)
    from video_index.media.remux import fragment

    data = (
        clip("fmp4")
        if decode_start_ms is None
        else fragment(clip("mp4"), decode_start_ms=decode_start_ms)
    )
    # When it is probed
    facts = probe(window(data), len(data))
    # Then the first fragment's decode time is known, in ms
    assert facts.decode_start_ms == (decode_start_ms or 0)
    # And only the camera's restarts against a file starting at that wall-clock time
    assert facts.restarts(1_767_225_600_000) is (decode_start_ms is None)
    assert not facts.restarts(facts.decode_start_ms or 0)


def test_the_fmp4_init_ends_at_the_first_moof_and_initialises_a_decoder() -> None:
    # Given a real fMP4 clip of two fragments
    data = clip("fmp4")
    # When it is probed
    init_end = probe(window(data), len(data)).init_end
    # Then the media starts with a moof, right after the init
    assert init_end is not None
    assert data[init_end + 4 : init_end + 8] == b"moof"
    # And the init followed by the first fragment alone (moof + mdat) decodes: one GOP
    assert count_frames(data[:init_end] + fragment_at(data, init_end)) == FPS
    # And the fragments without the init are not a playable file on their own
    assert probe(window(data[init_end:]), len(data) - init_end) == UNKNOWN


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: big_clip("ts"), id="ts"),
        pytest.param(lambda: big_clip("fmp4"), id="fmp4"),
        pytest.param(huge_moov_clip, id="mp4-huge-moov"),
        pytest.param(lambda: after_moov(clip("fmp4"), free_box(70_000)), id="fmp4-moof-beyond"),
        pytest.param(lambda: after_moov(clip("mp4"), free_box(70_000)), id="mp4-mdat-beyond"),
    ],
)
def test_the_probe_window_answers_as_the_whole_file_does(make: Any) -> None:
    # Given a file larger than the probe window
    data = make()
    assert len(data) > PROBE_BYTES
    # When only its first PROBE_BYTES are probed, and then the whole file
    from_window, from_file = probe(window(data), len(data)), probe(data, len(data))
    # Then both answers agree, and name a container
    assert from_window == from_file
    assert from_window.container is not Container.UNKNOWN


def test_a_huge_moov_beyond_the_probe_window_is_progressive() -> None:
    # Given a real progressive MP4 whose moov does not fit the probe window
    data = huge_moov_clip()
    offset, _, size = first(data, b"moov")
    assert offset + size > PROBE_BYTES
    # When its first PROBE_BYTES are probed
    facts = probe(window(data), len(data))
    # Then it is progressive: an fMP4 moov holds no sample tables
    assert facts == PROGRESSIVE


def test_an_fmp4_whose_first_moof_is_beyond_the_window_ends_its_init_there() -> None:
    # Given a real fMP4 with a large free box between its moov and its first moof
    data = after_moov(clip("fmp4"), free_box(70_000))
    moof_offset = first(data, b"moof")[0]
    assert moof_offset > PROBE_BYTES
    # When its first PROBE_BYTES are probed
    facts = probe(window(data), len(data))
    # Then it is fMP4 (its moov has mvex) and the init runs up to the unseen moof
    assert facts == MediaFacts(Container.FMP4, init_end=moof_offset)
    # And that init (free box included) with the first fragment still decodes
    assert count_frames(data[:moof_offset] + fragment_at(data, moof_offset)) == FPS


def test_a_progressive_mp4_whose_mdat_is_beyond_the_window_is_progressive() -> None:
    # Given a real progressive MP4 with a large free box between its moov and its mdat
    data = after_moov(clip("mp4"), free_box(70_000))
    assert first(data, b"mdat")[0] > PROBE_BYTES
    # When its first PROBE_BYTES are probed
    # Then it is progressive: its moov, wholly seen, has no mvex
    assert probe(window(data), len(data)) == PROGRESSIVE


# --- cut files ------------------------------------------------------------------------


def expected_after_cut(container: str, data: bytes, cut: int) -> MediaFacts:
    """The rules, restated: MPEG-TS needs one whole packet; MP4 is decided by its first
    moof (fMP4) or mdat (progressive), which must be whole in the cut file."""
    if container == "ts":
        return MediaFacts(Container.MPEGTS) if cut >= TS_PACKET else UNKNOWN
    offset, kind, size = first(data, b"moof", b"mdat")
    # (a real clip's first fragment decodes from 0)
    fmp4 = MediaFacts(Container.FMP4, init_end=offset, decode_start_ms=0)
    whole = fmp4 if kind == b"moof" else PROGRESSIVE
    return whole if cut >= offset + size else UNKNOWN


@pytest.mark.parametrize("container", ["ts", "fmp4", "mp4"])
@settings(max_examples=150, deadline=None)
@given(draw=st.data())
def test_a_cut_file_is_its_container_or_unknown(container: str, draw: st.DataObject) -> None:
    # Given a real clip cut anywhere (the boundaries of each box and packet included)
    data = clip(container)
    edges = [TS_PACKET - 1, TS_PACKET] if container == "ts" else []
    for offset, _, size in [] if container == "ts" else top_boxes(data):
        edges += [offset, offset + 7, offset + 8, offset + size - 1, offset + size]
    cut = draw.draw(
        st.one_of(st.integers(0, len(data)), st.sampled_from(edges)).filter(
            lambda n: 0 <= n <= len(data)
        )
    )
    # When the cut file is probed
    facts = probe(window(data[:cut]), cut)
    # Then it is the whole file's answer once the deciding box or packet is whole, else UNKNOWN
    assert facts == expected_after_cut(container, data, cut)
    assert facts in (probe(data, len(data)), UNKNOWN)


# --- hand-made structures -------------------------------------------------------------


def box(kind: bytes, payload: bytes = b"", size: int | None = None) -> bytes:
    return struct.pack(">I4s", 8 + len(payload) if size is None else size, kind) + payload


FTYP = box(b"ftyp", b"isom\0\0\2\0isomiso2")
MOOV = box(b"moov", box(b"mvhd", bytes(100)) + box(b"trak", bytes(40)))
MDAT = box(b"mdat", bytes(64))


@pytest.mark.parametrize(
    ("layout", "size", "expected"),
    [
        pytest.param(FTYP + MDAT + MOOV, None, PROGRESSIVE, id="mdat-before-moov"),
        pytest.param(FTYP + MOOV + box(b"mdat", size=0), 10**10, PROGRESSIVE, id="mdat-to-end"),
        pytest.param(
            FTYP + MOOV + struct.pack(">I4sQ", 1, b"mdat", 10**10 - len(FTYP + MOOV)),
            10**10,
            PROGRESSIVE,
            id="mdat-64-bit-size",
        ),
        pytest.param(FTYP + MOOV, None, UNKNOWN, id="no-media"),
        pytest.param(FTYP + MOOV + box(b"free", size=0) + MDAT, None, UNKNOWN, id="free-to-end-0"),
        pytest.param(FTYP + box(b"moof", bytes(16)) + MDAT, None, UNKNOWN, id="moof-no-moov"),
        pytest.param(FTYP + MOOV + box(b"mdat", size=4), None, UNKNOWN, id="size-below-header"),
        pytest.param(FTYP + MOOV + struct.pack(">I4sQ", 1, b"mdat", 12), None, UNKNOWN, id="l12"),
        pytest.param(FTYP + MOOV + box(b"md\xffat"[:4], bytes(8)), None, UNKNOWN, id="bad-type"),
        pytest.param(FTYP + MOOV + b"\0\0\0", None, UNKNOWN, id="stray-bytes"),
        pytest.param(FTYP + MOOV + box(b"free", bytes(70_000)), None, UNKNOWN, id="free-to-end"),
        pytest.param(box(b"free", bytes(70_000)) + MOOV + MDAT, None, UNKNOWN, id="no-moov-seen"),
    ],
)
def test_hand_made_box_layouts(layout: bytes, size: int | None, expected: MediaFacts) -> None:
    # Given an object laid out by hand (its size may exceed the bytes at hand)
    total = len(layout) if size is None else size
    # When its first bytes are probed
    # Then the rules decide as stated
    assert probe(window(layout), total) == expected


@pytest.mark.parametrize(
    ("count", "expected"), [(MAX_BOXES - 3, PROGRESSIVE), (MAX_BOXES - 2, UNKNOWN)]
)
def test_the_walk_reads_a_bounded_number_of_boxes(count: int, expected: MediaFacts) -> None:
    # Given ftyp, moov, then many empty free boxes before the mdat (the whole file at hand):
    # the mdat is box number MAX_BOXES, then MAX_BOXES + 1
    data = FTYP + MOOV + box(b"free") * count + MDAT
    # When it is probed
    # Then the mdat is found only within the bound on boxes read
    assert probe(data, len(data)) == expected


def test_a_ts_file_with_a_lost_sync_byte_is_not_mpegts() -> None:
    # Given a real TS clip whose third packet does not start with the sync byte
    data = bytearray(clip("ts"))
    data[2 * TS_PACKET] = 0x00
    # When it is probed
    # Then it is not MPEG-TS (nor anything else)
    assert probe(bytes(data), len(data)) == UNKNOWN


# --- nothing, noise and hostile input -------------------------------------------------


@pytest.mark.parametrize(("head", "size"), [(b"", 0), (b"", 1000), (b"\x47" * 400, 0)])
def test_an_empty_object_is_unknown_and_not_playable(head: bytes, size: int) -> None:
    # Given an object with no bytes (or no bytes at hand)
    # When it is probed
    facts = probe(head, size)
    # Then it is unknown and plays as nothing
    assert facts == UNKNOWN
    assert not playable("ts", facts) and not playable("mp4", facts)


def check_invariants(facts: MediaFacts, size: int) -> None:
    assert isinstance(facts.container, Container)
    assert (facts.init_end is not None) == (facts.container is Container.FMP4)
    if facts.init_end is not None:
        assert 8 <= facts.init_end < size  # at least a moov before, the media after


@settings(max_examples=300, deadline=None)
@given(head=st.binary(max_size=3000), size=st.integers(-5, 2**65))
def test_random_bytes_never_raise(head: bytes, size: int) -> None:
    # Given any bytes and any declared size
    # When they are probed
    # Then the probe answers, consistently
    check_invariants(probe(head, size), size)


KINDS = st.sampled_from([b"ftyp", b"moov", b"mvex", b"moof", b"mdat", b"free", b"\x00\x01ab"])


@st.composite
def box_soup(draw: st.DrawFn, depth: int = 0) -> bytes:
    """Box-shaped input: nested boxes whose sizes are right, zero, 64-bit or wrong."""
    out = b""
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(KINDS)
        nest = depth < 2 and draw(st.booleans())
        payload = draw(box_soup(depth + 1)) if nest else draw(st.binary(max_size=24))
        mode = draw(st.sampled_from(["exact", "zero", "large", "wrong"]))
        if mode == "large":
            out += struct.pack(">I4sQ", 1, kind, 16 + len(payload)) + payload
        elif mode == "wrong":
            out += box(kind, payload, size=draw(st.integers(0, 2**32 - 1)))
        else:
            out += box(kind, payload, size=0 if mode == "zero" else None)
    return out


@settings(max_examples=300, deadline=None)
@given(soup=box_soup(), cut=st.integers(0, 400), extra=st.sampled_from([0, 1, 10**6]))
def test_box_shaped_noise_never_raises(soup: bytes, cut: int, extra: int) -> None:
    # Given box-shaped bytes, seen through a window, of an object possibly larger
    head, size = soup[: max(cut, 1)], len(soup) + extra
    # When they are probed
    # Then the probe answers, consistently
    check_invariants(probe(head, size), size)


# --- extensions -----------------------------------------------------------------------

PLAYS = {("ts", Container.MPEGTS), ("mp4", Container.FMP4), ("mp4", Container.MP4_PROGRESSIVE)}


@pytest.mark.parametrize("ext", ["ts", "mp4", "json", "", "TS", ".mp4", "m4s"])
@pytest.mark.parametrize("container", list(Container))
def test_playable_table(ext: str, container: Container) -> None:
    # Given the facts of an object with a key extension
    facts = MediaFacts(container, init_end=1000 if container is Container.FMP4 else None)
    # When asked whether it plays
    # Then only TS as .ts and MP4 (either kind) as .mp4 do
    assert playable(ext, facts) == ((ext, container) in PLAYS)


@pytest.mark.parametrize(("ext", "container"), [("ts", "ts"), ("mp4", "fmp4"), ("mp4", "mp4")])
def test_check_container_accepts_the_right_extension(ext: str, container: str) -> None:
    # Given a real clip named with its own extension
    data = clip(container)
    # When the uploader checks it
    # Then it gets the probe's facts
    assert check_container(ext, window(data), len(data)) == probe(data, len(data))


JSON = b'{"camera": "cam-001", "temperature": 21.5}\n'


def media_without_init() -> bytes:
    data = clip("fmp4")
    return data[first(data, b"moof")[0] :]


@pytest.mark.parametrize(
    ("ext", "make", "phrases"),
    [
        pytest.param("mp4", lambda: clip("ts"), ["not ISO BMFF (MP4)", "MPEG-TS", ".ts"], id="ts"),
        pytest.param("ts", lambda: clip("fmp4"), ["not MPEG-TS", "0x47", "fragmented"], id="fmp4"),
        pytest.param("ts", lambda: clip("mp4"), ["not MPEG-TS", "0x47", "progressive"], id="mp4"),
        pytest.param("mp4", lambda: b"", ["empty"], id="empty-mp4"),
        pytest.param("ts", lambda: b"", ["empty"], id="empty-ts"),
        pytest.param("mp4", lambda: JSON, ["not ISO BMFF", "no MP4 boxes", '{"camera"'], id="json"),
        pytest.param("ts", lambda: JSON, ["not MPEG-TS", "one 188-byte", "text"], id="json-ts"),
        pytest.param("mp4", lambda: clip("mp4")[:1500], ["not ISO BMFF", "cut"], id="cut-mp4"),
        pytest.param("mp4", media_without_init, ["not ISO BMFF", "no moov"], id="no-init"),
    ],
)
def test_check_container_refuses_content_its_extension_does_not_name(
    ext: str, make: Any, phrases: list[str]
) -> None:
    # Given a file whose content is not what its extension says
    data = make()
    # When the uploader checks it
    with pytest.raises(BadInput) as raised:
        check_container(ext, window(data), len(data))
    # Then the file is refused, saying why
    assert raised.value.parameter == "file"
    for phrase in phrases:
        assert phrase in raised.value.message
    # And the probe agrees it does not play under that extension
    assert not playable(ext, probe(window(data), len(data)))


def test_check_container_refuses_an_extension_that_is_not_video() -> None:
    # Given a real TS clip named .json
    data = clip("ts")
    # When the uploader checks it
    with pytest.raises(BadInput) as raised:
        check_container("json", window(data), len(data))
    # Then the extension is what is refused
    assert raised.value.parameter == "ext"
