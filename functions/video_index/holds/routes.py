"""The hold routes of the HTTP API (docs/holds.md).

``POST /devices/{device}/holds`` creates (201, ``Location``, ``hold_id``);
``GET /devices/{device}/holds?from=&to=`` lists the holds overlapping a window,
released ones included; ``GET /holds/{hold_id}`` reads one with its history;
``DELETE /holds/{hold_id}`` releases it (its creator or an admin; the hold stays,
released). Who: :func:`~video_index.annotations.identity.principal`; an admin is
a caller whose authorizer context says so (:func:`is_admin`).
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from video_index.api import params
from video_index.api.caller import current_caller, hide_outside_scope
from video_index.api.context import optional_service
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import HOLD_PLACE, HOLD_RELEASE, NOT_AUDITED
from video_index.core.contract import ENV_HOLDS_TABLE
from video_index.core.errors import ConfigurationError, NotFound
from video_index.holds.model import Hold, HoldIn, check_hold_id
from video_index.holds.service import Holds

router = Router()  # type: ignore[no-untyped-call]


def _holds() -> Holds:
    holds = optional_service(Holds)
    if holds is None:
        raise ConfigurationError(f"{ENV_HOLDS_TABLE} is not set: holds are off")
    return holds


def _visible(hold_id: str) -> Hold:
    """The hold, or the same 404 as for no hold when its camera lies outside the scope."""
    hold = _holds().get(check_hold_id(hold_id))
    hide_outside_scope(hold.device, NotFound("hold_id", f"no hold {hold_id}"))
    return hold


def _json(status: int, body: Any, **headers: str) -> Response[Any]:
    return Response(status_code=status, content_type="application/json", body=body, headers=headers)


@router.post(
    "/devices/<device>/holds",
    openapi_extensions=allow(Role.OPERATOR, audit=HOLD_PLACE),
    responses=responses(409, 413, 415, success=201),
)
def create_hold(device: str, body: Annotated[HoldIn, Body()]) -> Response[Any]:
    device = params.device(device)
    from_ms, to_ms = params.instant(body.from_, "from"), params.instant(body.to, "to")
    hold = _holds().create(device, from_ms, to_ms, body.reason, current_caller().principal)
    return _json(201, hold.public(), Location=f"/holds/{hold.hold_id}")


@router.get(
    "/devices/<device>/holds",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def list_holds(device: str, from_: params.FromTime = None, to: params.Time = None) -> Any:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    return {"items": [h.public() for h in _holds().window(device, start_ms, end_ms)]}


@router.get(
    "/holds/<hold_id>",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(404),
)
def get_hold(hold_id: str) -> Any:
    return _visible(hold_id).public()


@router.delete(
    "/holds/<hold_id>",
    openapi_extensions=allow(Role.OPERATOR, audit=HOLD_RELEASE),
    responses=responses(404, 409),
)
def release_hold(hold_id: str) -> Any:
    """Release: by the hold's creator or an admin (409 for anyone else, naming the creator)."""
    caller = current_caller()
    hold = _visible(hold_id)
    return _holds().release(hold.hold_id, caller.principal, caller.has(Role.ADMIN)).public()
