"""The fingerprint pass as map and reduce (docs/operations.md, "At fleet scale").

* **map** — :func:`run_unit`: one child reads its unit (inventory slices, listing
  prefixes or a Scan segment of the read model), fingerprints it column-wise
  (:mod:`video_index.ops.columnar`), splits the partial by reduce shard and writes one
  object per shard: ``<folder>partials/<shard>/<unit>.arrow``.
* **reduce** — :func:`reduce_shard`: one child merges its shard's partials of every
  unit (sums: any order, any grouping), compares S3 with the read model and writes the
  partitions that differ (and those holding objects, for rebuild) to
  ``<folder>shards/<shard>.json``.
* **decide** — :func:`decide`: the run's report from the counts of both, the safety
  threshold, and the list of partitions to repair.

Step Functions runs the map and the reduce as Distributed Maps of the ops Lambda
(:mod:`video_index.ops.steps`); the CLI and ``video-index local`` run the same
functions on local worker threads (:func:`run_locally`), with partials in memory.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from video_index.aws.objects import ListedObject, ObjectMissing, ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.layout import generation_prefix
from video_index.ops import columnar
from video_index.ops.fingerprints import FIGURES, Fingerprint, Partition, partition_of_bucket
from video_index.ops.inventory import Manifest, ManifestFile
from video_index.ops.inventory.columns import slice_columns
from video_index.ops.payloads import FingerprintUnit, ShardCounts, UnitBatchInput, UnitCounts
from video_index.ops.report import SAMPLES, ReconcileReport
from video_index.ops.retention_census import CensusCounts, RetentionCensus

#: Rows fingerprinted at a time from a listing or a Scan.
BATCH_ROWS: Final = 65_536
#: What the read model's fingerprint reads of each item (the Scan returns nothing else:
#: the same read units, a third of the attributes to parse).
SCANNED: Final = ("pk", "sk", "present", "size", *FIGURES, "h")
#: Merge a unit's partials every so many batches (bounded memory).
MERGE_EVERY: Final = 16
#: Local workers of the in-process path (the CLI, ``video-index local``).
LOCAL_WORKERS: Final = 4


class Partials(Protocol):
    """Where map children leave partials and reducers their results."""

    def put(self, key: str, body: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...


class S3Partials:
    """Partials in the reports bucket (Step Functions)."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def put(self, key: str, body: bytes) -> None:
        self._store.put_bytes(key, body, "application/vnd.apache.arrow.stream")

    def get(self, key: str) -> bytes:
        return self._store.get_bytes(key)


class MemoryPartials:
    """Partials in this process (the in-process path)."""

    def __init__(self) -> None:
        self._objects: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, key: str, body: bytes) -> None:
        with self._lock:
            self._objects[key] = body

    def get(self, key: str) -> bytes:
        with self._lock:
            if key not in self._objects:
                raise ObjectMissing(f"no partial {key}")
            return self._objects[key]


def partial_key(folder: str, shard: int, unit: int) -> str:
    return f"{folder}partials/{shard:05d}/{unit:06d}.arrow"


def shard_key(folder: str, shard: int) -> str:
    return f"{folder}shards/{shard:05d}.json"


@dataclass
class MapContext:
    """What a map child needs: the clients' adapters and the run's manifest."""

    s3: Any
    segments: ObjectStore
    store: ReadModelStore
    partials: Partials
    manifest: Callable[[str], Manifest]
    #: Counts objects past retention, held or overdue (None: no holds table).
    census: RetentionCensus | None = None


# -- map ---------------------------------------------------------------------------------


def run_unit(context: MapContext, unit: FingerprintUnit, run: UnitBatchInput) -> UnitCounts:
    """Fingerprint one unit and write its partial, one object per shard."""
    began = time.perf_counter()
    counts = columnar.KeyCounts()
    partials: list[Any] = []
    items = 0

    def add(partial: Any, seen: columnar.KeyCounts | None = None) -> None:
        partials.append(partial)
        if seen is not None:
            counts.add(seen)
        if len(partials) >= MERGE_EVERY:
            partials[:] = [columnar.merge(partials)]

    if unit.slices:
        if run.manifest is None:
            raise ValueError("a unit with inventory slices needs the run's manifest")
        manifest = context.manifest(run.manifest)
        for piece in unit.slices:
            data_file = ManifestFile(key=piece.key, size=piece.size, md5=piece.md5)
            for batch in slice_columns(
                context.s3, manifest, data_file, part=piece.part, parts=piece.parts
            ):
                add(*columnar.fingerprint_keys(batch.keys, batch.sizes, census=context.census))
    listings = [context.segments.list(p) for p in unit.prefixes]
    listings += [context.segments.list_shallow(p) for p in unit.shallow]
    for listing in listings:
        for partial, seen in fingerprint_objects(listing, census=context.census):
            add(partial, seen)
    if context.census is not None:  # the expired rows set aside, judged now
        counts.retention.add(context.census.settle())
    if unit.scan is not None:
        if run.generation is None:
            raise ValueError("a Scan unit needs the run's generation")
        partial, items = read_model_partial(
            context.store, run.generation, unit.scan.segment, unit.scan.segments
        )
        add(partial)
    merged = columnar.merge(partials)
    for shard, rows in enumerate(columnar.split(merged, run.shard_count)):
        context.partials.put(partial_key(run.folder, shard, unit.unit), columnar.to_bytes(rows))
    return UnitCounts(
        units=1,
        objects_seen=counts.objects_seen,
        foreign_keys=counts.foreign_keys,
        invalid_keys=counts.invalid_keys,
        invalid_samples=counts.invalid_samples,
        **retention_fields(counts.retention),
        items_scanned=items,
        seconds=time.perf_counter() - began,
    )


def retention_fields(counts: CensusCounts) -> dict[str, Any]:
    """The retention census as :class:`UnitCounts` fields."""
    return {
        "past_retention_held": counts.held,
        "past_retention_overdue": counts.overdue,
        "overdue_samples": list(counts.overdue_samples),
    }


def fingerprint_objects(
    objects: Iterable[ListedObject],
    *,
    side: int = columnar.EXPECTED,
    census: RetentionCensus | None = None,
) -> Iterator[tuple[Any, columnar.KeyCounts]]:
    """Partials of a stream of listed objects, a batch at a time."""
    keys: list[str] = []
    sizes: list[int] = []
    for obj in objects:
        keys.append(obj.key)
        sizes.append(obj.size)
        if len(keys) >= BATCH_ROWS:
            yield columnar.fingerprint_keys(keys, sizes, side=side, census=census)
            keys, sizes = [], []
    if keys:
        yield columnar.fingerprint_keys(keys, sizes, side=side, census=census)


def read_model_partial(
    store: ReadModelStore, generation: int, segment: int = 0, segments: int = 1
) -> tuple[Any, int]:
    """(partial of the entries and of the bucket items, items read) of one Scan segment
    of a generation: entries fingerprinted like objects (their keys rebuilt from the
    items), bucket items summed per partition."""
    partials: list[Any] = []
    counted: dict[Partition, Fingerprint] = {}
    keys: list[str] = []
    sizes: list[int] = []
    items = 0
    for item in store.scan_prefix(
        generation_prefix(generation), segment=segment, segments=segments, attributes=SCANNED
    ):
        items += 1
        pk, sk = str(item["pk"]), str(item["sk"])
        parts = pk.split("#")
        if len(parts) == 4 and parts[1] == "seg":
            if item.get("present"):
                # v1/<kind>/<device>/YYYY/MM/DD/HH/<file>: the folders are the start's.
                keys.append(
                    f"v1/{parts[3]}/{parts[2]}/{sk[0:4]}/{sk[4:6]}/{sk[6:8]}/{sk[9:11]}/{sk}"
                )
                sizes.append(int(item["size"]))
                if len(keys) >= BATCH_ROWS:
                    partials.append(columnar.fingerprint_keys(keys, sizes, side=columnar.HELD)[0])
                    keys, sizes = [], []
        elif len(parts) == 3 and parts[1] == "bkt":
            totals: dict[str, int] = {}
            for name, value in item.items():
                if name in FIGURES or name == "h":
                    totals[name[0]] = totals.get(name[0], 0) + int(value)
            if totals:  # a bucket of nothing but arrival history holds no partition's figures
                counted.setdefault(partition_of_bucket(parts[2], sk), Fingerprint()).add(totals)
    if keys:
        partials.append(columnar.fingerprint_keys(keys, sizes, side=columnar.HELD)[0])
    partials.append(columnar.from_fingerprints(counted, side=columnar.COUNTED))
    return columnar.merge(partials), items


# -- reduce ------------------------------------------------------------------------------


def reduce_shard(
    partials: Partials, folder: str, shard: int, unit_count: int
) -> tuple[ShardCounts, columnar.Comparison]:
    """Merge one shard's partials of every unit (each must exist), compare, and write
    the shard's result."""
    merged = columnar.merge(
        columnar.from_bytes(partials.get(partial_key(folder, shard, unit)))
        for unit in range(unit_count)
    )
    comparison = columnar.compare(merged)
    partials.put(
        shard_key(folder, shard),
        json.dumps(
            {
                "differing": [p.as_dict() for p in comparison.differing],
                "with_objects": [p.as_dict() for p in comparison.with_objects],
            }
        ).encode(),
    )
    counts = ShardCounts(
        shards=1,
        partitions_checked=comparison.partitions_checked,
        partitions_differing=len(comparison.differing),
        partitions_with_objects=len(comparison.with_objects),
        read_model_entries=comparison.read_model_entries,
        would_remove=comparison.would_remove,
    )
    return counts, comparison


def shard_partitions(partials: Partials, folder: str, shards: int, which: str) -> list[Partition]:
    """``differing`` or ``with_objects`` of every shard, in partition order."""
    found: list[Partition] = []
    for shard in range(shards):
        document = json.loads(partials.get(shard_key(folder, shard)))
        found.extend(Partition.from_dict(p) for p in document[which])
    return sorted(found)


# -- decide ------------------------------------------------------------------------------


def sum_units(outputs: Iterable[UnitCounts]) -> UnitCounts:
    total = UnitCounts()
    samples: list[dict[str, str]] = []
    for one in outputs:
        total = total.model_copy(
            update={
                "units": total.units + one.units,
                "objects_seen": total.objects_seen + one.objects_seen,
                "foreign_keys": total.foreign_keys + one.foreign_keys,
                "invalid_keys": total.invalid_keys + one.invalid_keys,
                "past_retention_held": total.past_retention_held + one.past_retention_held,
                "past_retention_overdue": (
                    total.past_retention_overdue + one.past_retention_overdue
                ),
                "overdue_samples": (total.overdue_samples + one.overdue_samples)[:SAMPLES],
                "items_scanned": total.items_scanned + one.items_scanned,
                "seconds": total.seconds + one.seconds,
            }
        )
        samples = (samples + list(one.invalid_samples))[:SAMPLES]
    return total.model_copy(update={"invalid_samples": samples})


def sum_shards(outputs: Iterable[ShardCounts]) -> ShardCounts:
    total = ShardCounts()
    for one in outputs:
        total = ShardCounts(
            **{name: getattr(total, name) + getattr(one, name) for name in ShardCounts.model_fields}
        )
    return total


def decide(
    report: ReconcileReport,
    units: UnitCounts,
    shards: ShardCounts,
    *,
    max_remove_share: float,
) -> ReconcileReport:
    """Fill the report from the counts of both maps and apply the safety threshold."""
    report.objects_seen = units.objects_seen
    report.foreign_keys = units.foreign_keys
    report.invalid_keys = units.invalid_keys
    report.invalid_samples = list(units.invalid_samples)
    report.past_retention_held = units.past_retention_held
    report.past_retention_overdue = units.past_retention_overdue
    report.overdue_samples = list(units.overdue_samples)
    report.read_model_entries = shards.read_model_entries
    report.partitions_checked = shards.partitions_checked
    report.partitions_differing = shards.partitions_differing
    entries = shards.read_model_entries
    report.removal_share = shards.would_remove / entries if entries else 0.0
    if report.removal_share > max_remove_share and not report.forced:
        report.refusal = (
            f"would remove {shards.would_remove} of {entries} entries "
            f"({report.removal_share:.1%} > {max_remove_share:.0%}): is the report empty, "
            "stale or of another bucket? Re-run with --force to apply"
        )
    return report


# -- in-process --------------------------------------------------------------------------


@dataclass
class LocalRun:
    """What :func:`run_locally` found."""

    units: UnitCounts
    shards: ShardCounts
    differing: list[Partition] = field(default_factory=list)
    with_objects: list[Partition] = field(default_factory=list)
    unit_outputs: list[UnitCounts] = field(default_factory=list)


def run_locally(
    context: MapContext,
    units: Sequence[FingerprintUnit],
    run: UnitBatchInput,
    *,
    workers: int = LOCAL_WORKERS,
) -> LocalRun:
    """The map and the reduce on ``workers`` local threads (the Distributed Maps' work)."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        unit_outputs = list(pool.map(lambda u: run_unit(context, u, run), units))
        reduced = list(
            pool.map(
                lambda shard: reduce_shard(context.partials, run.folder, shard, len(units)),
                range(run.shard_count),
            )
        )
    differing = sorted(p for _, comparison in reduced for p in comparison.differing)
    with_objects = sorted(p for _, comparison in reduced for p in comparison.with_objects)
    return LocalRun(
        units=sum_units(unit_outputs),
        shards=sum_shards(counts for counts, _ in reduced),
        differing=differing,
        with_objects=with_objects,
        unit_outputs=unit_outputs,
    )
