"""Ops runs (reconcile, rebuild) wired from settings and clients: shared by the CLI,
which runs them in one process, and the reconcile Lambda, which runs their steps
under Step Functions. The logic lives in :mod:`reconcile` and :mod:`rebuild`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from video_index.fingerprints import Partition
from video_index.ingest import Ingestor
from video_index.inventory import find_latest_manifest, iter_objects, read_manifest
from video_index.objects import ObjectReader
from video_index.rebuild import Rebuilder
from video_index.reconcile import (
    Reconciler,
    ReconcileReport,
    SourceObject,
    list_objects,
)
from video_index.services import Clients, build_store
from video_index.settings import Settings


class OperationError(RuntimeError):
    """An ops run cannot start: a missing setting, a report of another bucket..."""


@dataclass
class Ops:
    settings: Settings
    clients: Clients
    reconciler: Reconciler
    rebuilder: Rebuilder

    def objects(
        self, source: str, manifest: str | None
    ) -> tuple[Iterator[SourceObject], str | None]:
        """The objects to compare with: a listing, or an S3 Inventory report (the newest
        under the configured destination unless ``manifest`` names one)."""
        if source == "list":
            return list_objects(self.clients.s3, self.settings.bucket), None
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
        return (SourceObject(r.key, r.size or 0, r.etag or "") for r in rows), manifest

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
        key = f"reconcile/{report.run_id}/report.json"
        self.put_json(key, report.as_dict())
        return f"s3://{self.settings.reports_bucket}/{key}"

    def put_json(self, key: str, document: Any) -> dict[str, str]:
        if not self.settings.reports_bucket:
            raise OperationError("VIDEO_INDEX_REPORTS_BUCKET is not set")
        self.clients.s3.put_object(
            Bucket=self.settings.reports_bucket,
            Key=key,
            Body=json.dumps(document, default=str).encode(),
            ContentType="application/json",
        )
        return {"Bucket": self.settings.reports_bucket, "Key": key}

    def get_json(self, bucket: str, key: str) -> Any:
        body = self.clients.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        return json.loads(body)


def build_ops(settings: Settings, clients: Clients) -> Ops:
    store = build_store(settings, clients)
    objects = ObjectReader(clients.s3, settings.bucket)
    ingestor = Ingestor(store, objects)
    return Ops(
        settings=settings,
        clients=clients,
        reconciler=Reconciler(store, clients.s3, settings.bucket, ingestor),
        rebuilder=Rebuilder(store, clients.s3, settings.bucket, ingestor),
    )


def partitions_from(items: list[dict[str, Any]]) -> list[Partition]:
    return [Partition.from_dict(item) for item in items]
