"""The reconcile state machine's definition: ``Defaults`` -> ``Plan`` (``reconcile-plan``:
units and shards) -> ``Fingerprint`` -> ``Reduce`` -> ``Decide`` (``reconcile-decide``: the
safety threshold, the partitions to repair) -> nothing to repair or a dry run? ->
``RepairPartitions`` (Distributed Map, ``reconcile-partitions`` per batch) -> ``Report``
(``reconcile-report``)."""

from __future__ import annotations

from typing import Any, Final

from aws_cdk import aws_stepfunctions as sfn

from infra.ops.steps import BATCH_FIELDS, DECIDE_FIELDS, Steps, jsonata
from video_index.core.contract import (
    ACTION_RECONCILE_DECIDE,
    ACTION_RECONCILE_PARTITIONS,
    ACTION_RECONCILE_PLAN,
    ACTION_RECONCILE_REPORT,
    MAP_RESULTS_FOLDER,
    RECONCILE_REPORTS_PREFIX,
)

#: What a reconcile execution runs with when its input leaves a field out. An execution
#: started by hand with ``{}`` is the scheduled run; ``{"dry_run": true}`` a dry run.
RECONCILE_DEFAULTS: Final[dict[str, Any]] = {
    "source": "inventory",
    "manifest": None,
    "manifest_checksum": None,
    "dry_run": False,
    "force": False,
}
#: Input of the scheduled run (the defaults, spelled out so the schedule shows them).
SCHEDULED_RECONCILE_INPUT: Final[dict[str, Any]] = {
    "action": ACTION_RECONCILE_PLAN,
    "source": "inventory",
    "manifest": None,
    "dry_run": False,
    "force": False,
}


def reconcile_definition(steps: Steps) -> sfn.IChainable:
    defaults = steps.defaults("ReconcileDefaults", RECONCILE_DEFAULTS)
    plan = steps.invoke(
        "ReconcilePlan",
        ACTION_RECONCILE_PLAN,
        state_name="Plan",
        # The plan is kept for the decision and the report; `results` stays null unless
        # the repair map runs (a dry run or nothing to repair goes straight to the report).
        assign={"plan": jsonata("$states.result.Payload"), "results": jsonata("null")},
        fields={field: jsonata(f"$states.input.{field}") for field in RECONCILE_DEFAULTS},
    )
    fingerprint, reduce = steps.fingerprint_maps("Reconcile", RECONCILE_REPORTS_PREFIX)
    decide = steps.invoke(
        "ReconcileDecide",
        ACTION_RECONCILE_DECIDE,
        state_name="Decide",
        fields=DECIDE_FIELDS,
    )
    report = steps.invoke(
        "ReconcileReport",
        ACTION_RECONCILE_REPORT,
        state_name="Report",
        fields={"run_id": jsonata("$plan.run_id"), "results": jsonata("$results")},
    )
    repair = steps.distributed_map(
        "ReconcileRepairPartitions",
        state_name="RepairPartitions",
        batch_input={
            "run_id": jsonata("$states.input.run_id"),
            "generation": jsonata("null"),
        },
        results_prefix=f"{RECONCILE_REPORTS_PREFIX}{MAP_RESULTS_FOLDER}",
        processor=steps.invoke(
            "ReconcileRepairBatch",
            ACTION_RECONCILE_PARTITIONS,
            state_name="RepairBatch",
            fields=BATCH_FIELDS,
        ),
        # {"Bucket", "Key"} of the map run's manifest.json, handed to the report.
        assign={"results": jsonata("$states.result.ResultWriterDetails")},
    )
    anything_to_repair = sfn.Choice.jsonata(
        steps.scope, "ReconcileAnythingToRepair", state_name="AnythingToRepair"
    )
    anything_to_repair.when(
        sfn.Condition.jsonata(
            jsonata("$states.input.to_repair = 0 or $states.input.dry_run = true")
        ),
        report,
        comment="Nothing differs, or a dry run: report only",
    )
    anything_to_repair.otherwise(repair.next(report))
    return defaults.next(plan).next(fingerprint).next(reduce).next(decide).next(anything_to_repair)
