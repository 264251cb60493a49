"""The steps of reconcile and rebuild as the ops Lambda runs them under Step Functions,
dispatched on ``action``: the plan, the fingerprint map and the reduce map (Distributed
Maps over units and shards, :mod:`video_index.ops.mapreduce`), the decision, and the
repair or rebuild map over the partition list.

Every step calls the same :class:`~video_index.ops.reconcile.Reconciler` /
:class:`~video_index.ops.rebuild.Rebuilder` code the CLI runs in one process; only
the hand-over between steps (partition lists and results in the reports bucket)
is specific to running at scale. Inputs and outputs are the typed payloads of
:mod:`video_index.ops.payloads`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger

from video_index.core.contract import (
    ACTION_FINGERPRINT_REDUCE,
    ACTION_FINGERPRINT_UNITS,
    ACTION_REBUILD_ABORT,
    ACTION_REBUILD_DROP,
    ACTION_REBUILD_FINISH,
    ACTION_REBUILD_PARTITIONS,
    ACTION_REBUILD_PLAN,
    ACTION_REBUILD_START,
    ACTION_RECONCILE,
    ACTION_RECONCILE_DECIDE,
    ACTION_RECONCILE_PARTITIONS,
    ACTION_RECONCILE_PLAN,
    ACTION_RECONCILE_REPORT,
    rebuild_object_key,
    reconcile_object_key,
)
from video_index.ops.mapreduce import (
    S3Partials,
    decide,
    reduce_shard,
    run_unit,
    shard_partitions,
    sum_shards,
    sum_units,
)
from video_index.ops.payloads import (
    DecideInput,
    PlanOutput,
    RebuildAbortInput,
    RebuildBatch,
    RebuildDropInput,
    RebuildFinishInput,
    RebuildInput,
    RebuildStartOutput,
    ReconcileBatch,
    ReconcileInput,
    RepairCounts,
    ReportInput,
    S3Location,
    ShardBatch,
    ShardCounts,
    UnitBatch,
    UnitCounts,
)
from video_index.ops.rebuild import DEFAULT_SETTLE_SECONDS
from video_index.ops.report import PartitionResult, ReconcileReport
from video_index.ops.service import OperationError, Ops

logger = Logger(child=True)

Step = Callable[[Ops, dict[str, Any]], dict[str, Any]]


def reconcile(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The whole reconcile in one invocation (small buckets, or ``--source list``)."""
    request: ReconcileInput = ReconcileInput.parse(event)
    report = ops.reconcile(
        source=request.source,
        manifest=request.manifest_uri(),
        dry_run=request.dry_run,
        force=request.force,
    )
    return report.as_dict()


def reconcile_plan(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The units of the fingerprint map and the shards of the reduce (lists in S3)."""
    request: ReconcileInput = ReconcileInput.parse(event)
    report = ops.reconciler.new_report(
        source=request.source, dry_run=request.dry_run, force=request.force
    )
    plan, units = ops.plan(
        run_id=report.run_id,
        folder=reconcile_object_key(report.run_id, ""),
        source=request.source,
        manifest=request.manifest_uri(),
        generation=report.generation,
        dry_run=request.dry_run,
        force=request.force,
        started_at=report.started_at,
    )
    return ops.publish_plan(plan, units).dump()


def fingerprint_units(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """One child of the fingerprint map: its units' partials, one object per shard."""
    batch: UnitBatch = UnitBatch.parse(event)
    context = ops.map_context()
    return sum_units(run_unit(context, unit, batch.BatchInput) for unit in batch.Items).dump()


def fingerprint_reduce(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """One child of the reduce map: its shards merged and compared."""
    batch: ShardBatch = ShardBatch.parse(event)
    partials = S3Partials(ops.reports)
    return sum_shards(
        reduce_shard(partials, batch.BatchInput.folder, item.shard, batch.BatchInput.unit_count)[0]
        for item in batch.Items
    ).dump()


def _map_totals(ops: Ops, request: DecideInput) -> tuple[UnitCounts, ShardCounts]:
    """Both maps' outputs summed; every unit and every shard must have reported."""
    plan = request.plan
    units = sum_units(UnitCounts.parse(o) for o in _map_outputs(ops, request.unit_results))
    shards = sum_shards(ShardCounts.parse(o) for o in _map_outputs(ops, request.shard_results))
    if units.units != plan.unit_count or shards.shards != plan.shard_count:
        raise OperationError(
            f"run {plan.run_id}: {units.units} of {plan.unit_count} units and "
            f"{shards.shards} of {plan.shard_count} shards reported; not deciding on part "
            "of the objects"
        )
    return units, shards


def reconcile_decide(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The report so far, the safety threshold, and the partitions to repair."""
    request: DecideInput = DecideInput.parse(event)
    plan = request.plan
    units, shards = _map_totals(ops, request)
    report = ReconcileReport(
        run_id=plan.run_id,
        source=plan.source,
        generation=plan.generation if plan.generation is not None else 0,
        dry_run=plan.dry_run,
        forced=plan.force,
        manifest=plan.manifest,
        started_at=plan.started_at,
    )
    decide(report, units, shards, max_remove_share=ops.settings.max_remove_share)
    ops.put_json(reconcile_object_key(plan.run_id, "plan.json"), report.as_dict())
    if report.refusal is not None:
        ops.save_report(report)
        raise OperationError(report.refusal)
    differing = shard_partitions(
        S3Partials(ops.reports), plan.folder, plan.shard_count, "differing"
    )
    # Partitions that deletion windows cover are repaired (enforced) every run.
    to_repair = sorted(set(differing) | ops.reconciler.deletion_partitions())
    partitions = ops.put_json(
        reconcile_object_key(plan.run_id, "partitions.json"), [p.as_dict() for p in to_repair]
    )
    return PlanOutput(
        run_id=plan.run_id,
        generation=report.generation,
        partitions=S3Location(**partitions),
        to_repair=len(to_repair),
        dry_run=plan.dry_run,
    ).dump()


def reconcile_partitions(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    batch: ReconcileBatch = ReconcileBatch.parse(event)
    generation = batch.BatchInput.generation
    if generation is None:
        generation = ops.rebuilder.status().current
    merged = PartitionResult()
    repaired = 0
    for item in batch.Items:
        result = ops.reconciler.repair(
            generation, item.partition(), dry_run=batch.BatchInput.dry_run
        )
        repaired += 1 if result.changed else 0
        merged.merge(result)
    return RepairCounts(
        added=merged.added,
        removed=merged.removed,
        fixed=merged.fixed,
        aggregates_fixed=merged.aggregates_fixed,
        samples=merged.samples,
        repaired=repaired,
        enforced=merged.enforced,
        held=merged.held,
    ).dump()


def reconcile_report(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    request: ReportInput = ReportInput.parse(event)
    plan = ops.reports.get_json(reconcile_object_key(request.run_id, "plan.json"))
    report = ReconcileReport(**plan)
    for output in _map_outputs(ops, request.results):
        counts: RepairCounts = RepairCounts.parse(output)
        result = PartitionResult(
            added=counts.added,
            removed=counts.removed,
            fixed=counts.fixed,
            aggregates_fixed=counts.aggregates_fixed,
            samples=list(counts.samples),
            enforced=counts.enforced,
            held=counts.held,
        )
        report.add(result)
        report.partitions_repaired += counts.repaired - (1 if result.changed else 0)
    ops.save_report(report)
    if not report.dry_run:
        ops.reconciler.record(report)
    return report.as_dict()


def rebuild_plan(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint pass's S3 side only: its partitions holding objects are the
    rebuild's partition list."""
    request: RebuildInput = RebuildInput.parse(event)
    run_id = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    plan, units = ops.plan(
        run_id=run_id,
        folder=rebuild_object_key(run_id, ""),
        source=request.source,
        manifest=request.manifest_uri(),
        generation=None,
    )
    return ops.publish_plan(plan, units).dump()


def rebuild_start(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """Start a generation with the partitions a distributed plan found (``plan`` and the
    maps' results), or, given only a source, with those of the plan run in this process."""
    if "plan" in event:
        request: DecideInput = DecideInput.parse(event)
        _map_totals(ops, request)
        partitions = shard_partitions(
            S3Partials(ops.reports), request.plan.folder, request.plan.shard_count, "with_objects"
        )
    else:
        source: RebuildInput = RebuildInput.parse(event)
        partitions = ops.rebuild_partitions(source.source, source.manifest_uri())
    status = ops.rebuilder.start(partitions)
    rebuild_id = status.rebuild_id or "rebuild"
    assert status.building is not None  # start() sets it or raises
    location = ops.put_json(
        rebuild_object_key(rebuild_id, "partitions.json"), [p.as_dict() for p in partitions]
    )
    return RebuildStartOutput(
        rebuild_id=rebuild_id, generation=status.building, partitions=S3Location(**location)
    ).dump()


def rebuild_partitions(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    batch: RebuildBatch = RebuildBatch.parse(event)
    written = ops.rebuilder.build(
        batch.BatchInput.generation, [item.partition() for item in batch.Items]
    )
    return {"written": written}


def rebuild_finish(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    request: RebuildFinishInput = RebuildFinishInput.parse(event)
    settle = DEFAULT_SETTLE_SECONDS if request.settle_seconds is None else request.settle_seconds
    status = ops.rebuilder.finish(request.generation, settle_seconds=settle)
    return {"phase": status.phase, "current": status.current, "previous": status.previous}


def rebuild_drop(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The generation the switch replaced, deleted (after the machine's grace wait)."""
    request: RebuildDropInput = RebuildDropInput.parse(event)
    if request.generation is None:
        return {"deleted": 0}
    return {"deleted": ops.rebuilder.drop(request.generation)}


def rebuild_abort(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    request: RebuildAbortInput = RebuildAbortInput.parse(event)
    status = ops.rebuilder.abort(f"aborted: {json.dumps(request.error, default=str)[:500]}")
    return {"phase": status.phase, "current": status.current}


STEPS: dict[str, Step] = {
    ACTION_RECONCILE: reconcile,
    ACTION_RECONCILE_PLAN: reconcile_plan,
    ACTION_FINGERPRINT_UNITS: fingerprint_units,
    ACTION_FINGERPRINT_REDUCE: fingerprint_reduce,
    ACTION_RECONCILE_DECIDE: reconcile_decide,
    ACTION_REBUILD_PLAN: rebuild_plan,
    ACTION_RECONCILE_PARTITIONS: reconcile_partitions,
    ACTION_RECONCILE_REPORT: reconcile_report,
    ACTION_REBUILD_START: rebuild_start,
    ACTION_REBUILD_PARTITIONS: rebuild_partitions,
    ACTION_REBUILD_FINISH: rebuild_finish,
    ACTION_REBUILD_DROP: rebuild_drop,
    ACTION_REBUILD_ABORT: rebuild_abort,
}


def dispatch(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    action = event.get("action")
    step = STEPS.get(str(action))
    if step is None:
        raise OperationError(f"unknown action {action!r}; expected one of {', '.join(STEPS)}")
    logger.info("ops step", extra={"action": action})
    return step(ops, event)


def _map_outputs(ops: Ops, results: S3Location | list[Any] | None) -> list[dict[str, Any]]:
    """The child outputs of a Distributed Map, from its ResultWriter manifest in S3
    (or inline, when the map returned them directly)."""
    if isinstance(results, list):
        return [_payload(r) for r in results]
    if results is None:
        return []
    manifest = ops.get_json(results.Bucket, results.Key)
    outputs: list[dict[str, Any]] = []
    for entry in manifest.get("ResultFiles", {}).get("SUCCEEDED", []):
        for child in ops.get_json(manifest.get("DestinationBucket", results.Bucket), entry["Key"]):
            outputs.append(_payload(child.get("Output")))
    return outputs


def _payload(output: Any) -> dict[str, Any]:
    if isinstance(output, str):
        output = json.loads(output)
    if isinstance(output, dict) and isinstance(output.get("Payload"), dict):
        output = output["Payload"]
    return output if isinstance(output, dict) else {}
