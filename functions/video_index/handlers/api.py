"""Lambda entry point for the HTTP API: decorators and one call into the resolver."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.app.routes import api_app
from video_index.app.services import ApiServices, build_api_services, configure
from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import API
from video_index.core.settings import Settings

logger = Logger(service=API.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=API.service)
tracer = Tracer(service=API.service)


@cache
def build() -> ApiServices:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives."""
    return build_api_services(Settings.for_function(API), Clients.default())


configure(build)
app = api_app()


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
