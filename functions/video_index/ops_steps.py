"""The steps of reconcile and rebuild as the reconcile Lambda runs them under Step
Functions (a Distributed Map over the partition list), dispatched on ``action``.

Every step calls the same :class:`Reconciler` / :class:`Rebuilder` code the CLI
runs in one process; only the hand-over between steps (partition lists and
results in the reports bucket) is specific to running at scale.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_plus

from aws_lambda_powertools import Logger

from video_index.operations import OperationError, Ops, partitions_from
from video_index.rebuild import DEFAULT_SETTLE_SECONDS, partitions_of
from video_index.reconcile import PartitionResult, ReconcileReport

logger = Logger(child=True)

Step = Callable[[Ops, dict[str, Any]], dict[str, Any]]


def reconcile(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    """The whole reconcile in one invocation (small buckets, or ``--source list``)."""
    report = ops.reconcile(
        source=str(event.get("source", "inventory")),
        manifest=_manifest(event),
        dry_run=bool(event.get("dry_run", False)),
        force=bool(event.get("force", False)),
    )
    return report.as_dict()


def reconcile_plan(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    source = str(event.get("source", "inventory"))
    objects, manifest = ops.objects(source, _manifest(event))
    plan = ops.reconciler.plan(
        objects,
        source=source,
        manifest=manifest,
        dry_run=bool(event.get("dry_run", False)),
        force=bool(event.get("force", False)),
        max_remove_share=ops.settings.max_remove_share,
    )
    run_id = plan.report.run_id
    ops.put_json(f"reconcile/{run_id}/plan.json", plan.report.as_dict())
    if plan.report.refusal is not None:
        ops.save_report(plan.report)
        raise OperationError(plan.report.refusal)
    partitions = ops.put_json(
        f"reconcile/{run_id}/partitions.json", [p.as_dict() for p in plan.differing]
    )
    return {
        "run_id": run_id,
        "generation": plan.report.generation,
        "partitions": partitions,
        "to_repair": len(plan.differing),
        "dry_run": plan.report.dry_run,
    }


def reconcile_partitions(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    batch = event.get("BatchInput") or {}
    generation = batch.get("generation")
    if generation is None:
        generation = ops.rebuilder.status().current
    merged = PartitionResult()
    repaired = 0
    for partition in partitions_from(list(event.get("Items", []))):
        result = ops.reconciler.repair(
            int(generation), partition, dry_run=bool(batch.get("dry_run"))
        )
        repaired += 1 if result.changed else 0
        merged.merge(result)
    return {**_counts(merged), "repaired": repaired}


def reconcile_report(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    run_id = str(event["run_id"])
    bucket = ops.settings.reports_bucket or ""
    report = ReconcileReport(**ops.get_json(bucket, f"reconcile/{run_id}/plan.json"))
    for output in _map_outputs(ops, event.get("results")):
        result = PartitionResult(
            added=int(output.get("added", 0)),
            removed=int(output.get("removed", 0)),
            fixed=int(output.get("fixed", 0)),
            aggregates_fixed=int(output.get("aggregates_fixed", 0)),
            samples=list(output.get("samples", [])),
        )
        report.add(result)
        report.partitions_repaired += int(output.get("repaired", 0)) - (1 if result.changed else 0)
    ops.save_report(report)
    if not report.dry_run:
        ops.reconciler.record(report)
    return report.as_dict()


def rebuild_start(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    objects, _ = ops.objects(str(event.get("source", "list")), _manifest(event))
    partitions = partitions_of(objects)
    status = ops.rebuilder.start(partitions)
    rebuild_id = status.rebuild_id or "rebuild"
    location = ops.put_json(
        f"rebuild/{rebuild_id}/partitions.json", [p.as_dict() for p in partitions]
    )
    return {"rebuild_id": rebuild_id, "generation": status.building, "partitions": location}


def rebuild_partitions(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    batch = event.get("BatchInput") or {}
    written = ops.rebuilder.build(
        int(batch["generation"]), partitions_from(list(event.get("Items", [])))
    )
    return {"written": written}


def rebuild_finish(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    status = ops.rebuilder.finish(
        int(event["generation"]),
        settle_seconds=float(event.get("settle_seconds", DEFAULT_SETTLE_SECONDS)),
    )
    return {"phase": status.phase, "current": status.current, "previous": status.previous}


def rebuild_drop(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": ops.rebuilder.drop(int(event["generation"]))}


def rebuild_abort(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    status = ops.rebuilder.abort(f"aborted: {json.dumps(event.get('error'), default=str)[:500]}")
    return {"phase": status.phase, "current": status.current}


STEPS: dict[str, Step] = {
    "reconcile": reconcile,
    "reconcile-plan": reconcile_plan,
    "reconcile-partitions": reconcile_partitions,
    "reconcile-report": reconcile_report,
    "rebuild-start": rebuild_start,
    "rebuild-partitions": rebuild_partitions,
    "rebuild-finish": rebuild_finish,
    "rebuild-drop": rebuild_drop,
    "rebuild-abort": rebuild_abort,
}


def dispatch(ops: Ops, event: dict[str, Any]) -> dict[str, Any]:
    action = event.get("action")
    step = STEPS.get(str(action))
    if step is None:
        raise OperationError(f"unknown action {action!r}; expected one of {', '.join(STEPS)}")
    logger.info("ops step", extra={"action": action})
    return step(ops, event)


def _manifest(event: dict[str, Any]) -> str | None:
    """``manifest``, or the manifest.json beside a landed ``manifest.checksum``."""
    manifest = event.get("manifest")
    checksum = event.get("manifest_checksum")
    if not manifest and checksum:
        # The inventory-landed trigger passes the object key as S3 events carry it.
        decoded = unquote_plus(str(checksum))
        manifest = decoded.removesuffix("manifest.checksum") + "manifest.json"
    return str(manifest) if manifest else None


def _counts(result: PartitionResult) -> dict[str, Any]:
    return {
        "added": result.added,
        "removed": result.removed,
        "fixed": result.fixed,
        "aggregates_fixed": result.aggregates_fixed,
        "samples": result.samples,
    }


def _map_outputs(ops: Ops, results: Any) -> list[dict[str, Any]]:
    """The child outputs of a Distributed Map, from its ResultWriter manifest in S3
    (or inline, when the map returned them directly)."""
    if isinstance(results, list):
        return [_payload(r) for r in results]
    if not isinstance(results, dict):
        return []
    details = results.get("ResultWriterDetails", results)
    if "Bucket" not in details or "Key" not in details:
        return []
    manifest = ops.get_json(details["Bucket"], details["Key"])
    outputs: list[dict[str, Any]] = []
    for entry in manifest.get("ResultFiles", {}).get("SUCCEEDED", []):
        for child in ops.get_json(
            manifest.get("DestinationBucket", details["Bucket"]), entry["Key"]
        ):
            outputs.append(_payload(child.get("Output")))
    return outputs


def _payload(output: Any) -> dict[str, Any]:
    if isinstance(output, str):
        output = json.loads(output)
    if isinstance(output, dict) and isinstance(output.get("Payload"), dict):
        output = output["Payload"]
    return output if isinstance(output, dict) else {}
