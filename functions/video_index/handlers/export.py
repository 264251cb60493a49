"""Lambda entry point for clip exports: decorators and one call into the export worker."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import EXPORT
from video_index.core.settings import Settings
from video_index.media.worker import ExportWorker, build_export_worker

logger = Logger(service=EXPORT.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=EXPORT.service)
tracer = Tracer(service=EXPORT.service)


@cache
def build() -> ExportWorker:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives."""
    return build_export_worker(Settings.for_function(EXPORT), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return build().handle(event, context)
