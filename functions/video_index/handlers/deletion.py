"""Lambda entry point for deletion jobs: decorators and one call into the deletion worker."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import DELETION
from video_index.core.settings import Settings
from video_index.deletion.worker import DeletionWorker, build_deletion_worker

logger = Logger(service=DELETION.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=DELETION.service)
tracer = Tracer(service=DELETION.service)


@cache
def build() -> DeletionWorker:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives; without the holds table it does not start."""
    return build_deletion_worker(Settings.for_function(DELETION), Clients.default(), metrics)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return build().handle(event, context)
