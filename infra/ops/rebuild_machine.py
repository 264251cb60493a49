"""The rebuild state machine's definition: ``Defaults`` -> ``Plan`` (``rebuild-plan``, from a
listing or the manifest given) -> ``Fingerprint`` -> ``Reduce`` (the same maps as
reconcile's, S3 side only) -> ``Start`` (``rebuild-start``: the partitions holding objects)
-> ``RebuildPartitions`` (Distributed Map, ``rebuild-partitions``) -> ``Finish``
(``rebuild-finish``) -> ``DropGrace`` -> ``DropPrevious``; a failure of the map or of the
finish goes to ``Abort`` (``rebuild-abort``) and then fails the execution."""

from __future__ import annotations

from typing import Any, Final

from aws_cdk import Duration
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks

from infra.ops.steps import BATCH_FIELDS, DECIDE_FIELDS, Steps, jsonata
from video_index.core.contract import (
    ACTION_REBUILD_ABORT,
    ACTION_REBUILD_DROP,
    ACTION_REBUILD_FINISH,
    ACTION_REBUILD_PARTITIONS,
    ACTION_REBUILD_PLAN,
    ACTION_REBUILD_START,
    MAP_RESULTS_FOLDER,
    REBUILD_DROP_GRACE_SECONDS,
    REBUILD_REPORTS_PREFIX,
)

#: What a rebuild execution runs with when its input leaves a field out: ``{}`` rebuilds
#: from a listing; ``{"source": "inventory", "manifest": "s3://…/manifest.json"}`` from a report.
REBUILD_DEFAULTS: Final[dict[str, Any]] = {
    "source": "list",
    "manifest": None,
    "manifest_checksum": None,
}


def rebuild_definition(steps: Steps) -> sfn.IChainable:
    defaults = steps.defaults("RebuildDefaults", REBUILD_DEFAULTS)
    plan = steps.invoke(
        "RebuildPlan",
        ACTION_REBUILD_PLAN,
        state_name="Plan",
        assign={"plan": jsonata("$states.result.Payload")},
        # The source to rebuild from: a listing, or an S3 Inventory manifest.
        fields={field: jsonata(f"$states.input.{field}") for field in REBUILD_DEFAULTS},
    )
    fingerprint, reduce = steps.fingerprint_maps("Rebuild", REBUILD_REPORTS_PREFIX)
    start = steps.invoke(
        "RebuildStart",
        ACTION_REBUILD_START,
        state_name="Start",
        assign={"rebuild": jsonata("$states.result.Payload")},
        # The partitions holding objects, from the plan's reduce.
        fields=DECIDE_FIELDS,
    )
    generation = {
        "rebuild_id": jsonata("$rebuild.rebuild_id"),
        "generation": jsonata("$rebuild.generation"),
    }
    rebuild = steps.distributed_map(
        "RebuildPartitionsMap",
        state_name="RebuildPartitions",
        batch_input={
            "rebuild_id": jsonata("$states.input.rebuild_id"),
            "generation": jsonata("$states.input.generation"),
        },
        results_prefix=f"{REBUILD_REPORTS_PREFIX}{MAP_RESULTS_FOLDER}",
        processor=steps.invoke(
            "RebuildBatch",
            ACTION_REBUILD_PARTITIONS,
            state_name="RebuildBatch",
            fields=BATCH_FIELDS,
        ),
    )
    finish = steps.invoke(
        "RebuildFinish",
        ACTION_REBUILD_FINISH,
        state_name="Finish",
        assign={"switched": jsonata("$states.result.Payload")},
        fields=generation,
    )
    grace, drop = _drop_previous(steps)
    abort = _abort(steps, generation)
    # A failed map or finish drops the new generation; the current one keeps serving.
    catch_error = {"error": jsonata("$states.errorOutput")}
    rebuild.add_catch(abort, errors=[sfn.Errors.ALL], assign=catch_error)
    finish.add_catch(abort, errors=[sfn.Errors.ALL], assign=catch_error)
    return (
        defaults.next(plan)
        .next(fingerprint)
        .next(reduce)
        .next(start)
        .next(rebuild)
        .next(finish)
        .next(grace)
        .next(drop)
    )


def _drop_previous(steps: Steps) -> tuple[sfn.Wait, tasks.LambdaInvoke]:
    """The generation the switch replaced is deleted once no reader can still use it."""
    grace = sfn.Wait.jsonata(
        steps.scope,
        "RebuildDropGrace",
        state_name="DropGrace",
        time=sfn.WaitTime.duration(Duration.seconds(REBUILD_DROP_GRACE_SECONDS)),
    )
    drop = steps.invoke(
        "RebuildDrop",
        ACTION_REBUILD_DROP,
        state_name="DropPrevious",
        fields={
            "rebuild_id": jsonata("$rebuild.rebuild_id"),
            "generation": jsonata("$switched.previous"),
        },
    )
    return grace, drop


def _abort(steps: Steps, generation: dict[str, str]) -> tasks.LambdaInvoke:
    """Drop the new generation, then fail the execution with the error caught."""
    abort = steps.invoke(
        "RebuildAbort",
        ACTION_REBUILD_ABORT,
        state_name="Abort",
        fields={**generation, "error": jsonata("$error")},
    )
    failed = sfn.Fail.jsonata(
        steps.scope,
        "RebuildFailState",
        state_name="Failed",
        error="RebuildAborted",
        cause=jsonata("$string($error)"),
    )
    abort.next(failed)
    return abort
