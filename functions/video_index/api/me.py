"""``GET /me``: who the API takes the caller for (docs/access.md).

The caller as the decision point built it (:func:`~video_index.api.caller.current_caller`):
the principal, the role and every role it includes, the actions those roles allow
(:data:`~video_index.core.access.ACTIONS`) and the device scope. The viewer reads it once
at start and shows only the controls of these actions, so the role table lives once, here
on the server; hiding a control is a convenience, every route still decides for itself.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel, Field

from video_index.api.caller import current_caller
from video_index.api.errors import responses
from video_index.core.access import Role, actions_of, allow
from video_index.core.audit import NOT_AUDITED

router = Router()  # type: ignore[no-untyped-call]


class ScopeOut(BaseModel):
    """The devices the caller may see: ``all``, or the device patterns (``fnmatch``, sites
    expanded) that name them."""

    all: bool
    devices: list[str] = Field(description="Device names or patterns; empty when `all`")


class MeOut(BaseModel):
    principal: str = Field(description="The verified caller: a JWT's `sub`, an IAM ARN")
    role: str = Field(description="The highest role held")
    roles: list[str] = Field(description="That role and every role it includes, lowest first")
    actions: list[str] = Field(
        description="What those roles allow: read, annotate, review, export, delete, hold, "
        "erase, manage_others (docs/access.md)"
    )
    scope: ScopeOut


@router.get(
    "/me",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(ok={"description": "The caller, its roles, actions and scope"}),
)
def get_me() -> MeOut:
    caller = current_caller()
    role = caller.role or Role.VIEWER  # the decision refused a caller without a role
    patterns = caller.scope.patterns
    return MeOut(
        principal=caller.principal,
        role=role.label,
        roles=[r.label for r in Role if r <= role],
        actions=actions_of(role),
        scope=ScopeOut(all=patterns is None, devices=list(patterns or ())),
    )
