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
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import AGGREGATE
from video_index.core.settings import Settings

logger = Logger(service=AGGREGATE.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=AGGREGATE.service)
tracer = Tracer(service=AGGREGATE.service)


@cache
def build() -> Aggregator:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives: its cache of aggregated items is what keeps a batch
    to one write per item."""
    return build_aggregator(Settings.for_function(AGGREGATE), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return build().handle(event, metrics)
