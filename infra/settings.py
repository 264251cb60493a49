"""Deployment settings of the stack: every default in one place, overridable by CDK context.

Each field of :class:`StackSettings` is also the name of the CDK context key that
overrides it (``cdk synth -c retention_days_video=60`` or the ``context`` block of
``cdk.json``). Values are validated when the settings are built
(:mod:`infra.settings_checks`), so a bad value stops synthesis with an error that names
the context key, instead of surfacing later as a CloudFormation rollback.

Names the functions read too (service names, metric namespace, inventory id, key
prefixes) are in :mod:`video_index.core.contract`, so the constructs never spell a
name themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aws_cdk import aws_logs as logs
from constructs import Construct

import video_index.core.queue_settings as queue
from infra.limits import (
    API_AUTH_IAM,
    DLQ_RETENTION_DAYS,
    LOG_RETENTION,
    POWERTOOLS_LAYER_ACCOUNT,
    POWERTOOLS_LAYER_NAME,
    VIEWER_OFF,
    VIEWER_ON,
)
from infra.settings_checks import (
    REPLICATION_MODES,
    REPLICATION_OFF,
    REPLICATION_ON,
    REPLICATION_PAUSED,
    SettingsError,
    fail,
    parse_float,
    parse_int,
    parse_optional_str,
    split_list,
    validate,
)
from video_index.core.audit import DEFAULT_AUDIT_RETENTION_DAYS
from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS
from video_index.core.keys import KINDS
from video_index.core.settings import (
    DEFAULT_FRESH_WINDOW_SECONDS,
    DEFAULT_GAP_TOLERANCE_MS,
    DEFAULT_MAX_EXPORT_BYTES,
    DEFAULT_MAX_REMOVE_SHARE,
    DEFAULT_PRESIGN_SECONDS,
    DEFAULT_SHARE_MAX_LIFETIME_SECONDS,
    DEFAULT_SHARE_MAX_WINDOW_SECONDS,
    DEFAULT_TOMBSTONE_DAYS,
)

#: Names the constructs and tests import from here (defined by the checks and the limits).
__all__ = [
    "DEFAULT_STACK_NAME",
    "DLQ_RETENTION_DAYS",
    "REPLICATION_MODES",
    "REPLICATION_OFF",
    "REPLICATION_ON",
    "REPLICATION_PAUSED",
    "SettingsError",
    "StackSettings",
]

# --- naming -----------------------------------------------------------------------------------

#: Id (and CloudFormation name) of the stack unless ``stack_name`` is given.
DEFAULT_STACK_NAME: Final = "VideoIndex"
#: The names both sides must agree on (service names, prefixes, actions) are in
#: :mod:`video_index.core.contract`.


@dataclass(frozen=True, slots=True)
class StackSettings:
    """Every deployment setting with its default; field name = CDK context key."""

    #: CloudFormation stack name (and construct id).
    stack_name: str = DEFAULT_STACK_NAME
    #: Physical name of the segment bucket; ``None`` lets CloudFormation generate one.
    bucket_name: str | None = None
    #: Days a current object of each kind is kept before lifecycle expires it.
    retention_days_video: int = 30
    retention_days_sensor: int = 90
    retention_days_analysis: int = 90
    #: Seconds without a new file after which a camera's kind is silent (0: never), and
    #: how often the check runs (docs/operations.md#silent-cameras).
    silent_after_seconds_video: int = 300
    silent_after_seconds_sensor: int = 900
    silent_after_seconds_analysis: int = 900
    silent_check_minutes: int = 5
    #: Seconds a file may end, by its key, after S3 received it before its camera's clock
    #: counts as ahead: the ClockAhead alarm's threshold and the API's ``clock.ahead``
    #: (docs/operations.md#camera-clocks).
    clock_tolerance_seconds: int = DEFAULT_CLOCK_TOLERANCE_SECONDS
    #: The undelete window: days a deleted or overwritten version stays recoverable.
    noncurrent_version_expiry_days: int = 7
    #: Days after which an unfinished multipart upload is aborted (its parts cost money).
    abort_incomplete_upload_days: int = 1
    #: Days inventory reports are kept in the reports bucket (reconcile reads the newest).
    inventory_retention_days: int = 14
    #: Days S3 server access logs are kept.
    access_log_retention_days: int = 90
    #: Days each audit record is kept: the audit bucket's COMPLIANCE Object Lock retention
    #: and the audit index's TTL (docs/audit.md).
    audit_retention_days: int = DEFAULT_AUDIT_RETENTION_DAYS
    #: Ingest Lambda timeout; the queue's visibility timeout is 6x this.
    ingest_timeout_seconds: int = queue.INGEST_TIMEOUT_SECONDS
    ingest_memory_mb: int = 512
    #: SQS event source: records per invocation and how long Lambda may wait to fill a batch.
    sqs_batch_size: int = queue.SQS_BATCH_SIZE
    sqs_max_batching_window_seconds: int = queue.SQS_MAX_BATCHING_WINDOW_SECONDS
    #: Receives before a message is parked in the DLQ.
    max_receive_count: int = queue.MAX_RECEIVE_COUNT
    #: Retention of the notification queue. Kept well below the DLQ's 14 days because a
    #: moved message keeps its original enqueue time: whatever it spent here is lost there.
    queue_retention_days: int = queue.QUEUE_RETENTION_DAYS
    #: Read-model settings passed to the ingest Lambda (docs/read-model.md and the tombstone rule).
    gap_tolerance_ms: int = DEFAULT_GAP_TOLERANCE_MS
    tombstone_days: int = DEFAULT_TOMBSTONE_DAYS
    #: The stream consumer that keeps buckets and device items (docs/deployment.md,
    #: "Aggregation"): records per invocation and how long Lambda gathers a batch. The
    #: window sets the write cost (one write per touched bucket or device item per
    #: batch, not per segment) and the freshness of calendars and totals.
    aggregation_batch_size: int = 1000
    aggregation_max_batching_window_seconds: int = 60
    #: Retries of a failing batch (halved on each error) before its range goes to the
    #: consumer's dead-letter queue.
    aggregation_retry_attempts: int = 10
    #: The lag alarm: aggregates older than this page an operator. Above the batching
    #: window (a batch waits that long by design) and below ``fresh_window_seconds``
    #: (the API merges S3 listings that far back, so answers stay fresh while it holds).
    aggregation_lag_alarm_seconds: int = 300
    aggregation_timeout_seconds: int = 120
    aggregation_memory_mb: int = 512
    #: Retention of the Lambda log groups (must be a value CloudWatch Logs accepts).
    log_retention_days: int = 30
    #: Version of the public layer ``AWSLambdaPowertoolsPythonV3-python313-arm64``.
    powertools_layer_version: int = 22
    #: Optional address subscribed to the alarm topic.
    alarm_email: str | None = None
    #: Authorization of every API route: ``iam`` (SigV4-signed requests) or ``jwt``.
    api_auth: str = API_AUTH_IAM
    #: JWT issuer URL (``https://...``; API Gateway reads its OpenID configuration);
    #: required when ``api_auth`` is ``jwt`` and only allowed then.
    api_jwt_issuer: str | None = None
    #: Accepted JWT audiences, comma-separated; required when ``api_auth`` is ``jwt``.
    api_jwt_audience: str | None = None
    #: Steady-state requests per second and burst of the API's default stage.
    api_throttle_rate: int = 50
    api_throttle_burst: int = 100
    #: API Lambda timeout (at most the HTTP API integration timeout) and memory.
    api_timeout_seconds: int = 29
    api_memory_mb: int = 512
    #: Lifetime of the presigned segment URLs the API hands out ("short-lived", docs/api.md).
    presign_seconds: int = DEFAULT_PRESIGN_SECONDS
    #: How far back the API merges an S3 listing into read-model answers (docs/api.md freshness).
    fresh_window_seconds: int = DEFAULT_FRESH_WINDOW_SECONDS
    #: Origins of the web pages allowed to call the API and play the bucket's video
    #: (CORS), comma-separated, e.g. ``https://viewer.example.com``; none by default.
    viewer_origins: str | None = None
    #: Who may do what (docs/access.md): the access policy as JSON — the JWT claim naming
    #: roles (``role_claim``, default ``cognito:groups``), claim values → roles (``roles``),
    #: the scope claim (``scope_claim``), sites → device patterns (``sites``), IAM ARN
    #: patterns → roles (``iam_roles``) and ``deletions_per_day``. Unset: the defaults.
    access_policy: str | None = None
    #: ``on``: the API serves the viewer at ``/viewer`` (docs/viewer.md); needs ``api_auth``
    #: ``jwt`` (a browser cannot sign IAM requests).
    viewer: str = VIEWER_OFF
    #: The OIDC public client id the viewer signs in with (authorization code + PKCE at
    #: ``api_jwt_issuer``); the tokens it gets must carry one of ``api_jwt_audience``.
    #: Without it, people paste a token.
    viewer_oidc_client_id: str | None = None
    #: The origin of the identity provider's token endpoint when it is not the issuer's
    #: (Cognito: the user pool's domain, ``https://<prefix>.auth.<region>.amazoncognito.com``):
    #: the viewer's content security policy lets the page connect there and nowhere else.
    viewer_oidc_token_origin: str | None = None
    #: Clip exports (docs/playback.md): days an export is kept, the export Lambda's
    #: memory and ephemeral storage, and the largest export (the sum of its files).
    export_retention_days: int = 7
    export_memory_mb: int = 3008
    export_ephemeral_storage_mb: int = 10240
    max_export_bytes: int = DEFAULT_MAX_EXPORT_BYTES
    #: Share links (docs/shares.md): the longest window a share shows (seconds of video,
    #: at most 6 hours, an export's) and the longest a link lives (seconds; at most the
    #: export retention, so a share's download outlives it).
    share_max_window_seconds: int = DEFAULT_SHARE_MAX_WINDOW_SECONDS
    share_max_lifetime_seconds: int = DEFAULT_SHARE_MAX_LIFETIME_SECONDS
    #: When the reconcile state machine runs (EventBridge Scheduler expression, UTC). It
    #: also runs whenever a new inventory report lands.
    reconcile_schedule: str = "cron(30 4 * * ? *)"
    #: Distributed Map of reconcile and rebuild: parallel child executions, partitions per
    #: child execution, and the share of failed child executions tolerated before the run fails.
    reconcile_max_concurrency: int = 10
    reconcile_batch_size: int = 25
    reconcile_tolerated_failure_percent: int = 5
    #: Safety threshold: a run that would remove more than this share of the read model
    #: stops unless forced (docs/operations.md).
    reconcile_max_remove_share: float = DEFAULT_MAX_REMOVE_SHARE
    #: Reconcile/rebuild Lambda timeout and memory (1769 MB is one full vCPU).
    reconcile_timeout_seconds: int = 900
    reconcile_memory_mb: int = 1769
    #: The fingerprint and reduce maps of the distributed plan (docs/operations.md, "At
    #: fleet scale"): parallel children, and the ops Lambda's /tmp, which holds one
    #: inventory data file at a time (checked against its MD5 before it is read).
    reconcile_fingerprint_concurrency: int = 100
    reconcile_ephemeral_storage_mb: int = 10240
    #: An existing annotations table to use instead of the stack's own, e.g. one restored
    #: from a point-in-time backup (docs/annotations.md); ``None``: the stack's table.
    annotations_table_name: str | None = None
    #: Replication of ``v1/`` to a replica bucket (docs/deletion.md): ``off``, ``on``, or
    #: ``paused`` (replica and role kept, the rule disabled: the restore order).
    replication: str = REPLICATION_OFF
    #: Physical name of the replica bucket; ``None`` lets CloudFormation generate one.
    replica_bucket_name: str | None = None

    def __post_init__(self) -> None:
        validate(self)

    # --- construction ------------------------------------------------------------------------

    @classmethod
    def from_context(cls, scope: Construct) -> StackSettings:
        """Defaults overridden by whatever CDK context keys named like the fields are set.

        Context given with ``-c key=value`` arrives as a string, context from
        ``cdk.json`` may be a JSON number; both are accepted for whole-number settings.
        """
        overrides: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            raw = scope.node.try_get_context(field.name)
            if raw is None:
                continue
            default = field.default
            if isinstance(default, float):
                overrides[field.name] = parse_float(field.name, raw)
            elif isinstance(default, int) and not isinstance(default, bool):
                overrides[field.name] = parse_int(field.name, raw)
            else:
                value = parse_optional_str(field.name, raw)
                if value is None and default is not None:
                    fail(field.name, "must not be empty")
                overrides[field.name] = value
        return cls(**overrides)

    # --- derived values ----------------------------------------------------------------------

    @property
    def retention_days(self) -> Mapping[str, int]:
        """Lifecycle retention in days per key kind (``video``, ``sensor``, ``analysis``)."""
        return {kind: getattr(self, f"retention_days_{kind}") for kind in KINDS}

    @property
    def silent_after_seconds(self) -> Mapping[str, int]:
        return {kind: getattr(self, f"silent_after_seconds_{kind}") for kind in KINDS}

    @property
    def queue_visibility_timeout_seconds(self) -> int:
        return queue.visibility_timeout_seconds(self.ingest_timeout_seconds)

    @property
    def api_name(self) -> str:
        """Name of the HTTP API: the stack's name, so several stacks stay apart in the console."""
        return f"{self.stack_name}-api"

    @property
    def cors_origins(self) -> tuple[str, ...]:
        """The allowed viewer origins (``viewer_origins`` split at commas)."""
        return split_list(self.viewer_origins)

    @property
    def viewer_enabled(self) -> bool:
        return self.viewer == VIEWER_ON

    @property
    def api_jwt_audiences(self) -> tuple[str, ...]:
        """The accepted JWT audiences (``api_jwt_audience`` split at commas)."""
        return split_list(self.api_jwt_audience)

    @property
    def log_retention(self) -> logs.RetentionDays:
        return LOG_RETENTION[self.log_retention_days]

    def powertools_layer_arn(self, region: str) -> str:
        """ARN of the public Powertools layer in ``region`` (a token in an env-agnostic stack)."""
        return (
            f"arn:aws:lambda:{region}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
            f"{POWERTOOLS_LAYER_NAME}:{self.powertools_layer_version}"
        )
