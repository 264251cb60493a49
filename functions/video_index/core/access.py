"""Who may do what: roles, per-camera scope and the one decision (docs/access.md).

Pure: no AWS, no HTTP framework. The API's decision point
(:mod:`video_index.api.access`) builds a :class:`Caller` from the identity API Gateway
verified (:func:`video_index.core.access_policy.caller_from_event`, under the
deployment's :class:`~video_index.core.access_policy.AccessPolicy`) and asks
:func:`decide` before any route runs; routes that find a device only after a lookup (a
job, an annotation) ask :meth:`Caller.sees`.

* Roles are cumulative: ``viewer`` < ``reviewer`` < ``operator`` < ``admin``. A
  caller holding several gets the highest.
* Scope: the devices a caller may see, as ``fnmatch`` patterns. A caller built without
  one sees **no** device: a missing claim never widens (docs/access.md).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from video_index.core.audit import AUDIT_EXTENSION
from video_index.core.errors import VideoIndexError

#: The OpenAPI extension each route declares its rule in (``x-access: viewer``).
ACCESS_EXTENSION: Final = "x-access"
#: The rule of a route anyone may call (the viewer's page and files).
PUBLIC: Final = "public"
#: The environment variable holding the policy as JSON (absent: the default policy).
ENV_ACCESS_POLICY: Final = "VIDEO_INDEX_ACCESS_POLICY"
#: Longest principal kept (an IAM ARN is at most 2,048 characters).
MAX_PRINCIPAL_LENGTH: Final = 2048


class Role(IntEnum):
    """A role; each includes every lower one."""

    VIEWER = 1  # read, play, overlays
    REVIEWER = 2  # + annotate, set the review status of others' annotations
    OPERATOR = 3  # + exports, deletion requests within policy
    ADMIN = 4  # + erase, withdraw others' requests, edit or delete others' annotations

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def named(cls, name: str) -> Role:
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise ValueError(
                f"no role {name!r} (one of {', '.join(r.label for r in cls)})"
            ) from None


#: What each role may do, by name: ``GET /me`` answers the caller's, and the viewer shows
#: the controls of those and no others. Each action is the route or guard it names
#: (tests/api/test_me.py checks each against the OpenAPI rule or the guard's answer).
ACTIONS: Final[Mapping[str, Role]] = {
    "read": Role.VIEWER,  # devices, calendars, segments, media, overlays, annotations, holds
    "annotate": Role.REVIEWER,  # create annotations; change or delete one's own
    "review": Role.REVIEWER,  # set the review status of anyone's annotation
    "export": Role.OPERATOR,  # clip exports
    "delete": Role.OPERATOR,  # deletion requests within the policy; withdraw one's own
    "hold": Role.OPERATOR,  # place evidence holds; release one's own
    "share": Role.OPERATOR,  # share links (docs/shares.md); revoke one's own
    "erase": Role.ADMIN,  # deletion requests with erase=true
    "manage_others": Role.ADMIN,  # others' annotations, deletion requests and holds
}


def actions_of(role: Role | None) -> list[str]:
    """The actions ``role`` allows (none without a role), in :data:`ACTIONS` order."""
    return [name for name, needed in ACTIONS.items() if role is not None and role >= needed]


class AccessDenied(VideoIndexError):
    """The caller may not do this; :attr:`status` is the HTTP answer."""

    status = 403

    def __init__(self, message: str, parameter: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.parameter = parameter


class Unauthenticated(AccessDenied):
    """No verified caller (no authorizer identity, or a token without ``sub``)."""

    status = 401


class Forbidden(AccessDenied):
    """A verified caller whose role does not allow this."""

    status = 403


@dataclass(frozen=True)
class DeviceScope:
    """The devices a caller may see: ``None`` patterns mean every device, ``()`` none."""

    patterns: tuple[str, ...] | None = None

    @property
    def everything(self) -> bool:
        return self.patterns is None

    def contains(self, device: str) -> bool:
        if self.patterns is None:
            return True
        return any(fnmatch.fnmatchcase(device, pattern) for pattern in self.patterns)


EVERY_DEVICE: Final = DeviceScope()
NO_DEVICE: Final = DeviceScope(())


@dataclass(frozen=True)
class Caller:
    """A verified caller: who (as the authorizer names them), their role, their devices
    (none unless named: a caller built without a scope sees nothing)."""

    principal: str
    role: Role | None
    scope: DeviceScope = NO_DEVICE

    def has(self, role: Role) -> bool:
        return self.role is not None and self.role >= role

    def sees(self, device: str) -> bool:
        return self.scope.contains(device)


@dataclass(frozen=True)
class Rule:
    """What a route requires: a role, or nothing (:data:`PUBLIC`)."""

    role: Role | None

    @classmethod
    def parse(cls, value: object) -> Rule:
        if value == PUBLIC:
            return cls(None)
        if not isinstance(value, str):
            raise ValueError(f"{ACCESS_EXTENSION} must be a role name or {PUBLIC!r}")
        return cls(Role.named(value))

    @property
    def label(self) -> str:
        return PUBLIC if self.role is None else self.role.label


def allow(role: Role, *, audit: str | None = None) -> dict[str, Any]:
    """A route's ``openapi_extensions``: callers with ``role`` or higher; ``audit``, the
    action its requests are recorded as (``NOT_AUDITED``: a route that reads nothing
    sensitive), ``x-audit`` in the document (:mod:`video_index.core.audit`)."""
    declared: dict[str, Any] = {ACCESS_EXTENSION: role.label}
    if audit is not None:
        declared[AUDIT_EXTENSION] = audit
    return declared


def public(*, audit: str | None = None) -> dict[str, Any]:
    """A route's ``openapi_extensions``: anyone, signed in or not (``audit`` as for
    :func:`allow`)."""
    declared: dict[str, Any] = {ACCESS_EXTENSION: PUBLIC}
    if audit is not None:
        declared[AUDIT_EXTENSION] = audit
    return declared


def decide(rule: Rule, caller: Caller | None) -> None:
    """Allow (return) or refuse (raise): 401 without a caller, 403 below the rule's role."""
    if rule.role is None:
        return
    if caller is None:
        raise Unauthenticated("sign in: this route needs a verified caller")
    if not caller.has(rule.role):
        held = caller.role.label if caller.role is not None else "no role"
        raise Forbidden(f"this needs the {rule.role.label} role ({caller.principal} has {held})")
