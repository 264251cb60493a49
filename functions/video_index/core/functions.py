"""What each deployed function needs, declared once (docs/deployment.md, "What each function gets").

A :class:`FunctionSpec` names a function (its handler, its Powertools service) and its
*needs*: each a setting (an ``ENV_*`` name of :mod:`.contract`) with what the function
does with what the setting names (:class:`Access`), and whether it cannot run without it.
Three sides follow this one declaration, so they cannot drift apart:

* the function: :meth:`video_index.core.settings.Settings.for_function` reads only the
  spec's settings, names every missing required one, and a builder that asks for a
  setting the spec does not declare gets a ``ConfigurationError`` naming it and the
  function (never a silent ``None``);
* the CDK stack (``infra/wiring.py``): each need becomes the function's environment
  variable and, per access, the IAM statements the construct owning the resource
  registered for it; a required need no resource provides fails synthesis;
* ``video-index local``: each worker and the API get the settings of their own spec.

A spec is checked when it is made: a function that may delete under ``v1/`` (``DELETE``
or ``ERASE`` of the segment bucket or its replica) without a required read of the holds
table cannot be declared — this module fails to import, so synthesis fails, and so does
every handler (docs/holds.md: holds win over every deletion).

No AWS here: the handlers import this module, and so does ``infra``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from video_index.core.access import ENV_ACCESS_POLICY
from video_index.core.contract import (
    AGGREGATE_HANDLER,
    AGGREGATE_SERVICE_NAME,
    API_HANDLER,
    API_SERVICE_NAME,
    BULK_HANDLER,
    BULK_SERVICE_NAME,
    DELETION_HANDLER,
    DELETION_SERVICE_NAME,
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
    ENV_REPLICA_BUCKET,
    ENV_REPORTS_BUCKET,
    ENV_RETENTION_DAYS,
    ENV_SHARE_MAX_LIFETIME_SECONDS,
    ENV_SHARE_MAX_WINDOW_SECONDS,
    ENV_SHARES_TABLE,
    ENV_SILENT_AFTER_SECONDS,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
    ENV_VIEWER_CONNECT_ORIGINS,
    ENV_VIEWER_OIDC_CLIENT_ID,
    ENV_VIEWER_OIDC_ISSUER,
    EXPORT_HANDLER,
    EXPORT_SERVICE_NAME,
    INGEST_HANDLER,
    INGEST_SERVICE_NAME,
    MEDIA_HANDLER,
    MEDIA_SERVICE_NAME,
    RECONCILE_HANDLER,
    RECONCILE_SERVICE_NAME,
    RETENTION_HANDLER,
    RETENTION_SERVICE_NAME,
    SILENCE_HANDLER,
    SILENCE_SERVICE_NAME,
)
from video_index.core.errors import ConfigurationError


class Access(StrEnum):
    """What a function does with what a setting names. The construct that owns the
    resource says which IAM statements grant each (``infra/wiring.py``, docs/deployment.md)."""

    #: A plain value (a number, a JSON object, an URI to read a name from): no grant.
    VALUE = "value"
    #: Read: objects under ``v1/`` (and list the bucket), or items of a table.
    READ = "read"
    #: List keys under ``v1/`` only, without reading an object.
    LIST = "list"
    #: Write: objects under ``v1/``, or items of a table.
    WRITE = "write"
    #: Delete: current objects under ``v1/`` (a delete marker), or items of a table.
    DELETE = "delete"
    #: Delete versions and delete markers under ``v1/`` (an erasure; lists versions).
    ERASE = "erase"
    #: Scan a whole table.
    SCAN = "scan"
    #: Read the deletion windows in force, and nothing else of the deletion requests.
    WINDOWS = "windows"
    #: Send messages to a queue.
    SEND = "send"
    #: Sign with an asymmetric KMS key (export manifests).
    SIGN = "sign"
    #: Read the public half of an asymmetric KMS key.
    PUBLIC_KEY = "public-key"


#: Settings that name where footage lives, and the accesses that delete it there.
FOOTAGE_SETTINGS: Final = frozenset({ENV_BUCKET, ENV_REPLICA_BUCKET})
DESTRUCTIVE: Final = frozenset({Access.DELETE, Access.ERASE})


@dataclass(frozen=True, slots=True)
class Need:
    """One setting of a function, what it does with it, and whether it runs without it."""

    setting: str
    access: frozenset[Access]
    required: bool = True

    @property
    def grants(self) -> tuple[Access, ...]:
        """The accesses that need IAM statements, in a stable order."""
        return tuple(sorted(self.access - {Access.VALUE}))


def need(setting: str, *access: Access, required: bool = True) -> Need:
    """``setting`` with ``access`` (at least one)."""
    return Need(setting, frozenset(access), required)


def value(setting: str, *, required: bool = False) -> Need:
    """A plain value; optional unless said (the function has a default for it)."""
    return Need(setting, frozenset({Access.VALUE}), required)


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """One deployed function: its name (docs, tests, ``infra/dependencies.py``), its
    handler, its Powertools service name, and what it needs."""

    name: str
    handler: str
    service: str
    needs: tuple[Need, ...]

    def __post_init__(self) -> None:
        settings = [n.setting for n in self.needs]
        doubled = sorted({s for s in settings if settings.count(s) > 1})
        if doubled:
            raise ConfigurationError(f"function {self.name} declares {', '.join(doubled)} twice")
        for item in self.needs:
            if not item.access or (Access.VALUE in item.access and len(item.access) > 1):
                raise ConfigurationError(
                    f"function {self.name}: {item.setting} is either a plain value or "
                    "accessed, and needs at least one access"
                )
        if self.deletes_footage and not self._reads_holds():
            raise ConfigurationError(
                f"function {self.name} may delete under v1/ but does not require "
                f"{ENV_HOLDS_TABLE} with {Access.READ}: held footage would be deleted "
                "(docs/holds.md)"
            )

    @property
    def deletes_footage(self) -> bool:
        """Whether the function may delete segments or their replica's copies."""
        return any(n.setting in FOOTAGE_SETTINGS and n.access & DESTRUCTIVE for n in self.needs)

    def _reads_holds(self) -> bool:
        holds = self.need(ENV_HOLDS_TABLE)
        return holds is not None and holds.required and Access.READ in holds.access

    @property
    def settings(self) -> frozenset[str]:
        """Every setting the function may read."""
        return frozenset(n.setting for n in self.needs)

    @property
    def required(self) -> tuple[str, ...]:
        """The settings it cannot run without, in declaration order."""
        return tuple(n.setting for n in self.needs if n.required)

    def need(self, setting: str) -> Need | None:
        return next((n for n in self.needs if n.setting == setting), None)

    @property
    def handler_module(self) -> str:
        """The module of the handler (its ``build()`` makes what the handler calls)."""
        return self.handler.rpartition(".")[0]


R, L, W, D, E = Access.READ, Access.LIST, Access.WRITE, Access.DELETE, Access.ERASE

#: What a function that audits needs (docs/audit.md): to add records to the Object Lock
#: bucket and to the index beside it. Required: a function that must audit does not start
#: without them (never "auditing off"). Nothing may change or delete a record, so no
#: other access to either exists.
_AUDITS: Final = (
    need(ENV_AUDIT_BUCKET, W),
    need(ENV_AUDIT_TABLE, W),
    value(ENV_AUDIT_RETENTION_DAYS),  # the index's TTL (the bucket's lock is the stack's)
)

#: The tunables of the read model's writers and readers (defaults in core/settings.py).
_READ_MODEL_VALUES: Final = (value(ENV_GAP_TOLERANCE_MS), value(ENV_TOMBSTONE_DAYS))

INGEST: Final = FunctionSpec(
    "ingest",
    INGEST_HANDLER,
    INGEST_SERVICE_NAME,
    (
        # HEAD and the media probe; enforcement deletes again what a window covers.
        need(ENV_BUCKET, R, D, E),
        need(ENV_TABLE, R, W),
        need(ENV_DLQ_URL, Access.SEND),  # malformed messages are parked there
        need(ENV_DELETIONS_TABLE, Access.WINDOWS),
        need(ENV_HOLDS_TABLE, R),  # a hold keeps what a window covers
        *_READ_MODEL_VALUES,
    ),
)
API: Final = FunctionSpec(
    "api",
    API_HANDLER,
    API_SERVICE_NAME,
    (
        need(ENV_BUCKET, R),  # HEAD, presigned GETs, the freshness merge's listing
        need(ENV_TABLE, R, W),  # reads, and read repair of one key
        need(ENV_ANNOTATIONS_TABLE, R, W, D),
        need(ENV_EXPORT_QUEUE_URL, Access.SEND),
        need(ENV_DELETIONS_TABLE, R, W, D),  # record, read and withdraw requests
        need(ENV_DELETION_QUEUE_URL, Access.SEND),
        need(ENV_HOLDS_TABLE, R, W),  # place, read and release holds
        need(ENV_CURSOR_KEY_SECRET, R),  # seals page cursors (docs/api.md#pages-and-cursors)
        need(ENV_EXPORT_SIGNING_KEY, Access.PUBLIC_KEY),  # GET /exports/public-key
        need(ENV_AUDIT_BUCKET, W),  # every footage read, change and refusal (docs/audit.md)
        need(ENV_AUDIT_TABLE, R, W),  # and GET /audit
        value(ENV_AUDIT_RETENTION_DAYS),
        *_READ_MODEL_VALUES,
        value(ENV_PRESIGN_SECONDS),
        value(ENV_FRESH_WINDOW_SECONDS),
        value(ENV_MAX_EXPORT_BYTES),
        value(ENV_SILENT_AFTER_SECONDS),
        value(ENV_RETENTION_DAYS),
        value(ENV_CLOCK_TOLERANCE_SECONDS),  # a camera's clock ahead (GET /devices/{d})
        value(ENV_ACCESS_POLICY),
        value(ENV_VIEWER_CONNECT_ORIGINS),
        value(ENV_VIEWER_OIDC_ISSUER),
        value(ENV_VIEWER_OIDC_CLIENT_ID),
        # Share links (docs/shares.md): create, read, revoke; a route without the table
        # refuses naming it (503), never serves unchecked.
        need(ENV_SHARES_TABLE, R, L, W, required=False),  # read: by id; list: a device's
        value(ENV_SHARE_MAX_WINDOW_SECONDS),
        value(ENV_SHARE_MAX_LIFETIME_SECONDS),
    ),
)
MEDIA: Final = FunctionSpec(
    "media",
    MEDIA_HANDLER,
    MEDIA_SERVICE_NAME,
    (
        need(ENV_BUCKET, R),
        value(ENV_PRESIGN_SECONDS),
        value(ENV_ACCESS_POLICY),
        need(ENV_SHARES_TABLE, R, required=False),  # a share by its id: its files, frames
        *_AUDITS,
    ),
)
RECONCILE: Final = FunctionSpec(
    "reconcile",
    RECONCILE_HANDLER,
    RECONCILE_SERVICE_NAME,
    (
        need(ENV_BUCKET, R, D, E),  # LIST and HEAD; enforcement deletes again
        need(ENV_TABLE, R, W, D, Access.SCAN),  # repairs, rebuilds, drops generations
        need(ENV_REPORTS_BUCKET, R),
        value(ENV_INVENTORY_DESTINATION, required=True),
        value(ENV_MAX_REMOVE_SHARE),
        need(ENV_DELETIONS_TABLE, Access.WINDOWS, Access.SCAN),
        need(ENV_HOLDS_TABLE, R),  # enforcement, and the census of held footage
        value(ENV_RETENTION_DAYS, required=True),
        *_READ_MODEL_VALUES,
    ),
)
EXPORT: Final = FunctionSpec(
    "export",
    EXPORT_HANDLER,
    EXPORT_SERVICE_NAME,
    (
        need(ENV_BUCKET, R),
        value(ENV_MAX_EXPORT_BYTES),
        need(ENV_EXPORT_SIGNING_KEY, Access.SIGN),  # signs each manifest (no other key use)
    ),
)
DELETION: Final = FunctionSpec(
    "deletion",
    DELETION_HANDLER,
    DELETION_SERVICE_NAME,
    (
        need(ENV_BUCKET, L, D, E),
        need(ENV_DELETIONS_TABLE, R, W),  # the request, its checkpoint and lease
        need(ENV_DELETION_QUEUE_URL, Access.SEND),  # a long job queues its continuation
        need(ENV_HOLDS_TABLE, R),  # read again before every DeleteObjects
        need(ENV_REPLICA_BUCKET, E, required=False),  # an erasure erases there too
    ),
)
AGGREGATE: Final = FunctionSpec(
    "aggregate",
    AGGREGATE_HANDLER,
    AGGREGATE_SERVICE_NAME,
    (need(ENV_TABLE, R, W), *_READ_MODEL_VALUES),
)
SILENCE: Final = FunctionSpec(
    "silence",
    SILENCE_HANDLER,
    SILENCE_SERVICE_NAME,
    (need(ENV_TABLE, R), value(ENV_SILENT_AFTER_SECONDS), *_READ_MODEL_VALUES),
)
BULK: Final = FunctionSpec(
    "bulk",
    BULK_HANDLER,
    BULK_SERVICE_NAME,
    (
        need(ENV_BUCKET, R, W, D, E),  # restore copies in; deletion units delete
        need(ENV_REPORTS_BUCKET, R),
        need(ENV_DELETIONS_TABLE, R, W, Access.WINDOWS),  # record and run requests
        need(ENV_HOLDS_TABLE, R),  # held footage: kept by units, restored by restore
        need(ENV_REPLICA_BUCKET, R, E, required=False),
        *_AUDITS,  # each restore and deletion run leaves a record when it starts
    ),
)
RETENTION: Final = FunctionSpec(
    "retention",
    RETENTION_HANDLER,
    RETENTION_SERVICE_NAME,
    (
        need(ENV_BUCKET, L, D),
        need(ENV_HOLDS_TABLE, R),
        # The stack's retention, never a default: a shorter one would delete footage.
        value(ENV_RETENTION_DAYS, required=True),
        *_AUDITS,  # each run leaves a record
    ),
)

#: Every deployed function (the order of docs/deployment.md's tables).
FUNCTIONS: Final = (
    INGEST,
    API,
    MEDIA,
    RECONCILE,
    EXPORT,
    DELETION,
    AGGREGATE,
    SILENCE,
    BULK,
    RETENTION,
)


def spec_of(handler: str) -> FunctionSpec:
    """The spec of the function running ``handler``."""
    for spec in FUNCTIONS:
        if spec.handler == handler:
            return spec
    raise KeyError(f"no function runs {handler!r}: declare it in video_index/core/functions.py")
