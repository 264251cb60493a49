"""Runtime configuration, read from the environment when asked for, never at import time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS
from video_index.core.contract import (
    ENV_ANNOTATIONS_TABLE,
    ENV_BUCKET,
    ENV_CLOCK_TOLERANCE_SECONDS,
    ENV_CURSOR_KEY_SECRET,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    ENV_DLQ_URL,
    ENV_EXPORT_QUEUE_URL,
    ENV_FRESH_WINDOW_SECONDS,
    ENV_GAP_TOLERANCE_MS,
    ENV_HOLDS_TABLE,
    ENV_INVENTORY_DESTINATION,
    ENV_MAX_EXPORT_BYTES,
    ENV_MAX_REMOVE_SHARE,
    ENV_PRESIGN_SECONDS,
    ENV_QUEUE_URL,
    ENV_REPLICA_BUCKET,
    ENV_REPORTS_BUCKET,
    ENV_RETENTION_DAYS,
    ENV_SILENT_AFTER_SECONDS,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
)
from video_index.core.errors import ConfigurationError
from video_index.core.silence import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_SILENT_AFTER_SECONDS,
    per_kind,
)

DEFAULT_GAP_TOLERANCE_MS: Final = 1000
#: How long a deleted key's tombstone (its last sequencer) is kept. It must outlive
#: any redelivery of an older event for the key: SQS keeps messages at most 14 days
#: in the queue and 14 more in the DLQ before a redrive.
DEFAULT_TOMBSTONE_DAYS: Final = 35
#: Presigned segment URLs are short-lived (docs/testing.md).
DEFAULT_PRESIGN_SECONDS: Final = 900
#: Reconcile refuses to remove more than this share of the read model unless forced.
DEFAULT_MAX_REMOVE_SHARE: Final = 0.1
#: How far back the API merges a live S3 listing into answers (docs/api.md).
DEFAULT_FRESH_WINDOW_SECONDS: Final = 900
#: The largest clip export (the sum of its source files), docs/playback.md.
DEFAULT_MAX_EXPORT_BYTES: Final = 2 * 1024**3


@dataclass(frozen=True, slots=True)
class Settings:
    bucket: str
    table: str
    annotations_table: str | None = None
    queue_url: str | None = None
    dlq_url: str | None = None
    gap_tolerance_ms: int = DEFAULT_GAP_TOLERANCE_MS
    tombstone_days: int = DEFAULT_TOMBSTONE_DAYS
    presign_seconds: int = DEFAULT_PRESIGN_SECONDS
    fresh_window_seconds: int = DEFAULT_FRESH_WINDOW_SECONDS
    reports_bucket: str | None = None
    inventory_destination: str | None = None
    max_remove_share: float = DEFAULT_MAX_REMOVE_SHARE
    export_queue_url: str | None = None
    max_export_bytes: int = DEFAULT_MAX_EXPORT_BYTES
    #: Deletion requests (docs/deletion.md): their table, the job queue, the replica bucket.
    deletions_table: str | None = None
    deletion_queue_url: str | None = None
    replica_bucket: str | None = None
    #: Per kind: silence after this many seconds without a new file (0: never), and the
    #: retention the stack's lifecycle applies (shown by ``/devices/{d}``).
    silent_after_seconds: Mapping[str, int] = field(
        default_factory=lambda: dict(DEFAULT_SILENT_AFTER_SECONDS)
    )
    retention_days: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_RETENTION_DAYS))
    #: Evidence holds (docs/holds.md).
    holds_table: str | None = None
    #: The secret the API's page cursors are sealed with (docs/api.md#pages-and-cursors).
    cursor_key_secret: str | None = None
    #: How far a file may end after S3 received it before its camera's clock is ahead
    #: (docs/operations.md#camera-clocks).
    clock_tolerance_seconds: int = DEFAULT_CLOCK_TOLERANCE_SECONDS

    @classmethod
    def from_env(
        cls,
        environ: dict[str, str] | None = None,
        required: tuple[str, ...] = (ENV_BUCKET, ENV_TABLE),
    ) -> Settings:
        """The settings of the environment; ``required`` names the variables the caller
        cannot run without (a function without a table, like the export worker, leaves
        ``VIDEO_INDEX_TABLE`` out)."""
        env = os.environ if environ is None else environ
        missing = [name for name in required if not env.get(name)]
        if missing:
            raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")
        return cls(
            bucket=env.get(ENV_BUCKET, ""),
            table=env.get(ENV_TABLE, ""),
            annotations_table=env.get(ENV_ANNOTATIONS_TABLE) or None,
            queue_url=env.get(ENV_QUEUE_URL) or None,
            dlq_url=env.get(ENV_DLQ_URL) or None,
            gap_tolerance_ms=_int(env, ENV_GAP_TOLERANCE_MS, DEFAULT_GAP_TOLERANCE_MS),
            tombstone_days=_int(env, ENV_TOMBSTONE_DAYS, DEFAULT_TOMBSTONE_DAYS),
            presign_seconds=_int(env, ENV_PRESIGN_SECONDS, DEFAULT_PRESIGN_SECONDS),
            fresh_window_seconds=_int(env, ENV_FRESH_WINDOW_SECONDS, DEFAULT_FRESH_WINDOW_SECONDS),
            reports_bucket=env.get(ENV_REPORTS_BUCKET) or None,
            inventory_destination=env.get(ENV_INVENTORY_DESTINATION) or None,
            max_remove_share=_share(env, ENV_MAX_REMOVE_SHARE, DEFAULT_MAX_REMOVE_SHARE),
            export_queue_url=env.get(ENV_EXPORT_QUEUE_URL) or None,
            max_export_bytes=_int(env, ENV_MAX_EXPORT_BYTES, DEFAULT_MAX_EXPORT_BYTES),
            deletions_table=env.get(ENV_DELETIONS_TABLE) or None,
            deletion_queue_url=env.get(ENV_DELETION_QUEUE_URL) or None,
            replica_bucket=env.get(ENV_REPLICA_BUCKET) or None,
            silent_after_seconds=per_kind(
                env.get(ENV_SILENT_AFTER_SECONDS),
                DEFAULT_SILENT_AFTER_SECONDS,
                ENV_SILENT_AFTER_SECONDS,
            ),
            retention_days=per_kind(
                env.get(ENV_RETENTION_DAYS), DEFAULT_RETENTION_DAYS, ENV_RETENTION_DAYS
            ),
            holds_table=env.get(ENV_HOLDS_TABLE) or None,
            cursor_key_secret=env.get(ENV_CURSOR_KEY_SECRET) or None,
            clock_tolerance_seconds=_int(
                env, ENV_CLOCK_TOLERANCE_SECONDS, DEFAULT_CLOCK_TOLERANCE_SECONDS
            ),
        )


def _int(env: os._Environ[str] | dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number, got {raw!r}") from None
    if value < 0:
        raise ConfigurationError(f"{name} must not be negative, got {value}")
    return value


def _share(env: os._Environ[str] | dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number between 0 and 1, got {raw!r}") from None
    if not 0 <= value <= 1:
        raise ConfigurationError(f"{name} must be between 0 and 1, got {value}")
    return value
