"""The steps of reconcile and rebuild as the ops Lambda runs them under Step Functions
(a Distributed Map over the partition list), dispatched on ``action``.

Every step calls the same :class:`~video_index.ops.reconcile.Reconciler` /
:class:`~video_index.ops.rebuild.Rebuilder` code the CLI runs in one process; only
the hand-over between steps (partition lists and results in the reports bucket)
is specific to running at scale. Inputs and outputs are the typed payloads of
:mod:`video_index.ops.payloads`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger

from video_index.core.contract import (
    ACTION_REBUILD_ABORT,
    ACTION_REBUILD_DROP,
    ACTION_REBUILD_FINISH,
    ACTION_REBUILD_PARTITIONS,
    ACTION_REBUILD_START,
    ACTION_RECONCILE,
    ACTION_RECONCILE_PARTITIONS,
    ACTION_RECONCILE_PLAN,
    ACTION_RECONCILE_REPORT,
    rebuild_object_key,
    reconcile_object_key,
)
from video_index.ops.payloads import (
    PlanOutput,
    RebuildAbortInput,
    RebuildBatch,
    RebuildFinishInput,
    RebuildGeneration,
    RebuildStartOutput,
    ReconcileBatch,
    ReconcileInput,
    RepairCounts,
    ReportInput,
    S3Location,
    SourceInput,
)
from video_index.ops.rebuild import DEFAULT_SETTLE_SECONDS, partitions_of
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
    request: ReconcileInput = ReconcileInput.parse(event)
    objects, manifest = ops.objects(request.source, request.manifest_uri())
    plan = ops.reconciler.plan(
        objects,
        source=request.source,
        manifest=manifest,
        dry_run=request.dry_run,
        force=request.force,
        max_remove_share=ops.settings.max_remove_share,
    )
    run_id = plan.report.run_id
    ops.put_json(reconcile_object_key(run_id, "plan.json"), plan.report.as_dict())
    if plan.report.refusal is not None:
        ops.save_report(plan.report)
        raise OperationError(plan.report.refusal)
    # Partitions that deletion windows cover are repaired (enforced) every run.
    to_repair = sorted(set(plan.differing) | ops.reconciler.deletion_partitions())
    partitions = ops.put_json(
        reconcile_object_key(run_id, "partitions.json"), [p.as_dict() for p in to_repair]
    )
    return PlanOutput(
        run_id=run_id,
        generation=plan.report.generation,
        partitions=S3Location(**partitions),
        to_repair=len(to_repair),
        dry_run=plan.report.dry_run,
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
        )
        report.add(result)
        report.partitions_repaired += counts.repaired - (1 if result.changed else 0)
    ops.save_report(report)
    if not report.dry_run:
        ops.reconciler.record(report)
    return report.as_dict()


def rebuild_start(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    request: SourceInput = SourceInput.parse({"source": "list", **event})
    objects, _ = ops.objects(request.source, request.manifest_uri())
    partitions = partitions_of(objects)
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
    request: RebuildGeneration = RebuildGeneration.parse(event)
    return {"deleted": ops.rebuilder.drop(request.generation)}


def rebuild_abort(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    request: RebuildAbortInput = RebuildAbortInput.parse(event)
    status = ops.rebuilder.abort(f"aborted: {json.dumps(request.error, default=str)[:500]}")
    return {"phase": status.phase, "current": status.current}


STEPS: dict[str, Step] = {
    ACTION_RECONCILE: reconcile,
    ACTION_RECONCILE_PLAN: reconcile_plan,
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
