"""Reconcile: make the read model equal to P(S3) after lost events or bugs (docs/operations.md).

1. **Fingerprints.** Stream the objects (an S3 Inventory report, or a listing
   for small buckets) into per-partition fingerprints (device × kind × UTC
   day; :mod:`video_index.ops.fingerprints`) and add up the read model's bucket
   items into the same shape. Memory grows with partitions, not objects.
2. **Repair only what differs.** For each partition whose fingerprints differ:
   LIST its S3 prefix (the truth now, not the lagging inventory) and compare it
   with the partition's segment items; every key that disagrees goes through
   :meth:`Ingestor.repair` — HEAD, then the same compare-and-set transition
   ingest uses — so an entry is never removed while its object exists, never
   added for an object that is gone, and aggregates move by exact deltas.
   Then the partition's bucket items are checked against the projection of its
   segment items and mended by conditional ADDs (aggregates corrupted without
   any entry being wrong).
3. **Safety.** A run that would remove more than ``max_remove_share`` of the
   read model's entries (an empty or wrong report) is refused unless forced;
   ``dry_run`` computes the report and writes nothing.

Reconcile reads S3 and writes only the read model (never the annotations table), with
one exception: deletion requests are enforced on the repair side (docs/deletion.md).
When the reconciler has an :class:`~video_index.deletion.enforcement.Enforcer`,
:meth:`Reconciler.repair` deletes again whatever its partition's listing shows inside
a window in force before comparing, and :meth:`Reconciler.deletion_partitions` names the
partitions a window covers so a run repairs them even when their fingerprints agree
(an object a rebuild projected before it was deleted again).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from aws_lambda_powertools import Logger

from video_index.aws.objects import ListedObject, ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import (
    KINDS,
    MAX_DURATION_MS,
    ValidKey,
    classify_key,
    format_start,
    parse_key,
)
from video_index.core.layout import (
    RECONCILE_SK,
    key_of_segment_item,
    segment_pk,
)
from video_index.core.settings import DEFAULT_MAX_REMOVE_SHARE
from video_index.core.timeunits import DAY_MS, from_epoch_ms
from video_index.deletion.enforcement import Enforcer, Verdict
from video_index.ingest.ingestor import Ingestor
from video_index.ops.columnar import KeyCounts, compare, merge
from video_index.ops.fingerprints import Partition
from video_index.ops.mapreduce import (
    MERGE_EVERY,
    decide,
    fingerprint_objects,
    read_model_partial,
    retention_fields,
)
from video_index.ops.mend import Mender
from video_index.ops.payloads import ShardCounts, UnitCounts
from video_index.ops.report import (
    SAMPLES,
    PartitionResult,
    ReconcileRefused,
    ReconcileReport,
    summary,
)
from video_index.ops.retention_census import RetentionCensus

logger = Logger(child=True)

FIX_ATTEMPTS: Final = 8


@dataclass
class Plan:
    """What step 1 found: the partitions to repair, and the report so far."""

    report: ReconcileReport
    differing: list[Partition]


class Reconciler:
    def __init__(
        self,
        store: ReadModelStore,
        objects: ObjectStore,
        ingestor: Ingestor,
        *,
        mender: Mender,
        clock: Callable[[], float] = time.time,
        enforcer: Enforcer | None = None,
        census: Callable[[], RetentionCensus] | None = None,
    ) -> None:
        self._store = store
        self._mender = mender
        self._objects = objects
        self._ingestor = ingestor
        self._clock = clock
        self._enforcer = enforcer
        #: A fresh retention census per run (its instant, its holds), if holds exist.
        self.census = census

    # -- step 1: fingerprints ------------------------------------------------------------

    def new_report(
        self,
        *,
        source: str,
        generation: int | None = None,
        manifest: str | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> ReconcileReport:
        """The report of a new run (the serving generation unless one is named)."""
        return ReconcileReport(
            run_id=f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}",
            source=source,
            generation=self._store.generations()[0] if generation is None else generation,
            dry_run=dry_run,
            forced=force,
            manifest=manifest,
            started_at=_now_iso(self._clock),
        )

    def plan(
        self,
        objects: Iterable[ListedObject],
        *,
        source: str,
        manifest: str | None = None,
        generation: int | None = None,
        dry_run: bool = False,
        force: bool = False,
        max_remove_share: float = DEFAULT_MAX_REMOVE_SHARE,
    ) -> Plan:
        """Step 1 in this process: the map's and the reduce's code
        (:mod:`video_index.ops.mapreduce`) over one stream of objects and one Scan."""
        report = self.new_report(
            source=source, generation=generation, manifest=manifest, dry_run=dry_run, force=force
        )
        partials: list[Any] = []
        seen = KeyCounts()
        census = self.census() if self.census is not None else None
        for partial, counts in fingerprint_objects(objects, census=census):
            partials.append(partial)
            seen.add(counts)
            if len(partials) >= MERGE_EVERY:
                partials = [merge(partials)]
        if census is not None:
            seen.retention.add(census.settle())
        partials.append(read_model_partial(self._store, report.generation)[0])
        comparison = compare(merge(partials))
        decide(
            report,
            UnitCounts(
                objects_seen=seen.objects_seen,
                foreign_keys=seen.foreign_keys,
                invalid_keys=seen.invalid_keys,
                invalid_samples=seen.invalid_samples,
                **retention_fields(seen.retention),
            ),
            ShardCounts(
                partitions_checked=comparison.partitions_checked,
                partitions_differing=len(comparison.differing),
                read_model_entries=comparison.read_model_entries,
                would_remove=comparison.would_remove,
            ),
            max_remove_share=max_remove_share,
        )
        return Plan(report, comparison.differing)

    # -- step 2: repair ------------------------------------------------------------------

    def repair(self, generation: int, partition: Partition, *, dry_run: bool) -> PartitionResult:
        result = PartitionResult()
        truth = self._enforced(partition, self._listed(partition), result, dry_run=dry_run)
        held = self._held(generation, partition)
        for filename in sorted(set(truth) | set(held)):
            if truth.get(filename) == held.get(filename):
                continue
            action = "add" if filename not in held else "remove" if filename not in truth else "fix"
            key = key_of_segment_item(
                segment_pk(generation, partition.device, partition.kind), filename
            )
            if len(result.samples) < SAMPLES:
                result.samples.append({"action": action, "key": key})
            if action == "add":
                result.added += 1
            elif action == "remove":
                result.removed += 1
            else:
                result.fixed += 1
            if not dry_run:
                self._ingestor.repair(parse_key(key), [generation])
        result.aggregates_fixed = self._mender.mend(generation, partition, dry_run=dry_run)
        return result

    def _listed(self, partition: Partition) -> dict[str, tuple[int, str]]:
        truth: dict[str, tuple[int, str]] = {}
        for obj in self._objects.list(partition.prefix):
            if isinstance(classify_key(obj.key), ValidKey):
                truth[obj.key.rsplit("/", 1)[1]] = (obj.size, obj.etag)
        return truth

    def _enforced(
        self,
        partition: Partition,
        truth: dict[str, tuple[int, str]],
        result: PartitionResult,
        *,
        dry_run: bool,
    ) -> dict[str, tuple[int, str]]:
        """The listing without what a deletion window covers and no hold keeps (deleted
        again unless dry); what a hold keeps stays, counted as held."""
        if self._enforcer is None or not truth:
            return truth
        self._enforcer.start_batch()  # the windows as they are now
        kept = {}
        for filename, listed in truth.items():
            segment = parse_key(
                key_of_segment_item(segment_pk(0, partition.device, partition.kind), filename)
            )
            verdict = self._enforcer.enforce(segment, by="reconcile", dry_run=dry_run)
            if verdict is Verdict.ENFORCED:
                result.enforced += 1
                continue
            result.held += verdict is Verdict.HELD
            kept[filename] = listed
        return kept

    def deletion_partitions(self) -> set[Partition]:
        """The partitions that windows in force cover (repaired every run, so what a window
        covers is deleted again even where the fingerprints agree)."""
        if self._enforcer is None:
            return set()
        partitions: set[Partition] = set()
        for window in self._enforcer.all_windows():
            for kind in (window.kind,) if window.kind else KINDS:
                day = max(window.from_ms - MAX_DURATION_MS[kind] + 1, 0) // DAY_MS * DAY_MS
                while day < window.to_ms:
                    partitions.add(Partition(window.device, kind, from_epoch_ms(day).date()))
                    day += DAY_MS
        return partitions

    def _segments(
        self, generation: int, partition: Partition, start_ms: int, end_ms: int
    ) -> Iterator[dict[str, Any]]:
        low = format_start(from_epoch_ms(start_ms))
        high = format_start(from_epoch_ms(end_ms - 1)) + "~"
        pk = segment_pk(generation, partition.device, partition.kind)
        for item in self._store.query_range(pk, low, high):
            if item.get("present"):
                yield item

    def _held(self, generation: int, partition: Partition) -> dict[str, tuple[int, str]]:
        start = partition.start_ms
        return {
            str(item["sk"]): (int(item["size"]), str(item["etag"]))
            for item in self._segments(generation, partition, start, start + DAY_MS)
        }

    def record(self, report: ReconcileReport) -> None:
        """Keep the last run's summary in the control item (``video-index status``)."""
        self._store.put_control(RECONCILE_SK, summary(report))

    # -- whole runs ----------------------------------------------------------------------

    def run(
        self,
        objects: Iterable[ListedObject],
        *,
        source: str,
        manifest: str | None = None,
        generation: int | None = None,
        dry_run: bool = False,
        force: bool = False,
        max_remove_share: float = DEFAULT_MAX_REMOVE_SHARE,
    ) -> ReconcileReport:
        """Plan and repair in one process (the CLI, and the Lambda for moderate buckets)."""
        plan = self.plan(
            objects,
            source=source,
            manifest=manifest,
            generation=generation,
            dry_run=dry_run,
            force=force,
            max_remove_share=max_remove_share,
        )
        return self.complete(plan)

    def complete(self, plan: Plan) -> ReconcileReport:
        """Step 2 in this process: repair what differs (unless refused), record the run."""
        report = plan.report
        if report.refusal is None:
            # Partitions that deletion windows cover are repaired (enforced) every run.
            for partition in sorted(set(plan.differing) | self.deletion_partitions()):
                report.add(self.repair(report.generation, partition, dry_run=report.dry_run))
        report.finished_at = _now_iso(self._clock)
        if not report.dry_run and report.refusal is None:
            self.record(report)
        if report.refusal is not None:
            raise ReconcileRefused(report)
        return report


def _now_iso(clock: Callable[[], float]) -> str:
    return datetime.fromtimestamp(clock(), tz=UTC).isoformat(timespec="seconds")
