"""The hold routes of the HTTP API (docs/holds.md).

``POST /devices/{device}/holds`` creates (201, ``Location``, ``hold_id``);
``GET /devices/{device}/holds?from=&to=`` lists the holds overlapping a window,
released ones included; ``GET /holds/{hold_id}`` reads one with its history;
``DELETE /holds/{hold_id}`` releases it (its creator or an admin; the hold stays,
released). Who: :func:`~video_index.annotations.identity.principal`; an admin is
a caller whose authorizer context says so (:func:`is_admin`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from video_index.annotations.identity import principal
from video_index.api import params
from video_index.api.context import optional_service
from video_index.api.errors import responses
from video_index.core.contract import ENV_HOLDS_TABLE
from video_index.core.errors import ConfigurationError
from video_index.holds.model import HoldIn, check_hold_id
from video_index.holds.service import Holds

#: The group (JWT ``cognito:groups`` or ``groups`` claim, or a Lambda authorizer's
#: ``groups``) whose members may release anyone's hold.
ADMIN_GROUP: Final = "admin"

router = Router()  # type: ignore[no-untyped-call]


def _holds() -> Holds:
    holds = optional_service(Holds)
    if holds is None:
        raise ConfigurationError(f"{ENV_HOLDS_TABLE} is not set: holds are off")
    return holds


def is_admin(event: Mapping[str, Any]) -> bool:
    """Whether the verified caller belongs to :data:`ADMIN_GROUP` (nothing a client sends
    in a header counts)."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    claims = ((authorizer.get("jwt") or {}).get("claims")) or {}
    lambda_context = authorizer.get("lambda") or {}
    for groups in (
        claims.get("cognito:groups"),
        claims.get("groups"),
        lambda_context.get("groups"),
    ):
        if isinstance(groups, str):
            groups = groups.strip("[]").replace(",", " ").split()
        if isinstance(groups, list) and ADMIN_GROUP in groups:
            return True
    return False


def _json(status: int, body: Any, **headers: str) -> Response[Any]:
    return Response(status_code=status, content_type="application/json", body=body, headers=headers)


@router.post("/devices/<device>/holds", responses=responses(409, 413, 415, success=201))
def create_hold(device: str, body: Annotated[HoldIn, Body()]) -> Response[Any]:
    device = params.device(device)
    from_ms, to_ms = params.instant(body.from_, "from"), params.instant(body.to, "to")
    who = principal(router.current_event.raw_event)
    hold = _holds().create(device, from_ms, to_ms, body.reason, who)
    return _json(201, hold.public(), Location=f"/holds/{hold.hold_id}")


@router.get("/devices/<device>/holds", responses=responses())
def list_holds(device: str, from_: params.FromTime = None, to: params.Time = None) -> Any:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    return {"items": [h.public() for h in _holds().window(device, start_ms, end_ms)]}


@router.get("/holds/<hold_id>", responses=responses(404))
def get_hold(hold_id: str) -> Any:
    return _holds().get(check_hold_id(hold_id)).public()


@router.delete("/holds/<hold_id>", responses=responses(404, 409))
def release_hold(hold_id: str) -> Any:
    event = router.current_event.raw_event
    released = _holds().release(check_hold_id(hold_id), principal(event), is_admin(event))
    return released.public()
