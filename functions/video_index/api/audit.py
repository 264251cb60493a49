"""The audit record of each request, written once its answer is known (docs/audit.md).

The decision point (:mod:`video_index.api.access`) notes the route it matched
(:func:`begin`) and whether it refused (:func:`refused`); the resolver hands every answer
to :func:`recorded`, which writes one :class:`~video_index.core.audit.AuditRecord` when

* the route declares an audit action (``x-audit``, beside its ``x-access``), or
* the request was refused (401, 403, a device outside the caller's scope), on any route.

A record that cannot be written is never dropped silently: the answer is replaced by a
503 (the footage URL or the change's answer withheld) and the record is logged as an
error. No secret reaches a record: the route's template, never its query string or URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from aws_lambda_powertools import Logger

from video_index.api.caller import current_caller_or_none
from video_index.api.context import service
from video_index.core.audit import (
    AUDIT_EXTENSION,
    DELETION_ERASE,
    DELETION_REQUEST,
    NOT_AUDITED,
    REQUEST,
    AuditLog,
    AuditRecord,
    AuditWriteFailed,
    iso_ms,
    outcome_of,
    record_id,
)
from video_index.core.errors import VideoIndexError
from video_index.core.timeunits import to_epoch_ms

logger = Logger(child=True)

#: What a request id or principal may hold in a record (anything else is replaced).
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9=_.:@/+-]")
_MAX_TIME_LENGTH: Final = 40
#: The query values pydantic reads as ``True`` for a bool parameter (``erase``).
_TRUE: Final = frozenset({"1", "on", "t", "true", "y", "yes"})


@dataclass(frozen=True, slots=True)
class _Pending:
    route: str
    action: str | None
    device: str | None
    window: tuple[str | None, str | None]
    #: The share link a request uses (``{share_id}``): who uses it when nobody signed in.
    share: str | None = None


_pending: Final[ContextVar[_Pending | None]] = ContextVar("video_index_audit", default=None)
_refused: Final[ContextVar[bool]] = ContextVar("video_index_audit_refused", default=False)


def begin(
    method: str,
    path: str,
    declared: Mapping[str, Any],
    arguments: Mapping[str, str],
    event: Mapping[str, Any],
) -> None:
    """Note the matched route (its template ``path``) for :func:`recorded`."""
    action = declared.get(AUDIT_EXTENSION)
    erase = str(_query(event).get("erase", "")).strip().lower()
    if action == DELETION_REQUEST and erase in _TRUE:  # what the route's bool reads as true
        action = DELETION_ERASE
    template = re.sub(r"<(\w+)>", r"{\1}", path)  # the document's form of the path
    _pending.set(
        _Pending(
            f"{method} {template}",
            None if action == NOT_AUDITED else action,
            arguments.get("device"),
            _window(event),
            arguments.get("share_id"),
        )
    )
    _refused.set(False)


def forget() -> None:
    """No route matched: nothing to record."""
    _pending.set(None)
    _refused.set(False)


def refused() -> None:
    """The decision refused the request (its answer is a denial, whatever the status)."""
    _refused.set(True)


def recorded(event: Mapping[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """``answer``, once its record (if it needs one) is stored; a 503 when it is not."""
    pending = _pending.get()
    _pending.set(None)
    if pending is None:
        return answer
    status = int(answer.get("statusCode", 200))
    outcome = outcome_of(status, _refused.get())
    if pending.action is None and outcome != "denied":
        return answer
    record = None
    try:
        log = service(AuditLog)
        record = _record(event, pending, log.now_ms(), outcome, status)
        log.write(record)
    except (AuditWriteFailed, VideoIndexError) as exc:
        # Not dropped: the record goes to the function's log, and the answer is withheld.
        logger.error(
            "audit record not stored; request refused",
            extra={"audit_record": record.to_json() if record else None, "reason": str(exc)},
        )
        return {
            "statusCode": 503,
            "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
            "body": json.dumps(
                {"error": {"parameter": None, "message": "the audit trail is unavailable, retry"}}
            ),
            "isBase64Encoded": False,
        }
    return answer


def _record(
    event: Mapping[str, Any], pending: _Pending, now_ms: int, outcome: str, status: int
) -> AuditRecord:
    context = event.get("requestContext") or {}
    request_id = _safe(str(context.get("requestId") or "-"))[:64]
    caller = current_caller_or_none()
    return AuditRecord(
        record_id=record_id(now_ms, request_id),
        time=iso_ms(now_ms),
        principal=_principal(caller.principal if caller is not None else None, pending),
        role=caller.role.label if caller is not None and caller.role is not None else None,
        action=pending.action or REQUEST,
        route=pending.route,
        device=pending.device,
        window_from=pending.window[0],
        window_to=pending.window[1],
        outcome=outcome,
        status=status,
        request_id=request_id,
        source=_safe(str((context.get("http") or {}).get("sourceIp") or "")) or None,
    )


def _principal(signed_in: str | None, pending: _Pending) -> str:
    """The caller; without one, the share link used (``share:<id>``, docs/shares.md: its
    holder has no account, the link is who they are) or ``anonymous``."""
    if signed_in is not None:
        return _safe(signed_in)
    return f"share:{_safe(pending.share)[:64]}" if pending.share else "anonymous"


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)[:2048]


def _query(event: Mapping[str, Any]) -> Mapping[str, str]:
    return event.get("queryStringParameters") or {}


def _window(event: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The request's window: ``from``/``to`` of its query or JSON body, or the moment
    ``t``; each only as a time it parses to (never the text as sent)."""
    query = _query(event)
    if "t" in query:
        moment = _time(query["t"])
        return moment, moment
    given: Mapping[str, Any] = query
    if "from" not in query and event.get("body") and not event.get("isBase64Encoded"):
        try:
            body = json.loads(str(event["body"]))
        except (ValueError, RecursionError):  # the body check answers it 400
            body = None
        given = body if isinstance(body, dict) else {}
    return _time(given.get("from")), _time(given.get("to"))


def _time(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > _MAX_TIME_LENGTH:
        return None
    try:
        moment = datetime.fromisoformat(value.replace(" ", "+"))
        return iso_ms(to_epoch_ms(moment)) if moment.tzinfo is not None else None
    except (ValueError, OverflowError):
        return None
