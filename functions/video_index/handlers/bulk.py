"""Lambda entry point of restore and deletion at fleet size: one step per invocation,
dispatched on ``action`` (:mod:`video_index.bulk.steps`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.bulk.names import BULK_SERVICE_NAME
from video_index.bulk.steps import Bulk, dispatch
from video_index.core.contract import (
    ENV_BUCKET,
    ENV_DELETIONS_TABLE,
    ENV_REPORTS_BUCKET,
    METRICS_NAMESPACE,
)
from video_index.core.settings import Settings

logger = Logger(service=BULK_SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=BULK_SERVICE_NAME)
tracer = Tracer(service=BULK_SERVICE_NAME)


@cache
def bulk() -> Bulk:
    """Built on the first invocation (not at import) and reused while the container lives."""
    from video_index.bulk.service import build_bulk

    required = (ENV_BUCKET, ENV_REPORTS_BUCKET, ENV_DELETIONS_TABLE)
    return build_bulk(Settings.from_env(required=required), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    def time_left() -> float:
        return float(context.get_remaining_time_in_millis()) / 1000

    return dispatch(bulk(), event, time_left)
