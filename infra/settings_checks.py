"""The checks of :class:`~infra.settings.StackSettings`: every value in range, every name
well formed, the settings consistent with each other, so a bad value stops synthesis
with an error that names its context key; and the parsing of context values."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NoReturn

from infra.limits import (
    _SCHEDULE_RE,
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
    VIEWER_OFF,
    VIEWER_ON,
)
from video_index.core.access_policy import AccessPolicy
from video_index.core.keys import KINDS

if TYPE_CHECKING:
    from infra.settings import StackSettings

#: The values of the ``replication`` setting.
REPLICATION_OFF: Final = "off"
REPLICATION_ON: Final = "on"
REPLICATION_PAUSED: Final = "paused"
REPLICATION_MODES: Final = (REPLICATION_OFF, REPLICATION_ON, REPLICATION_PAUSED)

_BUCKET_NAME_RE: Final = re.compile(r"^(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_EMAIL_RE: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_STACK_NAME_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
#: A viewer origin: https only (a page over http would hand its tokens to the network).
_ORIGIN_RE: Final = re.compile(r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
_TABLE_NAME_RE: Final = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")


class SettingsError(ValueError):
    """A context value is malformed or out of range; the message names the context key."""


def validate(settings: StackSettings) -> None:
    """Raise :class:`SettingsError` naming the context key of the first bad value."""
    if not _STACK_NAME_RE.fullmatch(settings.stack_name):
        fail("stack_name", "must start with a letter and hold only letters, digits and -")
    if settings.bucket_name is not None and not _BUCKET_NAME_RE.fullmatch(settings.bucket_name):
        fail("bucket_name", f"{settings.bucket_name!r} is not a valid S3 bucket name")
    if settings.alarm_email is not None and not _EMAIL_RE.fullmatch(settings.alarm_email):
        fail("alarm_email", f"{settings.alarm_email!r} is not an e-mail address")
    for kind in KINDS:
        _check_range(f"retention_days_{kind}", getattr(settings, f"retention_days_{kind}"), 1)
    _check_range("noncurrent_version_expiry_days", settings.noncurrent_version_expiry_days, 1)
    _check_range("abort_incomplete_upload_days", settings.abort_incomplete_upload_days, 1)
    _check_range("inventory_retention_days", settings.inventory_retention_days, 2)
    _check_range("access_log_retention_days", settings.access_log_retention_days, 1)
    _check_range("audit_retention_days", settings.audit_retention_days, 1, 36_500)
    _check_range("ingest_timeout_seconds", settings.ingest_timeout_seconds, 1, 900)
    _check_range("ingest_memory_mb", settings.ingest_memory_mb, 128, 10240)
    _check_range(
        "sqs_max_batching_window_seconds", settings.sqs_max_batching_window_seconds, 0, 300
    )
    # Lambda only accepts more than 10 SQS records per batch with a batching window.
    max_batch = 10 if settings.sqs_max_batching_window_seconds == 0 else 10_000
    _check_range("sqs_batch_size", settings.sqs_batch_size, 1, max_batch)
    _check_range("max_receive_count", settings.max_receive_count, 1, 1000)
    _check_range("queue_retention_days", settings.queue_retention_days, 1, DLQ_RETENTION_DAYS - 1)
    _check_range("gap_tolerance_ms", settings.gap_tolerance_ms, 0)
    # A tombstone must outlive every redelivery of an older event for its key: the
    # longest an event can wait is its time in the queue plus its time in the DLQ.
    _check_range(
        "tombstone_days",
        settings.tombstone_days,
        settings.queue_retention_days + DLQ_RETENTION_DAYS + 1,
    )
    if settings.log_retention_days not in LOG_RETENTION:
        allowed = ", ".join(str(days) for days in LOG_RETENTION)
        fail("log_retention_days", f"must be one of {allowed}, got {settings.log_retention_days}")
    _check_range("powertools_layer_version", settings.powertools_layer_version, 1)
    _validate_api(settings)
    _validate_aggregation(settings)
    _validate_reconcile(settings)
    if settings.annotations_table_name is not None and not _TABLE_NAME_RE.fullmatch(
        settings.annotations_table_name
    ):
        fail(
            "annotations_table_name",
            f"{settings.annotations_table_name!r} is not a DynamoDB table name "
            "(3-255 characters of A-Z a-z 0-9 _ . -)",
        )
    _validate_replication(settings)


def _validate_api(settings: StackSettings) -> None:
    if settings.api_auth not in API_AUTH_MODES:
        allowed = ", ".join(repr(mode) for mode in API_AUTH_MODES)
        fail("api_auth", f"must be one of {allowed}, got {settings.api_auth!r}")
    if settings.api_auth == API_AUTH_JWT:
        if settings.api_jwt_issuer is None:
            fail("api_jwt_issuer", "is required when api_auth is 'jwt'")
        if not re.fullmatch(r"https://[^\s/]+(/\S*)?", settings.api_jwt_issuer):
            fail("api_jwt_issuer", f"must be an https:// URL, got {settings.api_jwt_issuer!r}")
        if not settings.api_jwt_audiences:
            fail("api_jwt_audience", "is required when api_auth is 'jwt'")
    else:
        # A JWT setting that has no effect is a misconfiguration, not a no-op: the
        # deployer believes tokens are checked while the API expects SigV4.
        for key in ("api_jwt_issuer", "api_jwt_audience"):
            if getattr(settings, key) is not None:
                fail(key, f"is only used when api_auth is 'jwt', not {settings.api_auth!r}")
    _check_range("api_throttle_rate", settings.api_throttle_rate, 1)
    _check_range("api_throttle_burst", settings.api_throttle_burst, 1)
    _check_range(
        "api_timeout_seconds", settings.api_timeout_seconds, 1, API_INTEGRATION_TIMEOUT_SECONDS
    )
    _check_range("api_memory_mb", settings.api_memory_mb, 128, 10240)
    _check_range("presign_seconds", settings.presign_seconds, 1, MAX_PRESIGN_SECONDS)
    _check_range("fresh_window_seconds", settings.fresh_window_seconds, 1, MAX_FRESH_WINDOW_SECONDS)
    for origin in settings.cors_origins:
        if not _ORIGIN_RE.fullmatch(origin):
            fail("viewer_origins", f"{origin!r} is not an origin like https://host[:port]")
    _validate_viewer(settings)
    if settings.access_policy is not None:
        try:
            AccessPolicy.from_json(settings.access_policy)
        except ValueError as exc:
            fail("access_policy", f"is not a valid access policy: {exc}")
    _check_range("export_retention_days", settings.export_retention_days, 1)
    _check_range("export_memory_mb", settings.export_memory_mb, 128, 10240)
    _check_range("export_ephemeral_storage_mb", settings.export_ephemeral_storage_mb, 512, 10240)
    _check_range("max_export_bytes", settings.max_export_bytes, 1)
    # Share links (docs/shares.md): a window an export can make, a life its clip outlives.
    _check_range("share_max_window_seconds", settings.share_max_window_seconds, 1, 6 * 3600)
    _check_range(
        "share_max_lifetime_seconds",
        settings.share_max_lifetime_seconds,
        1,
        settings.export_retention_days * 86400,
    )


def _validate_aggregation(settings: StackSettings) -> None:
    _check_range(
        "aggregation_batch_size", settings.aggregation_batch_size, 1, MAX_STREAM_BATCH_SIZE
    )
    window = settings.aggregation_max_batching_window_seconds
    _check_range(
        "aggregation_max_batching_window_seconds", window, 0, MAX_STREAM_BATCHING_WINDOW_SECONDS
    )
    _check_range(
        "aggregation_retry_attempts",
        settings.aggregation_retry_attempts,
        0,
        MAX_STREAM_RETRY_ATTEMPTS,
    )
    _check_range("aggregation_timeout_seconds", settings.aggregation_timeout_seconds, 1, 900)
    _check_range("aggregation_memory_mb", settings.aggregation_memory_mb, 128, 10240)
    # window < lag alarm < fresh window: a batch may wait the window by design, and
    # the API covers only fresh_window_seconds of changes with S3 listings, so a lag
    # it would not cover must page before it happens.
    lag = settings.aggregation_lag_alarm_seconds
    if lag <= window:
        fail(
            "aggregation_lag_alarm_seconds",
            f"must be greater than aggregation_max_batching_window_seconds ({window}): "
            f"every batch may wait that long by design, got {lag}",
        )
    if lag >= settings.fresh_window_seconds:
        fail(
            "aggregation_lag_alarm_seconds",
            f"must be less than fresh_window_seconds ({settings.fresh_window_seconds}): the "
            "API merges S3 listings only that far back, so the alarm must fire before "
            f"the lag outgrows it, got {lag}",
        )


def _validate_viewer(settings: StackSettings) -> None:
    if settings.viewer not in (VIEWER_ON, VIEWER_OFF):
        fail("viewer", f"must be 'on' or 'off', got {settings.viewer!r}")
    if settings.viewer_enabled and settings.api_auth != API_AUTH_JWT:
        fail("viewer", "needs api_auth 'jwt': a page in a browser cannot sign IAM requests")
    if settings.viewer_oidc_client_id is not None and not settings.viewer_enabled:
        fail("viewer_oidc_client_id", "is only used when viewer is 'on'")
    token_origin = settings.viewer_oidc_token_origin
    if token_origin is not None:
        if settings.viewer_oidc_client_id is None:
            fail("viewer_oidc_token_origin", "is only used with viewer_oidc_client_id")
        if not _ORIGIN_RE.fullmatch(token_origin):
            fail(
                "viewer_oidc_token_origin",
                f"{token_origin!r} is not an origin like https://host[:port]",
            )


def _validate_reconcile(settings: StackSettings) -> None:
    if not _SCHEDULE_RE.fullmatch(settings.reconcile_schedule):
        fail(
            "reconcile_schedule",
            "must be an EventBridge Scheduler cron(...) (six fields) or rate(...) "
            f"expression, got {settings.reconcile_schedule!r}",
        )
    _check_range(
        "reconcile_max_concurrency", settings.reconcile_max_concurrency, 1, MAX_MAP_CONCURRENCY
    )
    _check_range("reconcile_batch_size", settings.reconcile_batch_size, 1, MAX_MAP_BATCH_SIZE)
    _check_range(
        "reconcile_tolerated_failure_percent", settings.reconcile_tolerated_failure_percent, 0, 100
    )
    # A share of 0 would refuse every removal; above 1 is not a share.
    if not 0 < settings.reconcile_max_remove_share <= 1:
        fail(
            "reconcile_max_remove_share",
            f"must be greater than 0 and at most 1, got {settings.reconcile_max_remove_share}",
        )
    _check_range("reconcile_timeout_seconds", settings.reconcile_timeout_seconds, 1, 900)
    _check_range("reconcile_memory_mb", settings.reconcile_memory_mb, 128, 10240)
    _check_range(
        "reconcile_fingerprint_concurrency",
        settings.reconcile_fingerprint_concurrency,
        1,
        MAX_MAP_CONCURRENCY,
    )
    _check_range(
        "reconcile_ephemeral_storage_mb", settings.reconcile_ephemeral_storage_mb, 512, 10240
    )


def _validate_replication(settings: StackSettings) -> None:
    if settings.replication not in REPLICATION_MODES:
        allowed = ", ".join(repr(mode) for mode in REPLICATION_MODES)
        fail("replication", f"must be one of {allowed}, got {settings.replication!r}")
    if settings.replica_bucket_name is not None:
        if settings.replication == REPLICATION_OFF:
            fail("replica_bucket_name", "is only used when replication is 'on' or 'paused'")
        if not _BUCKET_NAME_RE.fullmatch(settings.replica_bucket_name):
            fail(
                "replica_bucket_name",
                f"{settings.replica_bucket_name!r} is not a valid S3 bucket name",
            )
        if settings.replica_bucket_name == settings.bucket_name:
            fail("replica_bucket_name", "must differ from bucket_name")


def fail(key: str, problem: str) -> NoReturn:
    raise SettingsError(f"context key {key!r}: {problem}")


def _check_range(key: str, value: int, low: int, high: int | None = None) -> None:
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"between {low} and {high}"
        fail(key, f"must be {bounds}, got {value}")


def parse_int(key: str, raw: object) -> int:
    if isinstance(raw, bool):
        fail(key, f"must be a whole number, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+\s*", raw):
        return int(raw)
    fail(key, f"must be a whole number, got {raw!r}")


def parse_float(key: str, raw: object) -> float:
    if isinstance(raw, bool):
        fail(key, f"must be a number, got {raw!r}")
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?(\d+(\.\d*)?|\.\d+)\s*", raw):
        return float(raw)
    fail(key, f"must be a number, got {raw!r}")


def split_list(raw: str | None) -> tuple[str, ...]:
    return tuple(item.strip() for item in (raw or "").split(",") if item.strip())


def parse_optional_str(key: str, raw: object) -> str | None:
    if not isinstance(raw, str):
        fail(key, f"must be a string, got {raw!r}")
    return raw.strip() or None
