"""Lambda entry point of the scheduled silent-camera check: decorators and one call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.core.contract import METRICS_NAMESPACE, SILENT_DEVICES_METRIC
from video_index.core.functions import SILENCE
from video_index.core.settings import Settings
from video_index.core.timeunits import iso_ms
from video_index.ops.silence import SilentReport, build_check

logger = Logger(service=SILENCE.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=SILENCE.service)
tracer = Tracer(service=SILENCE.service)


def build() -> Callable[[], SilentReport]:
    """The check, from the function's own settings (every run reads them anew)."""
    return build_check(Settings.for_function(SILENCE), Clients.default())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = build()()
    metrics.add_metric(name=SILENT_DEVICES_METRIC, unit=MetricUnit.Count, value=len(report.silent))
    silent = [{"device": d, "silent_since": iso_ms(since)} for d, since in report.silent]
    logger.info("silent check", extra={"checked": report.checked, "silent": silent[:100]})
    return {"checked": report.checked, "silent": len(report.silent)}
