"""Lambda entry point of the daily retention job (docs/holds.md): one pass, one report.

``VIDEO_INDEX_RETENTION_DAYS`` is the stack's retention per kind as JSON
(``{"video": 30, "sensor": 90, "analysis": 90}``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.contract import (
    ENV_BUCKET,
    ENV_HOLDS_TABLE,
    ENV_RETENTION_DAYS,
    METRICS_NAMESPACE,
    RETENTION_SERVICE_NAME,
)
from video_index.core.errors import ConfigurationError
from video_index.core.keys import KINDS
from video_index.holds.job import RetentionJob
from video_index.holds.service import Holds, HoldsHeldWindows

logger = Logger(service=RETENTION_SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=RETENTION_SERVICE_NAME)
tracer = Tracer(service=RETENTION_SERVICE_NAME)


def retention_days(text: str | None) -> dict[str, int]:
    """The retention per kind from its JSON setting; every kind required, days ≥ 1."""
    try:
        days = json.loads(text or "")
    except ValueError:
        raise ConfigurationError(f"{ENV_RETENTION_DAYS} is not JSON") from None
    if not isinstance(days, dict) or set(days) != set(KINDS):
        raise ConfigurationError(f"{ENV_RETENTION_DAYS} must name every kind: {KINDS}")
    if not all(isinstance(v, int) and v >= 1 for v in days.values()):
        raise ConfigurationError(f"{ENV_RETENTION_DAYS}: days must be whole numbers ≥ 1")
    return days


def build_job(environ: dict[str, str], clients: Clients) -> RetentionJob:
    missing = [n for n in (ENV_BUCKET, ENV_HOLDS_TABLE, ENV_RETENTION_DAYS) if not environ.get(n)]
    if missing:
        raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")
    holds = HoldsHeldWindows(Holds(HoldStore(clients.dynamodb, environ[ENV_HOLDS_TABLE])))
    return RetentionJob(
        ObjectStore(clients.s3, environ[ENV_BUCKET]),
        holds,
        retention_days(environ[ENV_RETENTION_DAYS]),
        time.time,
    )


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = build_job(dict(os.environ), Clients.default()).run()
    metrics.add_metric(name="RetentionDeleted", unit=MetricUnit.Count, value=report.deleted)
    metrics.add_metric(name="RetentionKeptHeld", unit=MetricUnit.Count, value=report.kept_held)
    logger.info("retention run", extra=dataclasses.asdict(report))
    return dataclasses.asdict(report)
