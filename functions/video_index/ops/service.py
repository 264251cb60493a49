"""Ops runs (reconcile, rebuild) wired from settings and clients.

Shared by the CLI, which runs a whole job in one process (the map and the reduce on
local worker threads), and the reconcile Lambda, which runs its steps under Step
Functions (the map and the reduce as Distributed Maps). The logic lives in
:mod:`video_index.ops.reconcile`, :mod:`video_index.ops.rebuild`,
:mod:`video_index.ops.planning` and :mod:`video_index.ops.mapreduce`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from video_index.aggregate.barrier import Barrier
from video_index.aggregate.store import AggregateStore
from video_index.aws.clients import Clients
from video_index.aws.objects import ListedObject, ObjectStore
from video_index.aws.store import ReadModelStore, build_store
from video_index.core.contract import rebuild_object_key, reconcile_object_key
from video_index.core.errors import BadInput
from video_index.core.keys import KEY_PREFIX
from video_index.core.layout import CONTROL_PK, RECONCILE_SK
from video_index.core.settings import Settings
from video_index.deletion.service import build_enforcer
from video_index.holds.service import HoldsHeldWindows, build_holds
from video_index.ingest.ingestor import Ingestor
from video_index.ops import planning
from video_index.ops.fingerprints import Partition
from video_index.ops.inventory import Manifest, find_latest_manifest, iter_objects, read_manifest
from video_index.ops.mapreduce import (
    LOCAL_WORKERS,
    LocalRun,
    MapContext,
    MemoryPartials,
    Partials,
    S3Partials,
    decide,
    run_locally,
)
from video_index.ops.mend import Mender
from video_index.ops.payloads import FingerprintPlan, FingerprintUnit, S3Location, UnitBatchInput
from video_index.ops.rebuild import Rebuilder
from video_index.ops.reconcile import Plan, Reconciler
from video_index.ops.report import ReconcileReport
from video_index.ops.retention_census import RetentionCensus

#: Bytes per inventory row (gzip CSV / Parquet), to estimate objects from a manifest.
_BYTES_PER_ROW = 40
#: Objects per partition at least (a camera cutting 10 s segments: 8,640 a day), to
#: estimate partitions before the first run has counted them.
_OBJECTS_PER_PARTITION = 100


class OperationError(BadInput):
    """An ops run cannot start: a missing setting, a report of another bucket..."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


@dataclass
class Ops:
    settings: Settings
    clients: Clients
    segments: ObjectStore
    reconciler: Reconciler
    rebuilder: Rebuilder
    store: ReadModelStore | None = None
    sizing: planning.Sizing = field(default_factory=planning.Sizing)
    workers: int = LOCAL_WORKERS

    @property
    def reports(self) -> ObjectStore:
        """The reports bucket (plans, partition lists, Distributed Map results, reports)."""
        if not self.settings.reports_bucket:
            raise OperationError("VIDEO_INDEX_REPORTS_BUCKET is not set")
        return ObjectStore(self.clients.s3, self.settings.reports_bucket)

    def manifest(self, source: str, manifest: str | None) -> tuple[Manifest | None, str | None]:
        """The report to compare with (``source`` inventory): the one named, or the
        newest under the configured destination; checked to be of this bucket."""
        if source == "list":
            return None, None
        if source != "inventory":
            raise OperationError(f"source must be 'inventory' or 'list', not {source!r}")
        if manifest is None:
            if not self.settings.inventory_destination:
                raise OperationError(
                    "no --manifest given and VIDEO_INDEX_INVENTORY_DESTINATION is not set "
                    "(use --source list before the first inventory report exists)"
                )
            manifest = find_latest_manifest(self.clients.s3, self.settings.inventory_destination)
        report = read_manifest(self.clients.s3, manifest)
        if report.source_bucket != self.settings.bucket:
            # Checked before any row is read: a report of another bucket is not the truth.
            raise OperationError(
                f"{manifest} is an inventory of bucket {report.source_bucket!r}, "
                f"not of {self.settings.bucket!r}"
            )
        return report, manifest

    def objects(
        self, source: str, manifest: str | None
    ) -> tuple[Iterator[ListedObject], str | None]:
        """The objects to compare with, as one stream (a listing or an inventory report)."""
        report, manifest = self.manifest(source, manifest)
        if report is None:
            return self.segments.list(KEY_PREFIX), None
        rows = iter_objects(self.clients.s3, report)
        return (ListedObject(r.key, r.size or 0, r.etag or "") for r in rows), manifest

    # -- planning ----------------------------------------------------------------------

    def plan(
        self,
        *,
        run_id: str,
        folder: str,
        source: str,
        manifest: str | None,
        generation: int | None,
        dry_run: bool = False,
        force: bool = False,
        started_at: str = "",
    ) -> tuple[FingerprintPlan, list[FingerprintUnit]]:
        """The units of a fingerprint pass over ``source`` (and the read model's
        ``generation``, unless None) and the number of reduce shards."""
        report, manifest = self.manifest(source, manifest)
        if report is not None:
            units = planning.inventory_units(report, self.sizing)
            objects = sum(f.size or 0 for f in report.files) // _BYTES_PER_ROW
        else:
            units = planning.listing_units(self.segments, self.sizing)
            objects = sum(len(u.prefixes) for u in units) * _OBJECTS_PER_PARTITION * 31
        if generation is not None:
            segments = planning.scan_segments(self._store().size_bytes(), self.sizing)
            units += planning.scan_units(segments)
        units = planning.numbered(units)
        previous = (self._store().get(CONTROL_PK, RECONCILE_SK) or {}).get("partitions_checked")
        partitions = int(previous) if previous else max(1, objects // _OBJECTS_PER_PARTITION)
        shards = planning.shard_count(len(units), partitions, self.sizing)
        empty = S3Location(Bucket="", Key="")
        plan = FingerprintPlan(
            run_id=run_id,
            folder=folder,
            source="list" if report is None else "inventory",
            manifest=manifest,
            generation=generation,
            units=empty,
            unit_count=len(units),
            shards=empty,
            shard_count=shards,
            dry_run=dry_run,
            force=force,
            started_at=started_at,
        )
        return plan, units

    def publish_plan(self, plan: FingerprintPlan, units: list[FingerprintUnit]) -> FingerprintPlan:
        """The unit and shard lists in the reports bucket, for the two Distributed Maps."""
        unit_list = self.put_json(f"{plan.folder}units.json", [u.dump() for u in units])
        shard_list = self.put_json(
            f"{plan.folder}shards.json", [{"shard": s} for s in range(plan.shard_count)]
        )
        return plan.model_copy(
            update={"units": S3Location(**unit_list), "shards": S3Location(**shard_list)}
        )

    def map_context(self, partials: Partials | None = None) -> MapContext:
        return MapContext(
            s3=self.clients.s3,
            segments=self.segments,
            store=self._store(),
            partials=partials if partials is not None else S3Partials(self.reports),
            manifest=functools.cache(lambda uri: read_manifest(self.clients.s3, uri)),
            census=self.reconciler.census() if self.reconciler.census is not None else None,
        )

    def run_plan_locally(self, plan: FingerprintPlan, units: list[FingerprintUnit]) -> LocalRun:
        """The map and the reduce of ``plan`` on local worker threads, partials in memory."""
        run = UnitBatchInput(
            folder=plan.folder,
            manifest=plan.manifest,
            generation=plan.generation,
            shard_count=plan.shard_count,
        )
        return run_locally(self.map_context(MemoryPartials()), units, run, workers=self.workers)

    # -- whole runs in this process ----------------------------------------------------------

    def reconcile(
        self,
        *,
        source: str,
        manifest: str | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> ReconcileReport:
        """Plan (map and reduce on local workers), repair and report, in this process."""
        report = self.reconciler.new_report(source=source, dry_run=dry_run, force=force)
        plan, units = self.plan(
            run_id=report.run_id,
            folder=reconcile_object_key(report.run_id, ""),
            source=source,
            manifest=manifest,
            generation=report.generation,
            dry_run=dry_run,
            force=force,
        )
        report.manifest = plan.manifest
        found = self.run_plan_locally(plan, units)
        decide(report, found.units, found.shards, max_remove_share=self.settings.max_remove_share)
        report = self.reconciler.complete(Plan(report, found.differing))
        self.save_report(report)
        return report

    def rebuild_partitions(
        self, source: str = "list", manifest: str | None = None
    ) -> list[Partition]:
        """Rebuild's partition list: the partitions holding objects, from the same plan."""
        plan, units = self.plan(
            run_id="local",
            folder=rebuild_object_key("local", ""),
            source=source,
            manifest=manifest,
            generation=None,
        )
        return self.run_plan_locally(plan, units).with_objects

    def save_report(self, report: ReconcileReport) -> str | None:
        """Write the report JSON to the reports bucket (when one is configured)."""
        if not self.settings.reports_bucket:
            return None
        key = reconcile_object_key(report.run_id, "report.json")
        self.reports.put_json(key, report.as_dict())
        return self.reports.uri(key)

    def put_json(self, key: str, document: Any) -> dict[str, str]:
        """A run object in the reports bucket; its location as Step Functions names it."""
        return self.reports.put_json(key, document)

    def get_json(self, bucket: str, key: str) -> Any:
        return ObjectStore(self.clients.s3, bucket).get_json(key)

    def _store(self) -> ReadModelStore:
        if self.store is None:
            raise OperationError("no read model configured")
        return self.store


def build_ops(
    settings: Settings,
    clients: Clients,
    *,
    pump: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.time,
) -> Ops:
    """The ops objects of a deployment. ``pump`` delivers the table's stream to the
    consumer where none runs (tests in one process); deployed, Lambda does. ``clock``
    is the instant retention is judged at (reconcile's census of held and overdue)."""
    store = build_store(settings, clients)
    segments = ObjectStore(clients.s3, settings.bucket)
    ingestor = Ingestor(store, segments)
    barrier = Barrier(store, pump=pump)
    aggregates = AggregateStore(
        clients.dynamodb, settings.table, gap_tolerance_ms=settings.gap_tolerance_ms
    )
    mender = Mender(store, aggregates, barrier, gap_tolerance_ms=settings.gap_tolerance_ms)
    rebuilder = Rebuilder(store, segments, ingestor, barrier=barrier, mender=mender)
    ops = Ops(
        settings=settings,
        clients=clients,
        segments=segments,
        reconciler=Reconciler(
            store,
            segments,
            ingestor,
            mender=mender,
            enforcer=build_enforcer(settings, clients, clock),
            census=build_census(settings, clients, clock),
        ),
        rebuilder=rebuilder,
        store=store,
    )
    rebuilder.plan_partitions = ops.rebuild_partitions
    return ops


def build_census(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> Callable[[], RetentionCensus] | None:
    """A new census per run over the holds table, if one is configured (else None: the
    report's retention counts stay 0, as nothing can be told apart)."""
    holds = build_holds(settings, clients, clock)
    if holds is None:
        return None
    windows = HoldsHeldWindows(holds)

    def census() -> RetentionCensus:
        return RetentionCensus(windows.held, int(clock() * 1000), settings.retention_days)

    return census
