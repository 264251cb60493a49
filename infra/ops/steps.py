"""The states both operations' machines are made of: Lambda tasks, Distributed Maps, the
fingerprint maps and the ``Defaults`` pass (JSONata throughout).

:class:`Steps` adds them to one scope with the deployment's settings; the reconcile and
rebuild definitions (:mod:`infra.ops.reconcile_machine`, :mod:`infra.ops.rebuild_machine`)
chain them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import (
    ACTION_FINGERPRINT_REDUCE,
    ACTION_FINGERPRINT_UNITS,
    MAP_RESULTS_FOLDER,
)

#: Lambda errors worth retrying: the service's own (CDK's default retry) plus throttling,
#: which a Distributed Map at full concurrency can run into.
THROTTLING_ERRORS: Final = ["Lambda.TooManyRequestsException"]


def jsonata(expression: str) -> str:
    """A JSONata expression as Step Functions expects it in a field: ``{% ... %}``."""
    return "{% " + expression + " %}"


#: A child execution's input is one batch, ``{"Items": [...], "BatchInput": {...}}``; the
#: Lambda gets it as is, next to the action.
BATCH_FIELDS: Final = {
    "Items": jsonata("$states.input.Items"),
    "BatchInput": jsonata("$states.input.BatchInput"),
}


#: What the decision (and rebuild's start) gets: the plan and where both maps' outputs are.
DECIDE_FIELDS: Final = {
    "plan": jsonata("$plan"),
    "unit_results": jsonata("$unitResults"),
    "shard_results": jsonata("$shardResults"),
}


class Steps:
    """Adds the states of a definition to ``scope``: tasks invoke ``function``, maps read
    and write the reports bucket of ``storage``."""

    def __init__(
        self,
        scope: Construct,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
        function: lambda_.IFunction,
    ) -> None:
        self.scope = scope
        self.settings = settings
        self.storage = storage
        self.function = function

    def invoke(
        self,
        construct_id: str,
        action: str,
        *,
        state_name: str,
        fields: Mapping[str, str] | None = None,
        assign: Mapping[str, str] | None = None,
    ) -> tasks.LambdaInvoke:
        """A JSONata task invoking the reconcile Lambda with ``{"action": action, **fields}``.

        Retries Lambda's own service errors (CDK's default retry) and throttling; the
        task's output is the function's return value.
        """
        task = tasks.LambdaInvoke.jsonata(
            self.scope,
            construct_id,
            state_name=state_name,
            lambda_function=self.function,
            payload=sfn.TaskInput.from_object({"action": action, **(fields or {})}),
            outputs=jsonata("$states.result.Payload"),
            assign=assign,
        )
        task.add_retry(
            errors=list(THROTTLING_ERRORS),
            interval=Duration.seconds(2),
            max_attempts=6,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

    def distributed_map(
        self,
        construct_id: str,
        *,
        state_name: str,
        batch_input: Mapping[str, str],
        results_prefix: str,
        processor: sfn.IChainable,
        assign: Mapping[str, str] | None = None,
        items: str = "partitions",
        batch_size: int | None = None,
        concurrency: int | None = None,
        tolerated_failure_percent: int | None = None,
        outputs: str | None = None,
    ) -> sfn.DistributedMap:
        """Distributed Map over the JSON list the previous state named.

        The previous state's output is ``{..., items: {"Bucket", "Key"}}`` (``partitions``,
        or the plan's ``units`` and ``shards``). The list is always read from the reports
        bucket (the role may read nothing else there but the run's own prefix), so
        ``Bucket`` is not used.
        """
        settings = self.settings
        reports = self.storage.reports_bucket
        distributed_map = sfn.DistributedMap.jsonata(
            self.scope,
            construct_id,
            state_name=state_name,
            item_reader=sfn.S3JsonItemReader(
                bucket=reports, key=jsonata(f"$states.input.{items}.Key")
            ),
            item_batcher=sfn.ItemBatcher(
                max_items_per_batch=batch_size or settings.reconcile_batch_size,
                batch_input=batch_input,
            ),
            max_concurrency=concurrency or settings.reconcile_max_concurrency,
            tolerated_failure_percentage=(
                settings.reconcile_tolerated_failure_percent
                if tolerated_failure_percent is None
                else tolerated_failure_percent
            ),
            result_writer_v2=sfn.ResultWriterV2(bucket=reports, prefix=results_prefix),
            assign=assign,
            outputs=outputs,
        )
        distributed_map.item_processor(processor)
        return distributed_map

    def fingerprint_maps(
        self, prefix: str, reports_prefix: str
    ) -> tuple[sfn.DistributedMap, sfn.DistributedMap]:
        """The map over the plan's units and the reduce over its shards (docs/operations.md,
        "At fleet scale"), one unit or shard per child, every one of which must succeed.
        Both pass the plan on as their output; ``$unitResults`` and ``$shardResults`` say
        where their children's outputs are."""
        concurrency = self.settings.reconcile_fingerprint_concurrency
        fingerprint = self.distributed_map(
            f"{prefix}FingerprintMap",
            state_name="Fingerprint",
            items="units",
            batch_input={
                "folder": jsonata("$states.input.folder"),
                "manifest": jsonata("$states.input.manifest"),
                "generation": jsonata("$states.input.generation"),
                "shard_count": jsonata("$states.input.shard_count"),
            },
            results_prefix=f"{reports_prefix}{MAP_RESULTS_FOLDER}",
            processor=self.invoke(
                f"{prefix}FingerprintUnits",
                ACTION_FINGERPRINT_UNITS,
                state_name="FingerprintUnits",
                fields=BATCH_FIELDS,
            ),
            batch_size=1,
            concurrency=concurrency,
            tolerated_failure_percent=0,
            assign={"unitResults": jsonata("$states.result.ResultWriterDetails")},
            outputs=jsonata("$states.input"),
        )
        reduce = self.distributed_map(
            f"{prefix}ReduceMap",
            state_name="Reduce",
            items="shards",
            batch_input={
                "folder": jsonata("$states.input.folder"),
                "unit_count": jsonata("$states.input.unit_count"),
            },
            results_prefix=f"{reports_prefix}{MAP_RESULTS_FOLDER}",
            processor=self.invoke(
                f"{prefix}ReduceShards",
                ACTION_FINGERPRINT_REDUCE,
                state_name="ReduceShards",
                fields=BATCH_FIELDS,
            ),
            batch_size=1,
            concurrency=concurrency,
            tolerated_failure_percent=0,
            assign={"shardResults": jsonata("$states.result.ResultWriterDetails")},
            outputs=jsonata("$states.input"),
        )
        return fingerprint, reduce

    def defaults(self, construct_id: str, defaults: Mapping[str, Any]) -> sfn.Pass:
        """The first state: the execution input with what it leaves out filled in."""
        return sfn.Pass.jsonata(
            self.scope,
            construct_id,
            state_name="Defaults",
            comment="Fill in what the execution input leaves out",
            outputs=jsonata(f"$merge([{json.dumps(defaults)}, $states.input])"),
        )
