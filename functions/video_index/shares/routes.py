"""The share routes for signed-in operators (docs/shares.md): create, list, revoke.

``POST /devices/{device}/shares`` (operator, within the caller's scope: the decision
answers 404 for a device outside it) answers 201 with the share, its ``url`` (the
viewer's read-only page, the secret in the URL's *fragment*, which a browser never
sends) and its ``playlist_url`` (any HLS player, no sign-in; the secret in the query,
which the API's access log does not record). ``GET /devices/{device}/shares`` lists a
device's shares (never a secret: none is stored); ``DELETE /shares/{share_id}`` revokes
one at once (its creator or an admin).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict, Field

from video_index.api import params
from video_index.api.caller import current_caller, hide_outside_scope
from video_index.api.context import optional_service, service
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import SHARE_CREATE, SHARE_LIST, SHARE_REVOKE
from video_index.core.contract import ENV_SHARES_TABLE
from video_index.core.errors import ConfigurationError, NotFound
from video_index.media.exports import Exports, VideoEntries
from video_index.shares.model import SHARE_ID_PATTERN, Share
from video_index.shares.service import Shares

router = Router()  # type: ignore[no-untyped-call]

#: The viewer's read-only page of a share (``#<share id>.<secret>``).
SHARE_PAGE: Final = "/viewer/share.html"
ShareId = Annotated[str, Path(pattern=SHARE_ID_PATTERN, max_length=32)]


class ShareRequest(BaseModel):
    """``POST /devices/{device}/shares``: the window, the link's life, and whether its
    holder may download the window as an MP4."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    from_: str = Field(alias="from", max_length=params.MAX_TIME_LENGTH)
    to: str = Field(max_length=params.MAX_TIME_LENGTH)
    expires_in_s: int = Field(ge=1, le=10**9)
    download: bool = False


def shares() -> Shares:
    """The shares service; without its table every share route refuses (503) naming it."""
    found = optional_service(Shares)
    if found is None:
        raise ConfigurationError(f"{ENV_SHARES_TABLE} is not set: share links cannot be served")
    return found


def origin() -> str:
    """The API's origin as the caller reached it (API Gateway's domain name and scheme)."""
    event = router.current_event
    context = event.get("requestContext") or {}
    host = context.get("domainName") or event.headers.get("host") or ""
    scheme = event.headers.get("x-forwarded-proto") or "https"
    return f"{scheme}://{host}" if host else ""


def links(share: Share, secret: str) -> dict[str, str]:
    """The share's links, each carrying the secret where no log records it."""
    base = origin()
    out = {
        "url": f"{base}{SHARE_PAGE}#{share.share_id}.{secret}",
        "playlist_url": f"{base}/shares/{share.share_id}/playlist.m3u8?key={secret}",
    }
    if share.download:
        out["download_url"] = f"{base}/shares/{share.share_id}/download?key={secret}"
    return out


@router.post(
    "/devices/<device>/shares",
    openapi_extensions=allow(Role.OPERATOR, audit=SHARE_CREATE),
    responses=responses(409, 413, 415, success=201),
)
def create_share(device: str, request: Annotated[ShareRequest, Body()]) -> Response[Any]:
    device = params.device(device)
    found = shares()
    start_ms = params.instant(request.from_, "from")
    end_ms = params.instant(request.to, "to")
    found.check(start_ms, end_ms, request.expires_in_s)
    principal = current_caller().principal
    export_id = None
    if request.download:  # the clip is made once, now; its holder downloads it later
        entries = list(service(VideoEntries)(device, start_ms, end_ms))
        export_id = service(Exports).create(device, start_ms, end_ms, entries, principal).export_id
    share, secret = found.create(
        device, start_ms, end_ms, request.expires_in_s, principal, export_id
    )
    body = {**share.public(found.now_ms()), **links(share, secret)}
    return Response(
        status_code=201,
        content_type="application/json",
        body=body,
        headers={"Cache-Control": "no-store"},
    )


@router.get(
    "/devices/<device>/shares",
    openapi_extensions=allow(Role.OPERATOR, audit=SHARE_LIST),
    responses=responses(),
)
def list_shares(device: str) -> Any:
    device = params.device(device)
    found = shares()
    now = found.now_ms()
    return {"items": [s.public(now) for s in found.of_device(device)]}


@router.delete(
    "/shares/<share_id>",
    openapi_extensions=allow(Role.OPERATOR, audit=SHARE_REVOKE),
    responses=responses(404),
)
def revoke_share(share_id: ShareId) -> Any:
    """Revoke: by the share's creator or an admin (403 for anyone else)."""
    caller, found = current_caller(), shares()
    share = found.get(share_id)
    hide_outside_scope(share.device, NotFound("share_id", f"no share {share_id}"))
    revoked = found.revoke(share.share_id, caller.principal, caller.has(Role.ADMIN))
    return revoked.public(found.now_ms())
