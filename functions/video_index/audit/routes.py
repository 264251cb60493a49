"""``GET /audit?from=&to=[&device=][&principal=][&action=][&cursor=][&limit=]`` (admins).

The records of a window (at most :data:`MAX_WINDOW_DAYS` days), oldest first, paged with
a sealed cursor (docs/api.md#pages-and-cursors). Reading the trail is itself recorded
(``audit.read``), so who looked at whom is in the trail too.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel, Field

from video_index.api import params
from video_index.api.context import service
from video_index.api.cursors import opened, sealed
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import ACTIONS, AUDIT_READ, AuditLog, AuditQuery
from video_index.core.errors import BadInput

router = Router()  # type: ignore[no-untyped-call]

#: The longest window one request reads (a page is at most a few Queries per day).
MAX_WINDOW_DAYS: Final = 31


def _purpose(*selection: str | None) -> str:
    """A cursor is good for the same window and filters only."""
    return "\0".join(["audit", *(part or "" for part in selection)])


class AuditRecordOut(BaseModel):
    """One record (docs/audit.md#a-record)."""

    record_id: str
    time: str
    principal: str
    role: str | None
    action: str
    route: str | None
    device: str | None
    window_from: str | None = Field(alias="from")
    window_to: str | None = Field(alias="to")
    outcome: str
    status: int
    request_id: str
    source: str | None


class AuditPageOut(BaseModel):
    items: list[AuditRecordOut]
    next_cursor: str | None


Name = Annotated[str | None, Query(max_length=2048)]
Limit = Annotated[int, Query(ge=1, le=500)]


@router.get(
    "/audit",
    openapi_extensions=allow(Role.ADMIN, audit=AUDIT_READ),
    responses=responses(),
)
def get_audit(
    from_: Annotated[str | None, Query(alias="from")] = None,
    to: Annotated[str | None, Query()] = None,
    device: Name = None,
    principal: Name = None,
    action: Name = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Limit = 100,
) -> AuditPageOut:
    start_ms, end_ms = params.window(from_, to, MAX_WINDOW_DAYS * 24 * 3_600_000)
    if action is not None and action not in ACTIONS:
        raise BadInput("action", f"no action {action!r} (one of {', '.join(ACTIONS)})")
    query = AuditQuery(
        start_ms,
        end_ms,
        device=params.device(device) if device is not None else None,
        principal=principal,
        action=action,
        limit=limit,
        position=opened(cursor, purpose := _purpose(from_, to, device, principal, action)),
    )
    page = service(AuditLog).query(query)
    items: list[dict[str, Any]] = []
    for record in page.records:
        fields = record.to_json()
        fields["from"], fields["to"] = fields.pop("window_from"), fields.pop("window_to")
        items.append(fields)
    return AuditPageOut.model_validate(
        {"items": items, "next_cursor": sealed(page.next_position, purpose)}
    )
