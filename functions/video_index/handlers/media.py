"""Lambda entry point for the media routes (the only API routes that need PyAV):
decorators and one call into the resolver."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.api.context import configure
from video_index.app.routes import media_app
from video_index.app.services import build_media_services
from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import MEDIA
from video_index.core.settings import Settings

logger = Logger(service=MEDIA.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=MEDIA.service)
tracer = Tracer(service=MEDIA.service)


@cache
def build() -> dict[type[Any], object]:
    """Built on the first invocation (not at import) from the function's own settings (the
    bucket, no table: renditions only) and reused while the container lives."""
    return build_media_services(Settings.for_function(MEDIA), Clients.default())


configure(build)
app = media_app()


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
