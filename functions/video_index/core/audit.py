"""The audit trail's records, what each route declares, and the log they go to (docs/audit.md).

Pure: no AWS, no HTTP framework. Every request that reads footage, changes what is kept,
or is refused leaves one :class:`AuditRecord`; the decision point
(:mod:`video_index.api.access`) writes it once the answer is known, through the
deployment's :class:`AuditLog` (``video_index.aws.audit``: an Object Lock bucket, the
truth, and an index table beside it). Jobs that change what is kept without a request
(the retention run, bulk restore and deletion) write one too.

Each route declares its audit action beside its access rule,
``openapi_extensions=allow(Role.VIEWER, audit=SEGMENTS_LIST)`` (``x-audit`` in the
OpenAPI document), or :data:`NOT_AUDITED` for a route that reads nothing sensitive; a
refusal is recorded on every route. ``tests/audit/test_audit_declarations.py`` holds the
declarations to a hand-written table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from video_index.core.timeunits import iso_ms

__all__ = ["iso_ms"]

#: The OpenAPI extension each route declares its audit action in (``x-audit``).
AUDIT_EXTENSION: Final = "x-audit"
#: The declaration of a route that reads nothing sensitive (its refusals are still recorded).
NOT_AUDITED: Final = "none"
#: How many days a record is kept unless the stack says otherwise (``audit_retention_days``).
DEFAULT_AUDIT_RETENTION_DAYS: Final = 365

# --- actions: reading footage -----------------------------------------------------------
SEGMENTS_LIST: Final = "segments.list"
SEGMENT_READ: Final = "segment.read"
PLAYLIST_READ: Final = "playlist.read"
LIVE_READ: Final = "live.read"
MEDIA_READ: Final = "media.read"
FRAME_READ: Final = "frame.read"
OVERLAYS_READ: Final = "overlays.read"
EXPORT_CREATE: Final = "export.create"
EXPORT_READ: Final = "export.read"
# --- changing what is kept ----------------------------------------------------------------
DELETION_REQUEST: Final = "deletion.request"
#: A deletion request with ``erase=true`` (the same route, recorded as what it does).
DELETION_ERASE: Final = "deletion.erase"
DELETION_WITHDRAW: Final = "deletion.withdraw"
HOLD_PLACE: Final = "hold.place"
HOLD_RELEASE: Final = "hold.release"
RETENTION_RUN: Final = "retention.run"
RESTORE_START: Final = "restore.start"
BULK_DELETION_START: Final = "bulk-deletion.start"
# --- share links (docs/shares.md): made, listed and revoked by operators, used by anyone --
SHARE_CREATE: Final = "share.create"
SHARE_LIST: Final = "share.list"
SHARE_REVOKE: Final = "share.revoke"
#: A share link opened, its playlist, a file or a frame read (the principal: ``share:<id>``).
SHARE_PLAY: Final = "share.play"
SHARE_DOWNLOAD: Final = "share.download"
# --- the trail itself, and refusals of routes that record nothing else ---------------------
AUDIT_READ: Final = "audit.read"
#: The action of a refused request on a route declared :data:`NOT_AUDITED`.
REQUEST: Final = "request"

#: Every action a record may carry (``GET /audit?action=`` takes one of these).
ACTIONS: Final = (
    SEGMENTS_LIST,
    SEGMENT_READ,
    PLAYLIST_READ,
    LIVE_READ,
    MEDIA_READ,
    FRAME_READ,
    OVERLAYS_READ,
    EXPORT_CREATE,
    EXPORT_READ,
    DELETION_REQUEST,
    DELETION_ERASE,
    DELETION_WITHDRAW,
    HOLD_PLACE,
    HOLD_RELEASE,
    RETENTION_RUN,
    RESTORE_START,
    BULK_DELETION_START,
    SHARE_CREATE,
    SHARE_LIST,
    SHARE_REVOKE,
    SHARE_PLAY,
    SHARE_DOWNLOAD,
    AUDIT_READ,
    REQUEST,
)

OK: Final = "ok"
DENIED: Final = "denied"
ERROR: Final = "error"


def outcome_of(status: int, refused: bool) -> str:
    """``denied`` for a refusal (401, 403, a device outside the scope), ``ok`` for an
    answer below 400, ``error`` for any other."""
    if refused or status in (401, 403):
        return DENIED
    return OK if status < 400 else ERROR


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One audited request or job start. Never holds a URL, a token or a query string:
    only the fields below, each a name, a time or a number."""

    #: Time-ordered and unique: ``<epoch ms, 13 digits>-<request id>``.
    record_id: str
    time: str
    principal: str
    role: str | None
    action: str
    route: str | None
    device: str | None
    window_from: str | None
    window_to: str | None
    outcome: str
    status: int
    request_id: str
    source: str | None

    @property
    def time_ms(self) -> int:
        return int(self.record_id.split("-", 1)[0])

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditRecord:
        fields: dict[str, Any] = {name: data.get(name) for name in cls.__dataclass_fields__}
        fields["status"] = int(fields["status"] or 0)
        return cls(**fields)

    def body(self) -> bytes:
        """The record as stored (one JSON object, keys sorted)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()


def record_id(time_ms: int, request_id: str) -> str:
    return f"{time_ms:013d}-{request_id}"


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """``GET /audit``: records of ``[from_ms, to_ms)``, optionally of one device,
    principal or action; ``position`` continues a page."""

    from_ms: int
    to_ms: int
    device: str | None = None
    principal: str | None = None
    action: str | None = None
    limit: int = 100
    position: str | None = None

    def matches(self, record: AuditRecord) -> bool:
        return all(
            wanted is None or wanted == got
            for wanted, got in (
                (self.device, record.device),
                (self.principal, record.principal),
                (self.action, record.action),
            )
        )


@dataclass(frozen=True, slots=True)
class AuditPage:
    records: list[AuditRecord]
    next_position: str | None


class AuditWriteFailed(Exception):
    """A record could not be written: the request it records is answered 503 instead
    (docs/audit.md#when-a-write-fails). Not a :class:`VideoIndexError`: no route maps it."""


class AuditLog:
    """Where records go and are read from. Writes only ever add: a record is never changed."""

    def now_ms(self) -> int:
        """The time a record is made at (the deployment's clock, injected in tests)."""
        raise NotImplementedError

    def write(self, record: AuditRecord) -> None:
        """Store ``record`` (raise :class:`AuditWriteFailed` when it cannot be stored)."""
        raise NotImplementedError

    def query(self, query: AuditQuery) -> AuditPage:
        """A page of the records ``query`` selects, oldest first."""
        raise NotImplementedError
