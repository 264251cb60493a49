"""Lambda entry point for ingest: decorators and one call into :mod:`video_index.ingest_batches`."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.ingest_batches import IngestService
from video_index.services import Clients, build_ingest_service
from video_index.settings import Settings

logger = Logger(service="video-index-ingest")
metrics = Metrics(namespace="VideoIndex", service="video-index-ingest")
tracer = Tracer(service="video-index-ingest")

_service: IngestService | None = None


def service() -> IngestService:
    """Built on the first invocation (not at import) and reused while the container lives."""
    global _service
    if _service is None:
        _service = build_ingest_service(Settings.from_env(), Clients.default())
    return _service


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any] | None:
    return service().handle(event, context, metrics)
