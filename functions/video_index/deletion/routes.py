"""The deletion routes of the HTTP API (docs/api.md, docs/deletion.md).

* ``DELETE /devices/{device}/segments?from=&to=&kind=&erase=`` — records a deletion
  request and queues its job: ``202`` with the job and ``Location: /deletions/{id}``.
  A device without segments is an empty job, not an error.
* ``GET /deletions/{deletion_id}`` — the job's progress.
* ``DELETE /deletions/{deletion_id}`` — withdraws the request: a running job stops,
  enforcement ends, nothing comes back by itself.

Who asked: the verified caller (JWT ``sub`` or the IAM principal; locally, the stand-in
authorizer's), never a header. The guards (future windows, erase, the daily quota,
withdrawing others' requests): :mod:`video_index.deletion.guard`, docs/access.md.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from video_index.api import params
from video_index.api.access import policy
from video_index.api.caller import current_caller, hide_outside_scope
from video_index.api.context import optional_service
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import DELETION_REQUEST, DELETION_WITHDRAW, NOT_AUDITED
from video_index.core.errors import ConfigurationError, NotFound
from video_index.core.timeunits import iso_ms
from video_index.deletion import guard
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.model import (
    DELETION_ID_PATTERN,
    MAX_DELETION_WINDOW_MS,
    DeletionRequest,
    DeletionState,
    check_kind,
)

router = Router()  # type: ignore[no-untyped-call]


class DeletionOut(BaseModel):
    """A deletion request and its job (``GET /deletions/{deletion_id}``)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    deletion_id: str
    device: str
    from_: str = Field(alias="from")
    to: str
    kind: str | None
    erase: bool
    state: DeletionState
    deleted: int
    remaining: int | None
    total: int | None
    versions_deleted: int
    #: Keys of the window a hold kept (docs/holds.md).
    kept_held: int = 0
    created_by: str
    created_at: str
    updated_at: str
    error: str | None = None
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None


def deletion_out(request: DeletionRequest) -> DeletionOut:
    return DeletionOut(
        deletion_id=request.deletion_id,
        device=request.device,
        from_=iso_ms(request.from_ms),
        to=iso_ms(request.to_ms),
        kind=request.kind,
        erase=request.erase,
        state=request.state,
        deleted=request.deleted,
        remaining=request.remaining,
        total=request.total,
        versions_deleted=request.versions_deleted,
        kept_held=request.kept_held,
        created_by=request.created_by,
        created_at=request.created_at,
        updated_at=request.updated_at,
        error=request.error,
        withdrawn_by=request.withdrawn_by,
        withdrawn_at=request.withdrawn_at,
    )


def _jobs() -> DeletionJobs:
    jobs = optional_service(DeletionJobs)
    if jobs is None:
        raise ConfigurationError("deletion requests are not configured")
    return jobs


Device = Annotated[str, Path(max_length=64)]
DeletionId = Annotated[str, Path(pattern=DELETION_ID_PATTERN)]
Erase = Annotated[bool, Query()]


@router.delete(
    "/devices/<device>/segments",
    openapi_extensions=allow(Role.OPERATOR, audit=DELETION_REQUEST),
    responses=responses(
        409,
        429,
        success=202,
        ok={
            "description": "The deletion request is recorded and its job queued",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
    ),
)
def delete_segments(
    device: Device,
    from_: params.FromTime = None,
    to: params.Time = None,
    kind: params.KindText = None,
    erase: Erase = False,
) -> Response[Any]:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, MAX_DELETION_WINDOW_MS)
    jobs, caller = _jobs(), current_caller()
    jobs.check_past(end_ms)
    kind = check_kind(kind)
    guard.check_erase(caller, erase)
    request = jobs.create(
        device,
        start_ms,
        end_ms,
        kind=kind,
        erase=erase,
        created_by=caller.principal,
        # spent last, once every check (windows, holds) has passed
        admit=lambda: guard.spend_quota(jobs, caller, policy().deletions_per_day),
    )
    return Response(
        status_code=202,
        content_type="application/json",
        body=deletion_out(request).model_dump(mode="json", by_alias=True),
        headers={"Location": f"/deletions/{request.deletion_id}"},
    )


@router.get(
    "/deletions/<deletion_id>",
    openapi_extensions=allow(Role.OPERATOR, audit=NOT_AUDITED),
    responses=responses(404),
)
def get_deletion(deletion_id: DeletionId) -> DeletionOut:
    return deletion_out(_visible(deletion_id))


@router.delete(
    "/deletions/<deletion_id>",
    openapi_extensions=allow(Role.OPERATOR, audit=DELETION_WITHDRAW),
    responses=responses(404),
)
def withdraw_deletion(deletion_id: DeletionId) -> DeletionOut:
    caller = current_caller()
    guard.check_withdraw(caller, _visible(deletion_id))
    return deletion_out(_jobs().withdraw(deletion_id, caller.principal))


def _visible(deletion_id: str) -> DeletionRequest:
    """The request, or 404 — also when its device is outside the caller's scope."""
    request = _jobs().get(deletion_id)
    hide_outside_scope(request.device, NotFound("deletion_id", f"no deletion {deletion_id}"))
    return request
