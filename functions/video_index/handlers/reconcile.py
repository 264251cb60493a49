"""Lambda entry point for reconcile and rebuild steps: decorators and one dispatch."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import (
    DELETION_ENFORCED_METRIC,
    METRICS_NAMESPACE,
    PARTITIONS_REPAIRED_METRIC,
    RECONCILE_SERVICE_NAME,
)
from video_index.core.settings import Settings
from video_index.ops.service import Ops, build_ops
from video_index.ops.steps import dispatch

logger = Logger(service=RECONCILE_SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=RECONCILE_SERVICE_NAME)
tracer = Tracer(service=RECONCILE_SERVICE_NAME)

#: Report fields published as metrics (docs/operations.md: checked/repaired, added/removed/
#: fixed, invalid).
REPORT_METRICS: Final = {
    "partitions_checked": "PartitionsChecked",
    "partitions_repaired": PARTITIONS_REPAIRED_METRIC,
    "entries_added": "EntriesAdded",
    "entries_removed": "EntriesRemoved",
    "entries_fixed": "EntriesFixed",
    "aggregates_fixed": "AggregatesFixed",
    "invalid_keys": "InvalidKeys",
    "deletions_enforced": DELETION_ENFORCED_METRIC,
}


@cache
def ops() -> Ops:
    """Built on the first invocation (not at import) and reused while the container lives."""
    return build_ops(Settings.from_env(), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = dispatch(ops(), event)
    if "partitions_repaired" in result:  # a finished reconcile report (not a shard's counts)
        for field, name in REPORT_METRICS.items():
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=int(result.get(field, 0)))
    return result
