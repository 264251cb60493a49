"""Who is asking: the identity the authorizer vouched for (docs/annotations.md).

Deployed, API Gateway puts the caller's verified identity into the event: the
JWT's ``sub`` claim (JWT authorization) or the IAM principal's ARN (IAM
authorization). Nothing a client sends in a header is trusted. ``video-index
local`` has no authorizer; its HTTP server stands in for one and names the
caller by the ``X-User`` header, or ``local``, with ``X-Roles`` and ``X-Devices``
(:func:`local_authorizer`). The API itself builds its caller with
:func:`video_index.core.access.caller_from_event`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Who changed an annotation when the event carries no identity (no authorizer).
ANONYMOUS: Final = "anonymous"
#: The local stand-in for an authorizer: the user named by this header, else ``local``.
LOCAL_USER_HEADER: Final = "x-user"
LOCAL_USER: Final = "local"
#: The local stand-in's roles and devices (comma-separated), docs/access.md.
LOCAL_ROLES_HEADER: Final = "x-roles"
LOCAL_DEVICES_HEADER: Final = "x-devices"
#: Longest identity kept (an IAM ARN is at most 2,048 characters).
MAX_PRINCIPAL_LENGTH: Final = 2048


def principal(event: Mapping[str, Any]) -> str:
    """The caller's identity from ``requestContext.authorizer`` (payload format 2.0)."""
    context = _mapping(event.get("requestContext"))
    authorizer = _mapping(context.get("authorizer"))
    candidates = (
        _mapping(_mapping(authorizer.get("jwt")).get("claims")).get("sub"),
        _mapping(authorizer.get("iam")).get("userArn"),
        _mapping(authorizer.get("lambda")).get("principal"),
    )
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()[:MAX_PRINCIPAL_LENGTH]
    return ANONYMOUS


def local_authorizer(headers: Mapping[str, str]) -> dict[str, Any]:
    """``requestContext.authorizer`` of a local request, as a Lambda authorizer would set it:
    the caller named by ``X-User`` (else ``local``), with the roles of ``X-Roles`` and the
    devices or ``site:`` names of ``X-Devices`` (comma-separated) when sent; without them
    the caller is an admin of every camera (docs/access.md). Only the local HTTP server
    calls this: the Lambda handler reads what API Gateway's authorizer verified."""
    user = (headers.get(LOCAL_USER_HEADER) or "").strip()[:MAX_PRINCIPAL_LENGTH] or LOCAL_USER
    context: dict[str, Any] = {"principal": user}
    for header, key in ((LOCAL_ROLES_HEADER, "roles"), (LOCAL_DEVICES_HEADER, "devices")):
        value = headers.get(header)
        if value is not None:
            context[key] = [part.strip() for part in value.split(",") if part.strip()]
    return {"lambda": context}


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
