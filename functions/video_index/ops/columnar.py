"""Partition fingerprints computed column-wise (Arrow compute and numpy, no Python per row).

The same figures as :mod:`video_index.ops.fingerprints` — per partition (device × kind
× UTC day) the sums of ``n``, ``b``, ``d``, ``c`` and ``h`` (mod 2^64) that ingest
keeps in the bucket items — but for a whole batch of keys at once:

* :func:`fingerprint_keys` parses a batch of keys with one regular expression, checks
  what the key grammar demands (real dates, folders agreeing with the start, duration
  and extension per kind) on the columns, derives the hour/quarter figures and the
  coverage carried into the next UTC day, hashes the keys (:func:`key_hashes`) and
  groups by partition. A key the columns do not accept goes to
  :func:`~video_index.core.keys.classify_key` (the one authority on the grammar), so
  the result is exactly the per-object projection's; only invalid and foreign keys
  (rare) cost Python.
* A *partial* is such a table: partial fingerprints of a part of the objects (a data
  file, a listing, a Scan segment). Partials add up: :func:`merge` of any partials in
  any order and grouping is the fingerprint of all their objects.
* :func:`compare` finds the partitions whose fingerprints differ.

pyarrow and numpy are imported when first needed, not at import time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Final

from video_index.core.keyhash import key_hashes
from video_index.core.keys import KINDS, ForeignKey, InvalidKey, ValidKey, classify_key
from video_index.core.timeunits import DAY_MS, QUARTER_MS
from video_index.ops.fingerprints import Fingerprint, Partition, add_object
from video_index.ops.keyparse import parse_keys
from video_index.ops.report import SAMPLES
from video_index.ops.retention_census import CensusCounts, RetentionCensus, observe_batch

#: Partition columns, then figure columns, of every partial.
KEYS: Final = ("device", "kind", "day")
SUMS: Final = ("n", "b", "d", "c", "h")
#: Which side of the comparison a partial row belongs to.
EXPECTED: Final = 0  # S3 (an inventory report or a listing)
HELD: Final = 1  # the read model's segment items
COUNTED: Final = 2  # the read model's bucket items
SIDES: Final = (EXPECTED, HELD, COUNTED)
_EPOCH_DAY: Final = date(1970, 1, 1)
#: Added to day numbers (days since 1970, negative before) to keep them in 32 bits.
_DAY_BIAS: Final = 1 << 31

_KINDS: Final = KINDS


def schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("side", pa.int8()),
            ("device", pa.string()),
            ("kind", pa.string()),
            ("day", pa.int32()),
            ("n", pa.int64()),
            ("b", pa.int64()),
            ("d", pa.int64()),
            ("c", pa.int64()),
            ("h", pa.uint64()),
        ]
    )


def empty() -> Any:
    return schema().empty_table()


@dataclass
class KeyCounts:
    """What a pass saw besides fingerprints: objects, foreign and invalid keys."""

    objects_seen: int = 0
    foreign_keys: int = 0
    invalid_keys: int = 0
    invalid_samples: list[dict[str, str]] = field(default_factory=list)
    #: Objects past retention, held or overdue (with a census: docs/holds.md).
    retention: CensusCounts = field(default_factory=CensusCounts)

    def add(self, other: KeyCounts) -> None:
        self.objects_seen += other.objects_seen
        self.foreign_keys += other.foreign_keys
        self.invalid_keys += other.invalid_keys
        self.invalid_samples = (self.invalid_samples + other.invalid_samples)[:SAMPLES]
        self.retention.add(other.retention)


# long: one pass over an Arrow batch, each step narrowing the same masks of the same keys
def fingerprint_keys(
    keys: Any, sizes: Any | None, *, side: int = EXPECTED, census: RetentionCensus | None = None
) -> tuple[Any, KeyCounts]:
    """(partial, counts) of a batch of present objects: ``keys`` an Arrow string array
    without nulls, ``sizes`` integers (null or absent: 0); with a ``census``, the objects
    past retention are set aside for it (its ``settle`` counts them, held or overdue)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = _as_array(keys).cast(pa.string())
    count = len(keys)
    sizes = (
        pa.array(np.zeros(count, np.int64))
        if sizes is None
        else pc.fill_null(_as_array(sizes).cast(pa.int64()), 0)
    )
    counts = KeyCounts(objects_seen=count)
    parsed = parse_keys(keys)
    handled = np.zeros(count, bool)
    handled[parsed.accepted] = True
    # Keys outside v1/ are foreign (never indexed) unless they name another key format
    # version (invalid); every other key the columns did not accept is classified the
    # per-object way.
    v1 = pc.starts_with(keys, "v1/").to_numpy(zero_copy_only=False)
    outside = np.flatnonzero(~handled & ~v1)
    if len(outside):
        other_version = pc.match_substring_regex(
            keys.take(pa.array(outside)), r"^v[0-9]+/"
        ).to_numpy(zero_copy_only=False)
        counts.foreign_keys += int((~other_version).sum())
        handled[outside[~other_version]] = True  # counted: not classified again
    rejected = np.flatnonzero(~handled)
    python_valid: dict[Partition, Fingerprint] = {}
    if len(rejected):
        rejected_keys = keys.take(pa.array(rejected)).to_pylist()
        rejected_sizes = sizes.take(pa.array(rejected)).to_pylist()
        for key, size in zip(rejected_keys, rejected_sizes, strict=True):
            match classify_key(key):
                case ValidKey(segment=segment):
                    add_object(python_valid, segment, int(size))
                    if census is not None:
                        census.observe(segment, key, counts.retention)
                case InvalidKey(reason=reason):
                    counts.invalid_keys += 1
                    if len(counts.invalid_samples) < SAMPLES:
                        counts.invalid_samples.append({"key": key, "reason": reason})
                case ForeignKey():
                    counts.foreign_keys += 1

    start_ms, duration = parsed.start_ms, parsed.duration_ms
    is_video = parsed.kind == 0
    end_ms = start_ms + duration
    if census is not None:
        observe_batch(census, keys, parsed, end_ms)
    days = np.floor_divide(start_ms, DAY_MS)
    first_boundary = start_ms - np.mod(start_ms, QUARTER_MS) + QUARTER_MS
    day_end = (days + 1) * DAY_MS
    coverage = np.where(is_video, _boundaries(first_boundary, end_ms), 0)
    in_day = np.where(is_video, _boundaries(first_boundary, np.minimum(end_ms, day_end)), 0)
    carried = coverage - in_day
    # Sum per partition on one integer code (device index, kind, day), then decode the
    # few grouped rows: grouping on strings costs more than the rest of the batch.
    device_index = parsed.device_index
    code = ((device_index * 4 + parsed.kind) << 32) + (days + _DAY_BIAS)
    sums = {
        "n": np.ones(len(code), np.int64),
        "b": sizes.take(pa.array(parsed.accepted)).to_numpy(zero_copy_only=False),
        "d": duration,
        "c": in_day.astype(np.int64),
        "h": parsed.hash,
    }
    carry_rows = np.flatnonzero(carried)
    carry = {name: np.zeros(len(carry_rows), values.dtype) for name, values in sums.items()}
    carry["c"] = carried[carry_rows].astype(np.int64)
    carry_code = code[carry_rows] + 1
    code, sums = _summed_runs(code, sums)
    grouped = (
        pa.table(
            {
                "code": pa.array(np.concatenate([code, carry_code])),
                **{name: pa.array(np.concatenate([sums[name], carry[name]])) for name in SUMS},
            }
        )
        .group_by("code", use_threads=False)
        .aggregate([(name, "sum") for name in SUMS])
    )
    codes = grouped["code"].to_numpy()
    tables = [
        pa.table(
            {
                "side": pa.array(np.full(len(codes), side, np.int8)),
                "device": parsed.devices.take(pa.array(codes >> 34)),
                "kind": pa.array(_KINDS, pa.string()).take(pa.array((codes >> 32) & 3)),
                "day": pa.array(((codes & 0xFFFFFFFF) - _DAY_BIAS).astype(np.int32)),
                **{name: grouped[f"{name}_sum"] for name in SUMS},
            },
            schema=schema(),
        )
    ]
    if python_valid:
        tables.append(from_fingerprints(python_valid, side=side))
    return merge(tables), counts


def _as_array(values: Any) -> Any:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    return pa.array(values)


def _summed_runs(code: Any, sums: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Rows of equal ``code`` next to each other summed into one (keys come in key
    order, so a partition's keys are mostly one run): what is left to group is a few
    rows per partition. Rows come back as they are when runs are short."""
    import numpy as np

    if len(code) < 2:
        return code, sums
    change = np.empty(len(code), bool)
    change[0] = True
    np.not_equal(code[1:], code[:-1], out=change[1:])
    heads = np.flatnonzero(change)
    if len(heads) * 2 > len(code):
        return code, sums
    with np.errstate(over="ignore"):
        return code[heads], {name: np.add.reduceat(v, heads) for name, v in sums.items()}


def _boundaries(first: Any, end: Any) -> Any:
    """How many quarter starts ``first, first + Q, ...`` lie before ``end``."""
    import numpy as np

    return np.where(end > first, (end - 1 - first) // QUARTER_MS + 1, 0)


def merge(partials: Iterable[Any]) -> Any:
    """One row per (side, partition): the sums of every partial given (h mod 2^64)."""
    import pyarrow as pa

    tables = [table for table in partials if table.num_rows]
    if not tables:
        return empty()
    table = pa.concat_tables(tables)
    grouped = table.group_by(["side", *KEYS], use_threads=False).aggregate(
        [(name, "sum") for name in SUMS]
    )
    return grouped.rename_columns([*(["side", *KEYS]), *SUMS]).select(schema().names).cast(schema())


def from_fingerprints(fingerprints: dict[Partition, Fingerprint], *, side: int) -> Any:
    """A partial holding ``fingerprints`` (per-object code, tests, a few odd keys)."""
    import pyarrow as pa

    rows = sorted(fingerprints.items())
    return pa.table(
        {
            "side": pa.array([side] * len(rows), pa.int8()),
            "device": [p.device for p, _ in rows],
            "kind": [p.kind for p, _ in rows],
            "day": pa.array([(p.day - _EPOCH_DAY).days for p, _ in rows], pa.int32()),
            **{
                name: pa.array(
                    [f.figures.get(name, 0) for _, f in rows],
                    pa.uint64() if name == "h" else pa.int64(),
                )
                for name in SUMS
            },
        },
        schema=schema(),
    )


def to_fingerprints(partial: Any, *, side: int) -> dict[Partition, Fingerprint]:
    """The fingerprints of one side of a partial, as the per-object code holds them."""
    out: dict[Partition, Fingerprint] = {}
    for row in partial.to_pylist():
        if row["side"] != side:
            continue
        partition = Partition(row["device"], row["kind"], _EPOCH_DAY + timedelta(days=row["day"]))
        fingerprint = out.setdefault(partition, Fingerprint())
        fingerprint.add({name: int(row[name]) for name in SUMS})
    return out


def partition_of(device: str, kind: str, day: int) -> Partition:
    return Partition(device, kind, _EPOCH_DAY + timedelta(days=day))


@dataclass
class Comparison:
    """What comparing the three sides of a merged partial found."""

    differing: list[Partition]
    #: Partitions holding objects in S3 (rebuild's partition list).
    with_objects: list[Partition]
    partitions_checked: int
    read_model_entries: int
    #: Entries the repair would remove at most: what the read model holds beyond S3.
    would_remove: int


def compare(merged: Any) -> Comparison:
    """Partitions whose S3 fingerprint differs from their entries', or whose entries'
    differs from their bucket items' (a merged partial of all three sides)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    sides = {
        side: merged.filter(pc.equal(merged["side"], side))
        .drop_columns(["side"])
        .rename_columns([*KEYS, *(f"{name}{side}" for name in SUMS)])
        for side in SIDES
    }
    joined = sides[EXPECTED].join(sides[HELD], list(KEYS), join_type="full outer")
    joined = joined.join(sides[COUNTED], list(KEYS), join_type="full outer")
    if joined.num_rows == 0:
        return Comparison([], [], 0, 0, 0)

    def column(name: str, side: int) -> Any:
        zero = pa.scalar(0, pa.uint64() if name == "h" else pa.int64())
        return pc.fill_null(joined[f"{name}{side}"], zero).to_numpy()

    differs = np.zeros(joined.num_rows, bool)
    for name in SUMS:
        held = column(name, HELD)
        differs |= (column(name, EXPECTED) != held) | (held != column(name, COUNTED))
    expected_n, held_n = column("n", EXPECTED), column("n", HELD)
    devices = joined["device"].to_pylist()
    kinds = joined["kind"].to_pylist()
    days = joined["day"].to_pylist()
    differing = sorted(partition_of(devices[i], kinds[i], days[i]) for i in np.flatnonzero(differs))
    with_objects = sorted(
        partition_of(devices[i], kinds[i], days[i]) for i in np.flatnonzero(expected_n > 0)
    )
    return Comparison(
        differing=differing,
        with_objects=with_objects,
        partitions_checked=joined.num_rows,
        read_model_entries=int(held_n.sum()),
        would_remove=int(np.maximum(held_n - expected_n, 0)[differs].sum()),
    )


def shard_of(partial: Any, shards: int) -> Any:
    """The reduce shard (0 ≤ shard < ``shards``) of each row: a hash of its partition."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if shards <= 1 or partial.num_rows == 0:
        return np.zeros(partial.num_rows, np.int64)
    names = pc.binary_join_element_wise(
        partial["device"], partial["kind"], pc.cast(partial["day"], pa.string()), "#"
    )
    return (key_hashes(_as_array(names)) % np.uint64(shards)).astype(np.int64)


def split(partial: Any, shards: int) -> list[Any]:
    """The rows of ``partial`` per reduce shard."""
    import numpy as np
    import pyarrow as pa

    if shards <= 1:
        return [partial]
    shard = shard_of(partial, shards)
    order = np.argsort(shard, kind="stable")
    ordered = partial.take(pa.array(order))
    edges = np.searchsorted(shard[order], np.arange(shards + 1))
    return [ordered.slice(int(edges[i]), int(edges[i + 1] - edges[i])) for i in range(shards)]


def to_bytes(partial: Any) -> bytes:
    """An Arrow IPC stream (zstd), the form partials travel in between map and reduce."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, schema(), options=options) as writer:
        writer.write_table(partial)
    return bytes(sink.getvalue().to_pybytes())


def from_bytes(body: bytes) -> Any:
    import pyarrow as pa

    with pa.ipc.open_stream(pa.py_buffer(body)) as reader:
        return reader.read_all().cast(schema())
