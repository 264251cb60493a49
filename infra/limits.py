"""Fixed limits of the AWS services the stack uses: rules, not deployment choices.

:mod:`infra.settings` validates the deployment settings against them; constructs
read the ones they apply (queue retention, the Powertools layer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from aws_cdk import aws_logs as logs

import video_index.core.queue_settings as queue
import video_index.core.service_limits as payload

#: SQS keeps a message at most 14 days. The DLQ uses the maximum so a parked event can be
#: inspected and redriven long after the failure.
DLQ_RETENTION_DAYS: Final = queue.DLQ_RETENTION_DAYS
#: AWS guidance for an SQS event source: visibility timeout at least 6x the function
#: timeout, so a message is not redelivered while a (retried) invocation still holds it.
VISIBILITY_TIMEOUT_FACTOR: Final = queue.VISIBILITY_TIMEOUT_FACTOR
#: API Gateway HTTP APIs end an integration after at most 30 s, so a longer Lambda timeout
#: would only burn compute for a client that already got a 503.
API_INTEGRATION_TIMEOUT_SECONDS: Final = 30
#: A synchronous Lambda response (every API answer) is at most 6 MB; a Step Functions state
#: payload at most 256 KiB (docs/api.md "Limits", docs/operations.md).
LAMBDA_RESPONSE_BYTES: Final = payload.LAMBDA_RESPONSE_BYTES
STATE_PAYLOAD_BYTES: Final = payload.STATE_PAYLOAD_BYTES
#: "Short-lived" presigned URLs (docs/api.md): at most one hour.
MAX_PRESIGN_SECONDS: Final = 3600
#: The freshness merge lists one S3 prefix per hour of the window; a day bounds that cost.
MAX_FRESH_WINDOW_SECONDS: Final = 24 * 60 * 60
#: Authorization modes of the HTTP API (docs/api.md: IAM or JWT, chosen at deploy).
API_AUTH_IAM: Final = "iam"
API_AUTH_JWT: Final = "jwt"
API_AUTH_MODES: Final = (API_AUTH_IAM, API_AUTH_JWT)
#: Whether the API serves the viewer (docs/viewer.md).
VIEWER_ON: Final = "on"
VIEWER_OFF: Final = "off"
#: Lambda's limits for a DynamoDB stream event source: records per batch, batching window,
#: retry attempts (``-1``, retrying until the record expires, is refused: a failed batch
#: must reach the on-failure destination, not hold the shard for 24 hours).
MAX_STREAM_BATCH_SIZE: Final = 10_000
MAX_STREAM_BATCHING_WINDOW_SECONDS: Final = 300
MAX_STREAM_RETRY_ATTEMPTS: Final = 10_000
#: Distributed Map limits: at most 10,000 parallel child executions, and a batch is one
#: child execution's input (256 KiB), which a thousand partition items would already strain.
MAX_MAP_CONCURRENCY: Final = 10_000
MAX_MAP_BATCH_SIZE: Final = 1_000
#: EventBridge Scheduler expressions accepted for the reconcile schedule: a six-field cron
#: expression or a rate (one-time ``at(...)`` schedules make no sense for a daily job).
_SCHEDULE_RE: Final = re.compile(
    r"^(cron\(\S+( \S+){5}\)|rate\([1-9]\d* (minute|minutes|hour|hours|day|days)\))$"
)
#: Publisher account of the public Powertools for AWS Lambda (Python) layers.
POWERTOOLS_LAYER_ACCOUNT: Final = "017000801446"
#: Layer name matching the runtime (python3.13) and architecture (arm64) of the functions.
POWERTOOLS_LAYER_NAME: Final = "AWSLambdaPowertoolsPythonV3-python313-arm64"

#: Retention periods CloudWatch Logs accepts, mapped to the CDK enum.
LOG_RETENTION: Final[Mapping[int, logs.RetentionDays]] = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}
