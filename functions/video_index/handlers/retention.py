"""Lambda entry point of the daily retention job (docs/holds.md): one pass, one report.

``VIDEO_INDEX_RETENTION_DAYS`` is the stack's retention per kind as JSON
(``{"video": 30, "sensor": 90, "analysis": 90}``); the job does not start without it
nor without the holds table.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.audit.jobs import job_started
from video_index.aws.audit import build_audit_log
from video_index.aws.clients import Clients
from video_index.core.audit import RETENTION_RUN, AuditLog
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import RETENTION
from video_index.core.settings import Settings
from video_index.holds.job import RetentionJob
from video_index.holds.service import build_retention

logger = Logger(service=RETENTION.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=RETENTION.service)
tracer = Tracer(service=RETENTION.service)


def build() -> RetentionJob:
    """One run's job, from the function's own settings (a new one every day)."""
    return build_retention(Settings.for_function(RETENTION), Clients.default())


def build_audit() -> AuditLog:
    """The audit trail each run is recorded in (docs/audit.md), from the same settings."""
    clients = Clients.default()
    return build_audit_log(Settings.for_function(RETENTION), clients.s3, clients.dynamodb)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # Recorded before anything is deleted; a record that cannot be stored stops the run.
    job_started(build_audit(), RETENTION_RUN, "system:retention", context.aws_request_id)
    report = build().run()
    metrics.add_metric(name="RetentionDeleted", unit=MetricUnit.Count, value=report.deleted)
    metrics.add_metric(name="RetentionKeptHeld", unit=MetricUnit.Count, value=report.kept_held)
    logger.info("retention run", extra=dataclasses.asdict(report))
    return dataclasses.asdict(report)
