"""The column-wise fingerprint pass agrees with the per-object one (docs/operations.md).

Each property checks the vectorised code against an independent implementation: the
key hash against the reference xxHash binding, key parsing against
``classify_key``, partial fingerprints (merged in any order and grouping) against the
per-object projection (``contribution`` through ``add_object``), and the CSV parts of
a data file against the file itself.
"""

from __future__ import annotations

import gzip
import itertools
import random
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import pyarrow as pa
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.s3_world import OTHER_KEYS, segments
from video_index.core.keyhash import key_hash, key_hashes
from video_index.core.keys import ValidKey, classify_key, format_key
from video_index.ops import columnar
from video_index.ops.fingerprints import Fingerprint, Partition, add_object
from video_index.ops.inventory.columns import _PartLines
from video_index.ops.keyparse import parse_keys

#: Characters that turn a valid key into a near miss (separators, digits, case, marks).
NEAR = "v1/_.-TZ0123456789abcxyzA é"


@st.composite
def near_keys(draw: st.DrawFn) -> str:
    """A valid key, a foreign or other-version key, or a valid key bent in a few places."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.sampled_from([*OTHER_KEYS, "v2/video/x.mp4", "", "v1/"]))
    key = format_key(draw(segments()))
    for _ in range(draw(st.integers(0, 2)) if choice < 6 else 0):
        at = draw(st.integers(0, len(key)))
        char = draw(st.sampled_from(NEAR))
        match draw(st.integers(0, 2)):
            case 0:
                key = key[:at] + char + key[at:]
            case 1:
                key = key[:at] + key[at + 1 :]
            case _:
                key = key[:at] + char + key[at + 1 :]
    return key


def one_pass(keys: list[str], sizes: list[int]) -> dict[Partition, Fingerprint]:
    """The per-object fingerprints (what reconcile computed before the columns)."""
    out: dict[Partition, Fingerprint] = {}
    for key, size in zip(keys, sizes, strict=True):
        match classify_key(key):
            case ValidKey(segment=segment):
                add_object(out, segment, size)
            case _:
                pass
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=120), max_size=40))
def test_key_hashes_are_xxh64_of_each_key(data: list[bytes]) -> None:
    # Given arbitrary keys (any bytes decoded, so any UTF-8 and any length)
    keys = [d.decode("latin-1") for d in data]
    # When they are hashed one by one and as a column
    column = key_hashes(pa.array(keys, pa.string()))
    # Then both are the reference XXH64 of the UTF-8 bytes
    reference = [xxhash.xxh64_intdigest(k.encode()) for k in keys]
    assert [key_hash(k) for k in keys] == reference
    assert [int(h) for h in column] == reference


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(near_keys(), min_size=1, max_size=60))
def test_column_parsing_accepts_exactly_the_valid_keys_with_their_fields(keys: list[str]) -> None:
    # When a column of keys is parsed at once
    parsed = parse_keys(pa.array(keys, pa.string()))
    accepted = set(parsed.accepted.tolist())
    # Then every key it accepts is valid, with the fields classify_key gives it
    for row, kind, device, start, duration, hash_ in zip(
        parsed.accepted.tolist(),
        parsed.kind.tolist(),
        parsed.device.to_pylist(),
        parsed.start_ms.tolist(),
        parsed.duration_ms.tolist(),
        parsed.hash.tolist(),
        strict=True,
    ):
        verdict = classify_key(keys[row])
        assert isinstance(verdict, ValidKey), keys[row]
        segment = verdict.segment
        assert (["video", "sensor", "analysis"][kind], device) == (segment.kind, segment.device)
        assert (start, duration, hash_) == (
            segment.start_ms,
            segment.duration_ms,
            key_hash(keys[row]),
        )
    # And what it leaves is left to the per-key code (so nothing valid is lost either)
    left = [k for row, k in enumerate(keys) if row not in accepted]
    assert len(accepted) + len(left) == len(keys)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    keys=st.lists(near_keys(), min_size=0, max_size=80),
    sizes=st.lists(st.integers(0, 10**12), min_size=80, max_size=80),
    cuts=st.lists(st.integers(0, 80), max_size=6),
    seed=st.integers(0, 2**32),
)
def test_partials_merged_in_any_order_and_grouping_equal_the_one_pass_fingerprints(
    keys: list[str], sizes: list[int], cuts: list[int], seed: int
) -> None:
    rng = random.Random(seed)
    sizes = sizes[: len(keys)]
    # Given the objects cut into chunks (data files, listings), each fingerprinted alone
    bounds = sorted({0, len(keys), *(c for c in cuts if c <= len(keys))})
    partials = []
    invalid = 0
    for low, high in itertools.pairwise(bounds):
        partial, counts = columnar.fingerprint_keys(keys[low:high], sizes[low:high])
        partials.append(partial)
        invalid += counts.invalid_keys
    # When the partials are merged in a random order and random nesting, and split into
    # reduce shards and merged back
    rng.shuffle(partials)
    while len(partials) > 1:
        take = rng.randint(2, len(partials))
        partials = [columnar.merge(partials[:take]), *partials[take:]]
        rng.shuffle(partials)
    merged = partials[0] if partials else columnar.empty()
    shards = columnar.split(merged, rng.randint(1, 5))
    merged = columnar.merge(columnar.from_bytes(columnar.to_bytes(s)) for s in shards)
    # Then they are the per-object fingerprints of all the objects
    assert columnar.to_fingerprints(merged, side=columnar.EXPECTED) == one_pass(keys, sizes)
    assert invalid == sum(1 for k in keys if type(classify_key(k)).__name__ == "InvalidKey")


def test_coverage_is_carried_into_the_next_utc_day() -> None:
    # Given a video starting 10 minutes before midnight and lasting 20 minutes
    key = "v1/video/cam-a/2026/11/29/23/20261129T235000.000Z_1200000_00ab.mp4"
    partial, _ = columnar.fingerprint_keys([key], [5])
    found = columnar.to_fingerprints(partial, side=columnar.EXPECTED)
    # Then its day has n, b, d and h, and no coverage: the only quarter start it covers,
    # 00:00, belongs to the next day, which gets that coverage (and nothing else)
    assert found == {
        Partition("cam-a", "video", date(2026, 11, 29)): Fingerprint(
            {"n": 1, "b": 5, "d": 1_200_000, "h": key_hash(key)}
        ),
        Partition("cam-a", "video", date(2026, 11, 30)): Fingerprint({"c": 1}),
    }
    # As the per-object projection says
    assert found == one_pass([key], [5])


def test_foreign_and_other_version_keys_are_counted_without_being_parsed() -> None:
    keys = ["renditions/v1/video/x/init.mp4", "v2/video/cam-a/x.mp4", "tmp/a+b.part", "v1/x"]
    _, counts = columnar.fingerprint_keys(keys, None)
    assert (counts.objects_seen, counts.foreign_keys, counts.invalid_keys) == (4, 2, 2)
    assert [s["key"] for s in counts.invalid_samples] == ["v2/video/cam-a/x.mp4", "v1/x"]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.integers(0, 400), max_size=40),
    gzipped=st.booleans(),
    members=st.integers(1, 3),
    final_newline=st.booleans(),
    parts=st.integers(1, 9),
    chunk=st.sampled_from([64, 1000, 1 << 20]),
)
def test_the_parts_of_a_csv_file_are_its_lines_each_once(
    tmp_path_factory: Any,
    lines: list[int],
    gzipped: bool,
    members: int,
    final_newline: bool,
    parts: int,
    chunk: int,
) -> None:
    import video_index.ops.inventory.columns as columns_module

    # Given a data file of lines of any length, gzip (in one or more members) or plain
    text = b"".join(b"x" * n + b"\n" for n in lines)
    if text and not final_newline:
        text = text[:-1]
    if gzipped:
        step = max(1, len(text) // members)
        body = b"".join(gzip.compress(text[i : i + step]) for i in range(0, len(text), step))
        body = body or gzip.compress(b"")
    else:
        body = text
    path = Path(tmp_path_factory.mktemp("parts")) / "data.csv"
    path.write_bytes(body)
    # When each part's lines are read (the decompressor fed at the same cut points)
    original = columns_module._CHUNK
    columns_module._CHUNK = chunk
    try:
        read = []
        for part in range(parts):
            reader = _PartLines(str(path), part, parts)
            read.append(b"".join(iter(lambda: reader.read(4096), b"")))  # noqa: B023
            reader.close()
    finally:
        columns_module._CHUNK = original
    # Then together they are the file, every line in exactly one part, in order
    assert b"".join(read) == text
    pieces = [piece for piece in read if piece]
    for piece in pieces[:-1]:
        assert piece.endswith(b"\n")


# --- CSV keys decoded column-wise ------------------------------------------------------------

_ESCAPE_HEAVY = st.lists(
    st.sampled_from(["%2F", "%2f", "%25", "%2B", "+", "%", "%2", "%%2F", "%252F", "a", "é", "/"]),
    max_size=8,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ESCAPE_HEAVY, st.text(max_size=12)), min_size=1, max_size=30))
def test_csv_keys_decoded_column_wise_equal_unquote_plus_of_each(raw: list[str]) -> None:
    from video_index.ops.inventory.columns import _decoded

    # Given keys as a CSV inventory may hold them: '%2F' for '/', other escapes, stray '%'
    # and '+', and text that is not an escape at all
    keys = [key for key in raw if _decodes(key)]
    if not keys:
        return
    # When they are decoded column-wise
    decoded = _decoded(pa.array(keys, pa.string()), "a test").to_pylist()
    # Then each is exactly what unquote_plus makes of it, one at a time
    assert decoded == [unquote_plus(key, errors="strict") for key in keys]


def _decodes(key: str) -> bool:
    try:
        unquote_plus(key, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


#: Field values that break one rule each, or only just keep to it (by field of the grammar).
AWKWARD_FIELDS = {
    "device": ["cam-", "-cam", "Cam-a", "c", "a" * 64, "a" * 65, "cam_a", "c%2Fa", "cam.a", "é"],
    "date": ["00010101", "00000101", "20261301", "20260229", "20240229", "20260431", "99991231"],
    "clock": ["000000", "235959", "240000", "236000", "235960"],
    "millis": ["000", "999", "99a"],
    "duration": ["0", "1", "01", "3600000", "3600001", "86400000", "86400001", "999999999", "1e3"],
    "id": ["a", "z9", "A0", "0" * 64, "0" * 65, "ab-c", "ab%2F"],
    "ext": ["mp4", "ts", "json", "MP4", "mp4.gz"],
    "kind": ["video", "sensor", "analysis", "audio", "VIDEO"],
}


@st.composite
def awkward_keys(draw: st.DrawFn) -> str:
    """A key assembled field by field, each field valid or awkward: URL-encoded slashes,
    bad dates, leading zeros, out-of-range durations, other kinds and extensions, folders
    that disagree with the start, S3 Inventory's encoded form of a valid key."""
    segment = draw(segments())
    fields = {
        "kind": segment.kind,
        "device": segment.device,
        "date": f"{segment.start:%Y%m%d}",
        "clock": f"{segment.start:%H%M%S}",
        "millis": f"{segment.start.microsecond // 1000:03d}",
        "duration": str(segment.duration_ms),
        "id": segment.id,
        "ext": segment.ext,
    }
    for name in draw(st.sets(st.sampled_from(sorted(AWKWARD_FIELDS)), max_size=2)):
        fields[name] = draw(st.sampled_from(AWKWARD_FIELDS[name]))
    date, clock = fields["date"], fields["clock"]
    folders = f"{date[0:4]}/{date[4:6]}/{date[6:8]}/{clock[0:2]}"
    if draw(st.integers(0, 9)) == 0:  # folders of another hour
        folders = folders[:-2] + f"{(int(clock[0:2]) + 1) % 24:02d}"
    start = f"{date}T{clock}.{fields['millis']}Z"
    key = (
        f"v1/{fields['kind']}/{fields['device']}/{folders}/"
        f"{start}_{fields['duration']}_{fields['id']}.{fields['ext']}"
    )
    return key.replace("/", "%2F") if draw(st.integers(0, 19)) == 0 else key


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    keys=st.lists(st.one_of(awkward_keys(), near_keys()), min_size=1, max_size=40),
    block=st.sampled_from([1, 3, 16_384]),
)
def test_column_parsing_gives_each_awkward_key_the_verdict_and_fields_of_classify_key(
    keys: list[str], block: int
) -> None:
    import video_index.ops.keyparse as keyparse

    # Given keys of a few layouts, some breaking exactly one rule of the grammar, parsed
    # in blocks of any size (templates carried from block to block)
    saved = keyparse._BLOCK_ROWS
    keyparse._BLOCK_ROWS = block
    try:
        parsed = parse_keys(pa.array(keys, pa.string()))
    finally:
        keyparse._BLOCK_ROWS = saved
    found = {
        row: (kind, device, start, duration, hash_)
        for row, kind, device, start, duration, hash_ in zip(
            parsed.accepted.tolist(),
            parsed.kind.tolist(),
            parsed.device.to_pylist(),
            parsed.start_ms.tolist(),
            parsed.duration_ms.tolist(),
            parsed.hash.tolist(),
            strict=True,
        )
    }
    layouts: dict[int, int] = {}
    for row, key in enumerate(keys):
        verdict = classify_key(key)
        if row in found:
            # Then every key it accepts is valid, with the fields classify_key gives it
            assert isinstance(verdict, ValidKey), key
            segment = verdict.segment
            assert found[row] == (
                ["video", "sensor", "analysis"].index(segment.kind),
                segment.device,
                segment.start_ms,
                segment.duration_ms,
                key_hash(key),
            )
        layouts[len(key)] = layouts.get(len(key), 0) + 1
    # And with fewer keys of a length than it tries templates, no valid key is left over
    # (what is left goes to classify_key, which rejects exactly the bad ones as before)
    for row, key in enumerate(keys):
        if isinstance(classify_key(key), ValidKey) and layouts[len(key)] <= 16:
            assert row in found, key
