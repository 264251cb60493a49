"""Who may do what: roles, per-camera scope and the one decision (docs/access.md).

Pure: no AWS, no HTTP framework. The API's decision point
(:mod:`video_index.api.access`) builds a :class:`Caller` from the identity
API Gateway verified (:func:`caller_from_event`) and asks :func:`decide` before any
route runs; routes that find a device only after a lookup (a job, an annotation)
ask :meth:`Caller.sees`.

* Roles are cumulative: ``viewer`` < ``reviewer`` < ``operator`` < ``admin``. A
  caller holding several gets the highest.
* A JWT names its roles in a configurable claim (``cognito:groups`` by default,
  or ``scope``), each value mapped to a role by the :class:`AccessPolicy`; values
  the policy does not map are ignored. An IAM caller gets the role of the first
  ARN pattern of the policy that matches it.
* Scope: a claim lists devices (``fnmatch`` patterns) or sites (``site:<name>``,
  mapped by the policy to device patterns). A JWT without that claim sees every
  device.
* A token without ``sub`` is refused (401): the principal recorded by destructive
  requests must be one the issuer vouched for.

The local HTTP server (``video-index local``) stands in for an authorizer and puts
its caller under ``requestContext.authorizer.lambda`` (principal, roles,
devices), as a Lambda authorizer would: API Gateway's JWT and IAM authorizers
never produce that shape, so headers a client sends are never read here.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final

from video_index.core.errors import VideoIndexError

#: The OpenAPI extension each route declares its rule in (``x-access: viewer``).
ACCESS_EXTENSION: Final = "x-access"
#: The rule of a route anyone may call (the viewer's page and files).
PUBLIC: Final = "public"
#: The environment variable holding the policy as JSON (absent: :data:`DEFAULT_POLICY`).
ENV_ACCESS_POLICY: Final = "VIDEO_INDEX_ACCESS_POLICY"
#: Longest principal kept (an IAM ARN is at most 2,048 characters).
MAX_PRINCIPAL_LENGTH: Final = 2048
#: Most scope entries read from one claim (a token is not a database).
MAX_SCOPE_ENTRIES: Final = 256
SITE_PREFIX: Final = "site:"


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
    """The devices a caller may see: ``None`` patterns mean every device."""

    patterns: tuple[str, ...] | None = None

    @property
    def everything(self) -> bool:
        return self.patterns is None

    def contains(self, device: str) -> bool:
        if self.patterns is None:
            return True
        return any(fnmatch.fnmatchcase(device, pattern) for pattern in self.patterns)


EVERY_DEVICE: Final = DeviceScope()


@dataclass(frozen=True)
class Caller:
    """A verified caller: who (as the authorizer names them), their role, their devices."""

    principal: str
    role: Role | None
    scope: DeviceScope = EVERY_DEVICE

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


def allow(role: Role) -> dict[str, Any]:
    """A route's ``openapi_extensions``: callers with ``role`` or higher."""
    return {ACCESS_EXTENSION: role.label}


def public() -> dict[str, Any]:
    """A route's ``openapi_extensions``: anyone, signed in or not."""
    return {ACCESS_EXTENSION: PUBLIC}


def _default_role_values() -> dict[str, Role]:
    return {role.label: role for role in Role}


@dataclass(frozen=True)
class AccessPolicy:
    """The deployment's mapping from verified identities to roles and devices."""

    #: The JWT claim naming the caller's roles (``cognito:groups``, ``scope``, ``roles``).
    role_claim: str = "cognito:groups"
    #: Claim value → role (values not listed are ignored).
    role_values: Mapping[str, Role] = field(default_factory=_default_role_values)
    #: The JWT claim naming the caller's devices or sites (absent from a token: every device).
    scope_claim: str = "custom:devices"
    #: Site name → device patterns (``site:<name>`` in the scope claim).
    sites: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: IAM caller ARN pattern → role, first match wins. By default every IAM caller is an
    #: operator: the per-role managed policies limit its routes at the gateway, and erase
    #: or withdrawing others' requests needs an ARN mapped to ``admin``.
    iam_roles: tuple[tuple[str, Role], ...] = (("*", Role.OPERATOR),)
    #: Deletion requests one caller may make per UTC day (429 beyond).
    deletions_per_day: int = 20

    @classmethod
    def from_json(cls, text: str) -> AccessPolicy:
        """The policy from its JSON setting (docs/access.md); a bad one raises ValueError."""
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("the access policy must be a JSON object")
        unknown = set(raw) - {
            "role_claim",
            "roles",
            "scope_claim",
            "sites",
            "iam_roles",
            "deletions_per_day",
        }
        if unknown:
            raise ValueError(f"unknown access policy keys: {', '.join(sorted(unknown))}")
        default = cls()
        roles = raw.get("roles")
        sites = raw.get("sites") or {}
        iam = raw.get("iam_roles")
        quota = int(raw.get("deletions_per_day", default.deletions_per_day))
        if quota < 0:
            raise ValueError("deletions_per_day must not be negative")
        return cls(
            role_claim=str(raw.get("role_claim", default.role_claim)),
            role_values=(
                {str(k): Role.named(str(v)) for k, v in roles.items()}
                if isinstance(roles, dict)
                else default.role_values
            ),
            scope_claim=str(raw.get("scope_claim", default.scope_claim)),
            sites={str(name): tuple(str(p) for p in patterns) for name, patterns in sites.items()},
            iam_roles=(
                tuple((str(k), Role.named(str(v))) for k, v in iam.items())
                if isinstance(iam, dict)
                else default.iam_roles
            ),
            deletions_per_day=quota,
        )

    def scope_of(self, entries: Iterable[str]) -> DeviceScope:
        """The scope a claim's entries name: devices or patterns, ``site:<name>`` expanded."""
        patterns: list[str] = []
        for entry in list(entries)[:MAX_SCOPE_ENTRIES]:
            if entry.startswith(SITE_PREFIX):
                patterns.extend(self.sites.get(entry[len(SITE_PREFIX) :], ()))
            elif entry:
                patterns.append(entry)
        return DeviceScope(tuple(patterns))

    def iam_role(self, arn: str) -> Role | None:
        for pattern, role in self.iam_roles:
            if fnmatch.fnmatchcase(arn, pattern):
                return role
        return None


DEFAULT_POLICY: Final = AccessPolicy()

_SEPARATORS: Final = re.compile(r"[\s,]+")


def claim_values(value: object) -> list[str]:
    """A claim's values: a JSON list, or a string as API Gateway passes one (a list claim
    flattened to ``[a b]``, a scope ``a b``, or ``a,b``)."""
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    if not isinstance(value, str):
        return []
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
            return claim_values(parsed)  # a JSON list of strings; ``[0e0]`` is not one
        text = inner
    return [part for part in _SEPARATORS.split(text) if part]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _highest(roles: Iterable[Role]) -> Role | None:
    return max(roles, default=None)


def caller_from_event(event: Mapping[str, Any], policy: AccessPolicy) -> Caller | None:
    """The verified caller of an API Gateway HTTP API (payload 2.0) event; None without one.

    Raises :class:`Unauthenticated` for a JWT without ``sub``."""
    authorizer = _mapping(_mapping(event.get("requestContext")).get("authorizer"))
    jwt = _mapping(authorizer.get("jwt"))
    if jwt:
        return _jwt_caller(_mapping(jwt.get("claims")), policy)
    arn = _mapping(authorizer.get("iam")).get("userArn")
    if isinstance(arn, str) and arn.strip():
        return Caller(arn.strip()[:MAX_PRINCIPAL_LENGTH], policy.iam_role(arn.strip()))
    stand_in = _mapping(authorizer.get("lambda"))
    if stand_in:
        return _stand_in_caller(stand_in, policy)
    return None


def _jwt_caller(claims: Mapping[str, Any], policy: AccessPolicy) -> Caller:
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.strip():
        raise Unauthenticated("the token has no subject (sub): sign in again")
    values = claim_values(claims.get(policy.role_claim))
    role = _highest(policy.role_values[v] for v in values if v in policy.role_values)
    scoped = policy.scope_claim in claims
    scope = policy.scope_of(claim_values(claims[policy.scope_claim])) if scoped else EVERY_DEVICE
    return Caller(sub.strip()[:MAX_PRINCIPAL_LENGTH], role, scope)


def _stand_in_caller(context: Mapping[str, Any], policy: AccessPolicy) -> Caller:
    """A Lambda authorizer's context (the local server is one): principal, roles (role
    names; absent: admin) and devices (absent: every device)."""
    principal = context.get("principal")
    if not isinstance(principal, str) or not principal.strip():
        raise Unauthenticated("the authorizer named no principal")
    names = context.get("roles")
    role: Role | None = Role.ADMIN
    if names is not None:
        known = {r.label for r in Role}
        role = _highest(Role.named(n) for n in claim_values(names) if n.lower() in known)
    devices = context.get("devices")
    scope = EVERY_DEVICE if devices is None else policy.scope_of(claim_values(devices))
    return Caller(principal.strip()[:MAX_PRINCIPAL_LENGTH], role, scope)


def decide(rule: Rule, caller: Caller | None) -> None:
    """Allow (return) or refuse (raise): 401 without a caller, 403 below the rule's role."""
    if rule.role is None:
        return
    if caller is None:
        raise Unauthenticated("sign in: this route needs a verified caller")
    if not caller.has(rule.role):
        held = caller.role.label if caller.role is not None else "no role"
        raise Forbidden(f"this needs the {rule.role.label} role ({caller.principal} has {held})")
