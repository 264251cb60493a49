"""Runtime configuration, read from the environment when asked for, never at import time."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.audit import DEFAULT_AUDIT_RETENTION_DAYS
from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS
from video_index.core.contract import (
    ENV_ANNOTATIONS_TABLE,
    ENV_AUDIT_BUCKET,
    ENV_AUDIT_RETENTION_DAYS,
    ENV_AUDIT_TABLE,
    ENV_BUCKET,
    ENV_CLOCK_TOLERANCE_SECONDS,
    ENV_CURSOR_KEY_SECRET,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    ENV_DLQ_URL,
    ENV_EXPORT_QUEUE_URL,
    ENV_EXPORT_SIGNING_KEY,
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
    ENV_SHARE_MAX_LIFETIME_SECONDS,
    ENV_SHARE_MAX_WINDOW_SECONDS,
    ENV_SHARES_TABLE,
    ENV_SILENT_AFTER_SECONDS,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
)
from video_index.core.errors import ConfigurationError
from video_index.core.functions import FunctionSpec
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
#: Share links (docs/shares.md): an hour of video at most, living a week at most.
DEFAULT_SHARE_MAX_WINDOW_SECONDS: Final = 3600
DEFAULT_SHARE_MAX_LIFETIME_SECONDS: Final = 7 * 24 * 3600


#: Each field of :class:`Settings` and the environment variable it is read from.
FIELD_SETTINGS: Final = {
    "bucket": ENV_BUCKET,
    "table": ENV_TABLE,
    "annotations_table": ENV_ANNOTATIONS_TABLE,
    "queue_url": ENV_QUEUE_URL,
    "dlq_url": ENV_DLQ_URL,
    "gap_tolerance_ms": ENV_GAP_TOLERANCE_MS,
    "tombstone_days": ENV_TOMBSTONE_DAYS,
    "presign_seconds": ENV_PRESIGN_SECONDS,
    "fresh_window_seconds": ENV_FRESH_WINDOW_SECONDS,
    "reports_bucket": ENV_REPORTS_BUCKET,
    "inventory_destination": ENV_INVENTORY_DESTINATION,
    "max_remove_share": ENV_MAX_REMOVE_SHARE,
    "export_queue_url": ENV_EXPORT_QUEUE_URL,
    "max_export_bytes": ENV_MAX_EXPORT_BYTES,
    "deletions_table": ENV_DELETIONS_TABLE,
    "deletion_queue_url": ENV_DELETION_QUEUE_URL,
    "replica_bucket": ENV_REPLICA_BUCKET,
    "silent_after_seconds": ENV_SILENT_AFTER_SECONDS,
    "retention_days": ENV_RETENTION_DAYS,
    "holds_table": ENV_HOLDS_TABLE,
    "cursor_key_secret": ENV_CURSOR_KEY_SECRET,
    "clock_tolerance_seconds": ENV_CLOCK_TOLERANCE_SECONDS,
    "shares_table": ENV_SHARES_TABLE,
    "share_max_window_seconds": ENV_SHARE_MAX_WINDOW_SECONDS,
    "share_max_lifetime_seconds": ENV_SHARE_MAX_LIFETIME_SECONDS,
    "export_signing_key": ENV_EXPORT_SIGNING_KEY,
    "audit_bucket": ENV_AUDIT_BUCKET,
    "audit_table": ENV_AUDIT_TABLE,
    "audit_retention_days": ENV_AUDIT_RETENTION_DAYS,
}


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Settings:
    """A deployment's configuration. Made by hand (tests, ``video-index local``), from the
    whole environment (:meth:`from_env`, the command line), or for one deployed function
    (:meth:`for_function`): then only the settings its spec declares can be read, and
    asking for another is a :class:`ConfigurationError` naming it and the function."""

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
    #: Share links (docs/shares.md): their table, the longest window, the longest life.
    shares_table: str | None = None
    share_max_window_seconds: int = DEFAULT_SHARE_MAX_WINDOW_SECONDS
    share_max_lifetime_seconds: int = DEFAULT_SHARE_MAX_LIFETIME_SECONDS
    #: The asymmetric KMS key export manifests are signed with (docs/playback.md#signed-exports).
    export_signing_key: str | None = None
    #: The audit trail (docs/audit.md): its Object Lock bucket and its index table.
    audit_bucket: str | None = None
    audit_table: str | None = None
    audit_retention_days: int = DEFAULT_AUDIT_RETENTION_DAYS

    #: For one function (:meth:`for_function`): its spec; every setting is readable without.
    spec: FunctionSpec | None = None

    def __getattribute__(self, name: str) -> Any:
        setting = FIELD_SETTINGS.get(name)
        if setting is not None:
            spec = object.__getattribute__(self, "spec")
            if spec is not None and setting not in spec.settings:
                raise ConfigurationError(
                    f"{setting} is not declared by the {spec.name} function: add it to its "
                    "spec (video_index/core/functions.py), which also gives it to the function"
                )
        return object.__getattribute__(self, name)

    def __repr__(self) -> str:
        spec = object.__getattribute__(self, "spec")
        shown = [
            f"{name}={object.__getattribute__(self, name)!r}"
            for name, setting in FIELD_SETTINGS.items()
            if spec is None or setting in spec.settings
        ]
        return f"Settings({', '.join(shown)}{f', spec={spec.name!r}' if spec else ''})"

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        required: tuple[str, ...] = (ENV_BUCKET, ENV_TABLE),
    ) -> Settings:
        """The settings of the whole environment (the command line); ``required`` names the
        variables the caller cannot run without."""
        env = os.environ if environ is None else environ
        missing = [name for name in required if not env.get(name)]
        if missing:
            raise ConfigurationError(f"missing environment variable(s): {', '.join(missing)}")
        return cls(**_parsed(env, FIELD_SETTINGS))

    @classmethod
    def for_function(cls, spec: FunctionSpec, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings of the deployed function ``spec`` (docs/deployment.md): only those
        it declares are read, every missing required one is named, and reading an
        undeclared one later raises."""
        env = os.environ if environ is None else environ
        missing = [name for name in spec.required if not env.get(name)]
        if missing:
            raise ConfigurationError(
                f"the {spec.name} function is missing environment variable(s): {', '.join(missing)}"
            )
        declared = {name: s for name, s in FIELD_SETTINGS.items() if s in spec.settings}
        return cls(**{"bucket": "", "table": "", **_parsed(env, declared)}, spec=spec)

    def environ(self) -> dict[str, str]:
        """These settings as the environment a function reads them from (``video-index
        local`` hands each worker :meth:`for_function` of it)."""
        out = {}
        for name, setting in FIELD_SETTINGS.items():
            given = getattr(self, name)
            if given in (None, ""):
                continue
            out[setting] = json.dumps(dict(given)) if isinstance(given, Mapping) else str(given)
        return out


def _parsed(env: Mapping[str, str], fields: Mapping[str, str]) -> dict[str, Any]:
    """The values of ``fields`` (name → variable) in ``env``; a default where unset."""
    out: dict[str, Any] = {}
    for name, setting in fields.items():
        raw = env.get(setting)
        if name in _INTS:
            out[name] = _int(env, setting, _INTS[name])
        elif name == "max_remove_share":
            out[name] = _share(env, setting, DEFAULT_MAX_REMOVE_SHARE)
        elif name in _PER_KIND:
            out[name] = per_kind(raw, _PER_KIND[name], setting)
        elif name in ("bucket", "table"):
            out[name] = raw or ""
        else:
            out[name] = raw or None
    return out


_INTS: Final = {
    "gap_tolerance_ms": DEFAULT_GAP_TOLERANCE_MS,
    "tombstone_days": DEFAULT_TOMBSTONE_DAYS,
    "presign_seconds": DEFAULT_PRESIGN_SECONDS,
    "fresh_window_seconds": DEFAULT_FRESH_WINDOW_SECONDS,
    "max_export_bytes": DEFAULT_MAX_EXPORT_BYTES,
    "clock_tolerance_seconds": DEFAULT_CLOCK_TOLERANCE_SECONDS,
    "share_max_window_seconds": DEFAULT_SHARE_MAX_WINDOW_SECONDS,
    "share_max_lifetime_seconds": DEFAULT_SHARE_MAX_LIFETIME_SECONDS,
    "audit_retention_days": DEFAULT_AUDIT_RETENTION_DAYS,
}
_PER_KIND: Final = {
    "silent_after_seconds": DEFAULT_SILENT_AFTER_SECONDS,
    "retention_days": DEFAULT_RETENTION_DAYS,
}


def _int(env: Mapping[str, str], name: str, default: int) -> int:
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


def _share(env: Mapping[str, str], name: str, default: float) -> float:
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
