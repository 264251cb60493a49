"""Lambda entry point for reconcile and rebuild steps: decorators and one dispatch."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.operations import Ops, build_ops
from video_index.ops_steps import dispatch
from video_index.services import Clients
from video_index.settings import Settings

logger = Logger(service="video-index-reconcile")
metrics = Metrics(namespace="VideoIndex", service="video-index-reconcile")
tracer = Tracer(service="video-index-reconcile")

_ops: Ops | None = None

#: Report fields published as metrics (SPEC §8: checked/repaired, added/removed/fixed, invalid).
REPORT_METRICS = {
    "partitions_checked": "PartitionsChecked",
    "partitions_repaired": "PartitionsRepaired",
    "entries_added": "EntriesAdded",
    "entries_removed": "EntriesRemoved",
    "entries_fixed": "EntriesFixed",
    "aggregates_fixed": "AggregatesFixed",
    "invalid_keys": "InvalidKeys",
}


def ops() -> Ops:
    global _ops
    if _ops is None:
        _ops = build_ops(Settings.from_env(), Clients.default())
    return _ops


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = dispatch(ops(), event)
    if "partitions_checked" in result:  # a finished reconcile report
        for field, name in REPORT_METRICS.items():
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=int(result.get(field, 0)))
    return result
