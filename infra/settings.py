"""Deployment settings of the stack: every default in one place, overridable by CDK context.

Each field of :class:`StackSettings` is also the name of the CDK context key that
overrides it (``cdk synth -c retention_days_video=60`` or the ``context`` block of
``cdk.json``). Values are validated when the settings are built, so a bad value
stops synthesis with an error that names the context key, instead of surfacing
later as a CloudFormation rollback.

Names the functions read too (service names, metric namespace, inventory id, key
prefixes) are in :mod:`video_index.core.contract`, so the constructs never spell a
name themselves.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from aws_cdk import aws_logs as logs
from constructs import Construct

import video_index.core.queue_settings as queue
from infra.limits import (
    _SCHEDULE_RE,
    API_AUTH_IAM,
    API_AUTH_JWT,
    API_AUTH_MODES,
    API_INTEGRATION_TIMEOUT_SECONDS,
    DLQ_RETENTION_DAYS,
    LOG_RETENTION,
    MAX_FRESH_WINDOW_SECONDS,
    MAX_MAP_BATCH_SIZE,
    MAX_MAP_CONCURRENCY,
    MAX_PRESIGN_SECONDS,
    MAX_STREAM_BATCH_SIZE,
    MAX_STREAM_BATCHING_WINDOW_SECONDS,
    MAX_STREAM_RETRY_ATTEMPTS,
    POWERTOOLS_LAYER_ACCOUNT,
    POWERTOOLS_LAYER_NAME,
    VIEWER_OFF,
    VIEWER_ON,
)
from video_index.core.access import AccessPolicy
from video_index.core.keys import KINDS
from video_index.core.settings import (
    DEFAULT_FRESH_WINDOW_SECONDS,
    DEFAULT_GAP_TOLERANCE_MS,
    DEFAULT_MAX_EXPORT_BYTES,
    DEFAULT_MAX_REMOVE_SHARE,
    DEFAULT_PRESIGN_SECONDS,
    DEFAULT_TOMBSTONE_DAYS,
)

# --- naming -----------------------------------------------------------------------------------

#: The values of the ``replication`` setting.
REPLICATION_OFF: Final = "off"
REPLICATION_ON: Final = "on"
REPLICATION_PAUSED: Final = "paused"
REPLICATION_MODES: Final = (REPLICATION_OFF, REPLICATION_ON, REPLICATION_PAUSED)

#: Id (and CloudFormation name) of the stack unless ``stack_name`` is given.
DEFAULT_STACK_NAME: Final = "VideoIndex"
#: The names both sides must agree on (service names, prefixes, actions) are in
#: :mod:`video_index.core.contract`.

_BUCKET_NAME_RE: Final = re.compile(r"^(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_EMAIL_RE: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_STACK_NAME_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
#: A viewer origin: https only (a page over http would hand its tokens to the network).
_ORIGIN_RE: Final = re.compile(r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
_TABLE_NAME_RE: Final = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")


class SettingsError(ValueError):
    """A context value is malformed or out of range; the message names the context key."""


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
    #: The undelete window: days a deleted or overwritten version stays recoverable.
    noncurrent_version_expiry_days: int = 7
    #: Days after which an unfinished multipart upload is aborted (its parts cost money).
    abort_incomplete_upload_days: int = 1
    #: Days inventory reports are kept in the reports bucket (reconcile reads the newest).
    inventory_retention_days: int = 14
    #: Days S3 server access logs are kept.
    access_log_retention_days: int = 90
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
    #: Clip exports (docs/playback.md): days an export is kept, the export Lambda's
    #: memory and ephemeral storage, and the largest export (the sum of its files).
    export_retention_days: int = 7
    export_memory_mb: int = 3008
    export_ephemeral_storage_mb: int = 10240
    max_export_bytes: int = DEFAULT_MAX_EXPORT_BYTES
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
        self._validate()

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
                overrides[field.name] = _parse_float(field.name, raw)
            elif isinstance(default, int) and not isinstance(default, bool):
                overrides[field.name] = _parse_int(field.name, raw)
            else:
                value = _parse_optional_str(field.name, raw)
                if value is None and default is not None:
                    _fail(field.name, "must not be empty")
                overrides[field.name] = value
        return cls(**overrides)

    # --- derived values ----------------------------------------------------------------------

    @property
    def retention_days(self) -> Mapping[str, int]:
        """Lifecycle retention in days per key kind (``video``, ``sensor``, ``analysis``)."""
        return {kind: getattr(self, f"retention_days_{kind}") for kind in KINDS}

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
        return _split_list(self.viewer_origins)

    @property
    def viewer_enabled(self) -> bool:
        return self.viewer == VIEWER_ON

    @property
    def api_jwt_audiences(self) -> tuple[str, ...]:
        """The accepted JWT audiences (``api_jwt_audience`` split at commas)."""
        return _split_list(self.api_jwt_audience)

    @property
    def log_retention(self) -> logs.RetentionDays:
        return LOG_RETENTION[self.log_retention_days]

    def powertools_layer_arn(self, region: str) -> str:
        """ARN of the public Powertools layer in ``region`` (a token in an env-agnostic stack)."""
        return (
            f"arn:aws:lambda:{region}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
            f"{POWERTOOLS_LAYER_NAME}:{self.powertools_layer_version}"
        )

    # --- validation --------------------------------------------------------------------------

    def _validate(self) -> None:
        if not _STACK_NAME_RE.fullmatch(self.stack_name):
            _fail("stack_name", "must start with a letter and hold only letters, digits and -")
        if self.bucket_name is not None and not _BUCKET_NAME_RE.fullmatch(self.bucket_name):
            _fail("bucket_name", f"{self.bucket_name!r} is not a valid S3 bucket name")
        if self.alarm_email is not None and not _EMAIL_RE.fullmatch(self.alarm_email):
            _fail("alarm_email", f"{self.alarm_email!r} is not an e-mail address")
        for kind in KINDS:
            _check_range(f"retention_days_{kind}", getattr(self, f"retention_days_{kind}"), 1)
        _check_range("noncurrent_version_expiry_days", self.noncurrent_version_expiry_days, 1)
        _check_range("abort_incomplete_upload_days", self.abort_incomplete_upload_days, 1)
        _check_range("inventory_retention_days", self.inventory_retention_days, 2)
        _check_range("access_log_retention_days", self.access_log_retention_days, 1)
        _check_range("ingest_timeout_seconds", self.ingest_timeout_seconds, 1, 900)
        _check_range("ingest_memory_mb", self.ingest_memory_mb, 128, 10240)
        _check_range(
            "sqs_max_batching_window_seconds", self.sqs_max_batching_window_seconds, 0, 300
        )
        # Lambda only accepts more than 10 SQS records per batch with a batching window.
        max_batch = 10 if self.sqs_max_batching_window_seconds == 0 else 10_000
        _check_range("sqs_batch_size", self.sqs_batch_size, 1, max_batch)
        _check_range("max_receive_count", self.max_receive_count, 1, 1000)
        _check_range("queue_retention_days", self.queue_retention_days, 1, DLQ_RETENTION_DAYS - 1)
        _check_range("gap_tolerance_ms", self.gap_tolerance_ms, 0)
        # A tombstone must outlive every redelivery of an older event for its key: the
        # longest an event can wait is its time in the queue plus its time in the DLQ.
        _check_range(
            "tombstone_days",
            self.tombstone_days,
            self.queue_retention_days + DLQ_RETENTION_DAYS + 1,
        )
        if self.log_retention_days not in LOG_RETENTION:
            allowed = ", ".join(str(days) for days in LOG_RETENTION)
            _fail("log_retention_days", f"must be one of {allowed}, got {self.log_retention_days}")
        _check_range("powertools_layer_version", self.powertools_layer_version, 1)
        self._validate_api()
        self._validate_aggregation()
        self._validate_reconcile()
        if self.annotations_table_name is not None and not _TABLE_NAME_RE.fullmatch(
            self.annotations_table_name
        ):
            _fail(
                "annotations_table_name",
                f"{self.annotations_table_name!r} is not a DynamoDB table name "
                "(3-255 characters of A-Z a-z 0-9 _ . -)",
            )
        self._validate_replication()

    def _validate_api(self) -> None:
        if self.api_auth not in API_AUTH_MODES:
            allowed = ", ".join(repr(mode) for mode in API_AUTH_MODES)
            _fail("api_auth", f"must be one of {allowed}, got {self.api_auth!r}")
        if self.api_auth == API_AUTH_JWT:
            if self.api_jwt_issuer is None:
                _fail("api_jwt_issuer", "is required when api_auth is 'jwt'")
            if not re.fullmatch(r"https://[^\s/]+(/\S*)?", self.api_jwt_issuer):
                _fail("api_jwt_issuer", f"must be an https:// URL, got {self.api_jwt_issuer!r}")
            if not self.api_jwt_audiences:
                _fail("api_jwt_audience", "is required when api_auth is 'jwt'")
        else:
            # A JWT setting that has no effect is a misconfiguration, not a no-op: the
            # deployer believes tokens are checked while the API expects SigV4.
            for key in ("api_jwt_issuer", "api_jwt_audience"):
                if getattr(self, key) is not None:
                    _fail(key, f"is only used when api_auth is 'jwt', not {self.api_auth!r}")
        _check_range("api_throttle_rate", self.api_throttle_rate, 1)
        _check_range("api_throttle_burst", self.api_throttle_burst, 1)
        _check_range(
            "api_timeout_seconds", self.api_timeout_seconds, 1, API_INTEGRATION_TIMEOUT_SECONDS
        )
        _check_range("api_memory_mb", self.api_memory_mb, 128, 10240)
        _check_range("presign_seconds", self.presign_seconds, 1, MAX_PRESIGN_SECONDS)
        _check_range("fresh_window_seconds", self.fresh_window_seconds, 1, MAX_FRESH_WINDOW_SECONDS)
        for origin in self.cors_origins:
            if not _ORIGIN_RE.fullmatch(origin):
                _fail("viewer_origins", f"{origin!r} is not an origin like https://host[:port]")
        self._validate_viewer()
        if self.access_policy is not None:
            try:
                AccessPolicy.from_json(self.access_policy)
            except ValueError as exc:
                _fail("access_policy", f"is not a valid access policy: {exc}")
        _check_range("export_retention_days", self.export_retention_days, 1)
        _check_range("export_memory_mb", self.export_memory_mb, 128, 10240)
        _check_range("export_ephemeral_storage_mb", self.export_ephemeral_storage_mb, 512, 10240)
        _check_range("max_export_bytes", self.max_export_bytes, 1)

    def _validate_aggregation(self) -> None:
        _check_range(
            "aggregation_batch_size", self.aggregation_batch_size, 1, MAX_STREAM_BATCH_SIZE
        )
        window = self.aggregation_max_batching_window_seconds
        _check_range(
            "aggregation_max_batching_window_seconds", window, 0, MAX_STREAM_BATCHING_WINDOW_SECONDS
        )
        _check_range(
            "aggregation_retry_attempts",
            self.aggregation_retry_attempts,
            0,
            MAX_STREAM_RETRY_ATTEMPTS,
        )
        _check_range("aggregation_timeout_seconds", self.aggregation_timeout_seconds, 1, 900)
        _check_range("aggregation_memory_mb", self.aggregation_memory_mb, 128, 10240)
        # window < lag alarm < fresh window: a batch may wait the window by design, and
        # the API covers only fresh_window_seconds of changes with S3 listings, so a lag
        # it would not cover must page before it happens.
        lag = self.aggregation_lag_alarm_seconds
        if lag <= window:
            _fail(
                "aggregation_lag_alarm_seconds",
                f"must be greater than aggregation_max_batching_window_seconds ({window}): "
                f"every batch may wait that long by design, got {lag}",
            )
        if lag >= self.fresh_window_seconds:
            _fail(
                "aggregation_lag_alarm_seconds",
                f"must be less than fresh_window_seconds ({self.fresh_window_seconds}): the "
                "API merges S3 listings only that far back, so the alarm must fire before "
                f"the lag outgrows it, got {lag}",
            )

    def _validate_viewer(self) -> None:
        if self.viewer not in (VIEWER_ON, VIEWER_OFF):
            _fail("viewer", f"must be 'on' or 'off', got {self.viewer!r}")
        if self.viewer_enabled and self.api_auth != API_AUTH_JWT:
            _fail("viewer", "needs api_auth 'jwt': a page in a browser cannot sign IAM requests")
        if self.viewer_oidc_client_id is not None and not self.viewer_enabled:
            _fail("viewer_oidc_client_id", "is only used when viewer is 'on'")

    def _validate_reconcile(self) -> None:
        if not _SCHEDULE_RE.fullmatch(self.reconcile_schedule):
            _fail(
                "reconcile_schedule",
                "must be an EventBridge Scheduler cron(...) (six fields) or rate(...) "
                f"expression, got {self.reconcile_schedule!r}",
            )
        _check_range(
            "reconcile_max_concurrency", self.reconcile_max_concurrency, 1, MAX_MAP_CONCURRENCY
        )
        _check_range("reconcile_batch_size", self.reconcile_batch_size, 1, MAX_MAP_BATCH_SIZE)
        _check_range(
            "reconcile_tolerated_failure_percent", self.reconcile_tolerated_failure_percent, 0, 100
        )
        # A share of 0 would refuse every removal; above 1 is not a share.
        if not 0 < self.reconcile_max_remove_share <= 1:
            _fail(
                "reconcile_max_remove_share",
                f"must be greater than 0 and at most 1, got {self.reconcile_max_remove_share}",
            )
        _check_range("reconcile_timeout_seconds", self.reconcile_timeout_seconds, 1, 900)
        _check_range("reconcile_memory_mb", self.reconcile_memory_mb, 128, 10240)
        _check_range(
            "reconcile_fingerprint_concurrency",
            self.reconcile_fingerprint_concurrency,
            1,
            MAX_MAP_CONCURRENCY,
        )
        _check_range(
            "reconcile_ephemeral_storage_mb", self.reconcile_ephemeral_storage_mb, 512, 10240
        )

    def _validate_replication(self) -> None:
        if self.replication not in REPLICATION_MODES:
            allowed = ", ".join(repr(mode) for mode in REPLICATION_MODES)
            _fail("replication", f"must be one of {allowed}, got {self.replication!r}")
        if self.replica_bucket_name is not None:
            if self.replication == REPLICATION_OFF:
                _fail("replica_bucket_name", "is only used when replication is 'on' or 'paused'")
            if not _BUCKET_NAME_RE.fullmatch(self.replica_bucket_name):
                _fail(
                    "replica_bucket_name",
                    f"{self.replica_bucket_name!r} is not a valid S3 bucket name",
                )
            if self.replica_bucket_name == self.bucket_name:
                _fail("replica_bucket_name", "must differ from bucket_name")


def _fail(key: str, problem: str) -> NoReturn:
    raise SettingsError(f"context key {key!r}: {problem}")


def _check_range(key: str, value: int, low: int, high: int | None = None) -> None:
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"between {low} and {high}"
        _fail(key, f"must be {bounds}, got {value}")


def _parse_int(key: str, raw: object) -> int:
    if isinstance(raw, bool):
        _fail(key, f"must be a whole number, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+\s*", raw):
        return int(raw)
    _fail(key, f"must be a whole number, got {raw!r}")


def _parse_float(key: str, raw: object) -> float:
    if isinstance(raw, bool):
        _fail(key, f"must be a number, got {raw!r}")
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?(\d+(\.\d*)?|\.\d+)\s*", raw):
        return float(raw)
    _fail(key, f"must be a number, got {raw!r}")


def _split_list(raw: str | None) -> tuple[str, ...]:
    return tuple(item.strip() for item in (raw or "").split(",") if item.strip())


def _parse_optional_str(key: str, raw: object) -> str | None:
    if not isinstance(raw, str):
        _fail(key, f"must be a string, got {raw!r}")
    return raw.strip() or None
