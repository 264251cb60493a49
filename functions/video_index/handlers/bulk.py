"""Lambda entry point of restore and deletion at fleet size: one step per invocation,
dispatched on ``action`` (:mod:`video_index.bulk.steps`)."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.audit.jobs import job_started
from video_index.aws.audit import build_audit_log
from video_index.aws.clients import Clients
from video_index.bulk.names import ACTION_DELETE_PLAN, ACTION_RESTORE_PLAN
from video_index.bulk.steps import Bulk, dispatch
from video_index.core.audit import BULK_DELETION_START, RESTORE_START, AuditLog
from video_index.core.contract import METRICS_NAMESPACE
from video_index.core.functions import BULK
from video_index.core.settings import Settings

logger = Logger(service=BULK.service)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=BULK.service)
tracer = Tracer(service=BULK.service)


@cache
def build() -> Bulk:
    """Built on the first invocation (not at import) from the function's own settings and
    reused while the container lives; without the holds table it does not start."""
    from video_index.bulk.service import build_bulk

    return build_bulk(Settings.for_function(BULK), Clients.default())


def build_audit() -> AuditLog:
    """The audit trail a run's start is recorded in (docs/audit.md)."""
    clients = Clients.default()
    return build_audit_log(Settings.for_function(BULK), clients.s3, clients.dynamodb)


#: The steps that start a run, and what their record says.
STARTS: Final = {ACTION_RESTORE_PLAN: RESTORE_START, ACTION_DELETE_PLAN: BULK_DELETION_START}


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # never trace answers (URLs)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    def time_left() -> float:
        return float(context.get_remaining_time_in_millis()) / 1000

    start = STARTS.get(str(event.get("action")))
    if start is not None:
        # Recorded before the run is planned; a record that cannot be stored stops it.
        job_started(build_audit(), start, "system:bulk", context.aws_request_id)
    return dispatch(build(), event, time_left)
