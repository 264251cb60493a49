"""Lambda entry point for the HTTP API: decorators and one call into the resolver."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index import api
from video_index.api_services import ApiServices, build_api_services
from video_index.services import Clients
from video_index.settings import Settings

logger = Logger(service="video-index-api")
metrics = Metrics(namespace="VideoIndex", service="video-index-api")
tracer = Tracer(service="video-index-api")

_services: ApiServices | None = None


def services() -> ApiServices:
    """Built on the first request (not at import) and reused while the container lives."""
    global _services
    if _services is None:
        _services = build_api_services(Settings.from_env(), Clients.default())
    return _services


api.configure(services)


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return api.app.resolve(event, context)
