"""Lambda entry point for deletion jobs: decorators and one call into the deletion worker."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import (
    DELETION_SERVICE_NAME,
    ENV_BUCKET,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    METRICS_NAMESPACE,
)
from video_index.core.settings import Settings
from video_index.deletion.worker import DeletionWorker, build_deletion_worker

logger = Logger(service=DELETION_SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=DELETION_SERVICE_NAME)
tracer = Tracer(service=DELETION_SERVICE_NAME)


@cache
def worker() -> DeletionWorker:
    """Built on the first invocation (not at import) and reused while the container lives."""
    required = (ENV_BUCKET, ENV_DELETIONS_TABLE, ENV_DELETION_QUEUE_URL)
    return build_deletion_worker(Settings.from_env(required=required), Clients.default(), metrics)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return worker().handle(event, context)
