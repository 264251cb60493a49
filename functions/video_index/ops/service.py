"""Ops runs (reconcile, rebuild) wired from settings and clients.

Shared by the CLI, which runs a whole job in one process, and the reconcile
Lambda, which runs its steps under Step Functions. The logic lives in
:mod:`video_index.ops.reconcile` and :mod:`video_index.ops.rebuild`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from video_index.aws.clients import Clients
from video_index.aws.objects import ListedObject, ObjectStore
from video_index.aws.store import build_store
from video_index.core.contract import reconcile_object_key
from video_index.core.errors import BadInput
from video_index.core.keys import KEY_PREFIX
from video_index.core.settings import Settings
from video_index.deletion.service import build_enforcer
from video_index.ingest.ingestor import Ingestor
from video_index.ops.inventory import find_latest_manifest, iter_objects, read_manifest
from video_index.ops.rebuild import Rebuilder
from video_index.ops.reconcile import Reconciler
from video_index.ops.report import ReconcileReport


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

    @property
    def reports(self) -> ObjectStore:
        """The reports bucket (plans, partition lists, Distributed Map results, reports)."""
        if not self.settings.reports_bucket:
            raise OperationError("VIDEO_INDEX_REPORTS_BUCKET is not set")
        return ObjectStore(self.clients.s3, self.settings.reports_bucket)

    def objects(
        self, source: str, manifest: str | None
    ) -> tuple[Iterator[ListedObject], str | None]:
        """The objects to compare with: a listing, or an S3 Inventory report (the newest
        under the configured destination unless ``manifest`` names one)."""
        if source == "list":
            return self.segments.list(KEY_PREFIX), None
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
        rows = iter_objects(self.clients.s3, report)
        return (ListedObject(r.key, r.size or 0, r.etag or "") for r in rows), manifest

    def reconcile(
        self,
        *,
        source: str,
        manifest: str | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> ReconcileReport:
        objects, manifest = self.objects(source, manifest)
        report = self.reconciler.run(
            objects,
            source=source,
            manifest=manifest,
            dry_run=dry_run,
            force=force,
            max_remove_share=self.settings.max_remove_share,
        )
        self.save_report(report)
        return report

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


def build_ops(settings: Settings, clients: Clients) -> Ops:
    store = build_store(settings, clients)
    segments = ObjectStore(clients.s3, settings.bucket)
    ingestor = Ingestor(store, segments)
    return Ops(
        settings=settings,
        clients=clients,
        segments=segments,
        reconciler=Reconciler(
            store, segments, ingestor, enforcer=build_enforcer(settings, clients)
        ),
        rebuilder=Rebuilder(store, segments, ingestor),
    )
