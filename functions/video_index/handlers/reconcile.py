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
    DELETION_HELD_METRIC,
    METRICS_NAMESPACE,
    PARTITIONS_REPAIRED_METRIC,
)
from video_index.core.functions import RECONCILE
from video_index.core.settings import Settings
from video_index.ops.service import Ops, build_ops
from video_index.ops.steps import dispatch

logger = Logger(service=RECONCILE.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=RECONCILE.service)
tracer = Tracer(service=RECONCILE.service)

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
    "deletions_held": DELETION_HELD_METRIC,
}


@cache
def build() -> Ops:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives; its enforcement does not start without the holds."""
    return build_ops(Settings.for_function(RECONCILE), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = dispatch(build(), event)
    if "partitions_repaired" in result:  # a finished reconcile report (not a shard's counts)
        for field, name in REPORT_METRICS.items():
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=int(result.get(field, 0)))
    return result
