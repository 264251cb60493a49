"""The bulk Lambda's steps under Step Functions, dispatched on ``action`` (docs/bulk.md).

* restore: ``bulk-restore-plan`` (the units, written to the reports bucket) ->
  Distributed Map of ``bulk-restore-units`` -> ``bulk-restore-report`` (the map's
  results read back: copied, identical, withheld, held, and the units that failed);
* deletion: ``bulk-delete-plan`` (one deletion request per device and ≤ 31 days) ->
  Distributed Map of ``bulk-delete-units`` (each unit runs its job) ->
  ``bulk-delete-report``.

The map's child outputs are read from its ``ResultWriter`` manifest (``SUCCEEDED``
and ``FAILED`` result files), which is the run's completion report.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger

from video_index.aws.objects import ObjectStore
from video_index.bulk import deletion_units, restore_units
from video_index.bulk.names import (
    ACTION_DELETE_PLAN,
    ACTION_DELETE_REPORT,
    ACTION_DELETE_UNITS,
    ACTION_RESTORE_PLAN,
    ACTION_RESTORE_REPORT,
    ACTION_RESTORE_UNITS,
    DELETE_REPORTS_PREFIX,
    RESTORE_REPORTS_PREFIX,
)
from video_index.bulk.payloads import (
    DeleteBatch,
    DeleteCounts,
    DeleteInput,
    DeletePlan,
    ReportInput,
    RestoreBatch,
    RestoreCounts,
    RestoreInput,
    RestorePlan,
)
from video_index.core.errors import BadInput
from video_index.deletion.enforcement import Enforcer
from video_index.deletion.jobs import DeletionJobs
from video_index.ops.inventory import Manifest, read_manifest
from video_index.ops.payloads import S3Location
from video_index.ops.planning import MIB, Sizing

RESTORE_UNIT_BYTES = 8 * MIB

logger = Logger(child=True)


@dataclass
class Bulk:
    """What the steps work with (built from settings and clients by :mod:`.service`)."""

    s3: Any
    segments: ObjectStore
    reports: ObjectStore
    jobs: Callable[[], DeletionJobs]
    #: The windows in force and the holds (what restore units withhold, or copy back).
    enforcer: Callable[[], Enforcer | None]
    #: Restore units copy at ~10^3 objects/s, not fingerprint at ~10^6: a unit is one
    #: device prefix, or 8 MiB of compressed inventory (~10^5 rows), minutes of copying.
    sizing: Sizing = field(
        default_factory=lambda: Sizing(unit_bytes=RESTORE_UNIT_BYTES, prefixes_per_unit=1)
    )
    workers: int = 32

    def manifest(self, uri: str) -> Manifest:
        return _read_manifest(self.s3, uri)


@functools.cache
def _read_manifest(s3: Any, uri: str) -> Manifest:
    return read_manifest(s3, uri)


def _run_id(given: str | None) -> str:
    return given or f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


# -- restore -------------------------------------------------------------------------------


def restore_plan(bulk: Bulk, event: dict[str, Any]) -> dict[str, Any]:
    request: RestoreInput = RestoreInput.parse(event)
    if request.source_bucket == bulk.segments.bucket:
        raise BadInput("source_bucket", "is the segment bucket itself")
    run_id = _run_id(request.run_id)
    manifest = None
    if request.manifest is not None:
        manifest = read_manifest(
            bulk.s3, request.manifest, expect_source_bucket=request.source_bucket
        )
    units = restore_units.plan_units(
        ObjectStore(bulk.s3, request.source_bucket), manifest, bulk.sizing
    )
    where = bulk.reports.put_json(
        f"{RESTORE_REPORTS_PREFIX}{run_id}/units.json", [u.dump() for u in units]
    )
    return RestorePlan(
        run_id=run_id,
        source_bucket=request.source_bucket,
        manifest=request.manifest,
        dry_run=request.dry_run,
        units=S3Location(**where),
        unit_count=len(units),
    ).dump()


def restore_units_step(bulk: Bulk, event: dict[str, Any]) -> dict[str, Any]:
    batch: RestoreBatch = RestoreBatch.parse(event)
    context = restore_units.UnitContext(
        s3=bulk.s3,
        target=bulk.segments,
        enforcer=bulk.enforcer,
        manifest=bulk.manifest,
        workers=bulk.workers,
    )
    total = RestoreCounts()
    for unit in batch.Items:
        total = total.plus(restore_units.restore_unit(context, unit, batch.BatchInput))
    return total.dump()


def restore_report(bulk: Bulk, event: dict[str, Any]) -> dict[str, Any]:
    request: ReportInput = ReportInput.parse(event)
    succeeded, failed = map_results(bulk.s3, request.results)
    total = RestoreCounts()
    for output in succeeded:
        total = total.plus(RestoreCounts.parse(output))
    report = {"run_id": request.run_id, **total.dump(), **_failures(failed)}
    bulk.reports.put_json(f"{RESTORE_REPORTS_PREFIX}{request.run_id}/report.json", report)
    logger.info("bulk restore report", extra=report)
    return report


# -- deletion ------------------------------------------------------------------------------


def delete_plan(bulk: Bulk, event: dict[str, Any]) -> dict[str, Any]:
    """One request per device and slice, recorded once: a retried plan (the same
    ``run_id``) finds its unit list and records nothing again."""
    request: DeleteInput = DeleteInput.parse(event)
    run_id = _run_id(request.run_id)
    key = f"{DELETE_REPORTS_PREFIX}{run_id}/units.json"
    existing = bulk.reports.get_optional_bytes(key)
    if existing is not None:
        count = len(json.loads(existing))
        return DeletePlan(
            run_id=run_id, units=S3Location(Bucket=bulk.reports.bucket, Key=key), unit_count=count
        ).dump()
    units = deletion_units.plan_units(bulk.jobs(), request)
    where = bulk.reports.put_json(key, [u.dump() for u in units])
    return DeletePlan(run_id=run_id, units=S3Location(**where), unit_count=len(units)).dump()


def delete_units_step(
    bulk: Bulk, event: dict[str, Any], time_left: Callable[[], float] | None = None
) -> dict[str, Any]:
    batch: DeleteBatch = DeleteBatch.parse(event)
    jobs = bulk.jobs()
    total = DeleteCounts()
    for unit in batch.Items:
        total = total.plus(deletion_units.run_unit(jobs, unit, time_left))
    return total.dump()


def delete_report(bulk: Bulk, event: dict[str, Any]) -> dict[str, Any]:
    request: ReportInput = ReportInput.parse(event)
    succeeded, failed = map_results(bulk.s3, request.results)
    total = DeleteCounts()
    for output in succeeded:
        total = total.plus(DeleteCounts.parse(output))
    report = {"run_id": request.run_id, **total.dump(), **_failures(failed)}
    bulk.reports.put_json(f"{DELETE_REPORTS_PREFIX}{request.run_id}/report.json", report)
    logger.info("bulk deletion report", extra=report)
    return report


# -- plumbing ------------------------------------------------------------------------------

STEPS: dict[str, Callable[[Bulk, dict[str, Any]], dict[str, Any]]] = {
    ACTION_RESTORE_PLAN: restore_plan,
    ACTION_RESTORE_UNITS: restore_units_step,
    ACTION_RESTORE_REPORT: restore_report,
    ACTION_DELETE_PLAN: delete_plan,
    ACTION_DELETE_UNITS: delete_units_step,
    ACTION_DELETE_REPORT: delete_report,
}


def dispatch(
    bulk: Bulk, event: dict[str, Any], time_left: Callable[[], float] | None = None
) -> dict[str, Any]:
    action = str(event.get("action"))
    if action == ACTION_DELETE_UNITS:
        return delete_units_step(bulk, event, time_left)
    step = STEPS.get(action)
    if step is None:
        raise BadInput("action", f"unknown action {action!r}; expected one of {', '.join(STEPS)}")
    began = time.perf_counter()
    result = step(bulk, event)
    logger.info("bulk step", extra={"action": action, "seconds": time.perf_counter() - began})
    return result


def map_results(
    s3: Any, results: S3Location | list[Any] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(outputs of the children that succeeded, entries of those that failed) of a
    Distributed Map, from its ``ResultWriter`` manifest."""
    if isinstance(results, list):
        return [_payload(r) for r in results], []
    if results is None:
        return [], []
    manifest = ObjectStore(s3, results.Bucket).get_json(results.Key)
    bucket = manifest.get("DestinationBucket", results.Bucket)
    files = manifest.get("ResultFiles", {})
    succeeded = [
        _payload(child.get("Output"))
        for entry in files.get("SUCCEEDED", [])
        for child in ObjectStore(s3, bucket).get_json(entry["Key"])
    ]
    failed = [
        child
        for entry in files.get("FAILED", [])
        for child in ObjectStore(s3, bucket).get_json(entry["Key"])
    ]
    return succeeded, failed


def _failures(failed: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "failed_batches": len(failed),
        "failures": [
            {
                "input": str(f.get("Input", ""))[:500],
                "error": f.get("Error"),
                "cause": str(f.get("Cause", ""))[:500],
            }
            for f in failed[:20]
        ],
    }


def _payload(output: Any) -> dict[str, Any]:
    if isinstance(output, str):
        output = json.loads(output)
    if isinstance(output, dict) and isinstance(output.get("Payload"), dict):
        output = output["Payload"]
    return output if isinstance(output, dict) else {}
