"""Lambda entry point for ingest: decorators and one call into :mod:`video_index.ingest.batches`."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import INGEST
from video_index.core.settings import Settings
from video_index.ingest.batches import IngestService
from video_index.ingest.service import build_ingest_service

logger = Logger(service=INGEST.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=INGEST.service)
tracer = Tracer(service=INGEST.service)


@cache
def build() -> IngestService:
    """Built on the first invocation (not at import) from the function's own settings
    (its spec, core/functions.py) and reused while the container lives."""
    return build_ingest_service(Settings.for_function(INGEST), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any] | None:
    return build().handle(event, context, metrics)
