"""Lambda entry point of the stream consumer: decorators and one call into
:mod:`video_index.aggregate.consumer`."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aggregate.consumer import Aggregator
from video_index.aggregate.service import build_aggregator
from video_index.aws.clients import Clients
from video_index.core.contract import AGGREGATE_SERVICE_NAME, ENV_TABLE, METRICS_NAMESPACE
from video_index.core.settings import Settings

logger = Logger(service=AGGREGATE_SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=AGGREGATE_SERVICE_NAME)
tracer = Tracer(service=AGGREGATE_SERVICE_NAME)


@cache
def aggregator() -> Aggregator:
    """Built on the first invocation (not at import) and reused while the container lives:
    its cache of aggregated items is what keeps a batch to one write per item."""
    return build_aggregator(Settings.from_env(required=(ENV_TABLE,)), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return aggregator().handle(event, metrics)
