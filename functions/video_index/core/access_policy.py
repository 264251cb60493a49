"""The deployment's access policy, and the caller it makes of a verified identity
(docs/access.md).

Pure: no AWS, no HTTP framework. :func:`caller_from_event` reads what API Gateway's
authorizer verified (``requestContext.authorizer``) and nothing a client sends:

* **JWT**: the principal is ``sub`` (a token without one is refused, 401); the roles are
  the values of ``role_claim`` mapped by ``roles`` (values not mapped are ignored, the
  highest role wins); the devices are the values of ``scope_claim`` (names, ``fnmatch``
  patterns or ``site:<name>``). With ``token_use`` set (``id`` by default), a Cognito
  token of the other kind is refused (401): the access token of a sign-in carries
  ``cognito:groups`` but no ``custom:*`` attribute, so presenting it would drop the scope.
* **IAM**: the principal is the caller's ARN (``userArn``: for a role session, the session
  name, which the per-role managed policies tie to the session's source identity,
  ``infra/access.py``); the role is that of the first ``iam_roles`` pattern matching it,
  the devices those of the first ``iam_scopes`` pattern.
* A caller whose identity names no scope sees **no** device, unless the policy says
  ``"unscoped": "all"``: a missing claim never widens what a caller sees.
* The local server (``video-index local``) stands in for an authorizer and puts its
  caller under ``requestContext.authorizer.lambda`` (principal, roles, devices), as a
  Lambda authorizer would: API Gateway's JWT and IAM authorizers never produce that
  shape. Without roles it is an admin, without devices it sees every camera: by
  construction, the local stack's documented behaviour.

Claims are read as API Gateway hands them over (:func:`claim_values`): a list claim
flattened to ``[a b]``, a JSON list, or a space-separated string (an OAuth ``scope``).
Whitespace separates values, never a comma: a Cognito group may be named
``guests,admin``, and it is that one group, not ``guests`` and ``admin``.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.core.access import (
    EVERY_DEVICE,
    MAX_PRINCIPAL_LENGTH,
    NO_DEVICE,
    Caller,
    DeviceScope,
    Role,
    Unauthenticated,
)

#: Most scope entries read from one claim (a token is not a database).
MAX_SCOPE_ENTRIES: Final = 256
SITE_PREFIX: Final = "site:"
#: ``unscoped``: what a caller whose identity names no scope sees.
UNSCOPED_NONE: Final = "none"
UNSCOPED_ALL: Final = "all"
#: The Cognito claim naming a token's kind, and its two values.
TOKEN_USE_CLAIM: Final = "token_use"
ID_TOKEN: Final = "id"
ACCESS_TOKEN: Final = "access"
_TOKEN_NAMES: Final = {ID_TOKEN: "ID token", ACCESS_TOKEN: "access token"}
_KEYS: Final = frozenset(
    {
        "role_claim",
        "roles",
        "scope_claim",
        "sites",
        "unscoped",
        "token_use",
        "iam_roles",
        "iam_scopes",
        "deletions_per_day",
    }
)


def _default_role_values() -> dict[str, Role]:
    return {role.label: role for role in Role}


@dataclass(frozen=True)
class AccessPolicy:
    """The deployment's mapping from verified identities to roles and devices."""

    #: The JWT claim naming the caller's roles (``cognito:groups``, ``scope``, ``roles``).
    role_claim: str = "cognito:groups"
    #: Claim value → role (values not listed are ignored).
    role_values: Mapping[str, Role] = field(default_factory=_default_role_values)
    #: The JWT claim naming the caller's devices or sites.
    scope_claim: str = "custom:devices"
    #: Site name → device patterns (``site:<name>`` in the scope claim).
    sites: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: What a caller whose identity names no scope (a JWT without ``scope_claim``, an IAM
    #: caller no ``iam_scopes`` pattern matches) sees: no device, or every device.
    unscoped: str = UNSCOPED_NONE
    #: The Cognito token the API takes (its ``token_use`` claim): ``id`` (the one that
    #: carries ``custom:*`` attributes), ``access``, or None for an issuer whose tokens
    #: name no ``token_use`` (any other OpenID Connect provider).
    token_use: str | None = ID_TOKEN
    #: IAM caller ARN pattern → role, first match wins. By default every IAM caller is an
    #: operator: the per-role managed policies limit its routes at the gateway, and erase
    #: or withdrawing others' requests needs an ARN mapped to ``admin``.
    iam_roles: tuple[tuple[str, Role], ...] = (("*", Role.OPERATOR),)
    #: IAM caller ARN pattern → its devices or sites, first match wins.
    iam_scopes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Deletion requests one caller may make per UTC day (429 beyond).
    deletions_per_day: int = 20

    @classmethod
    def from_json(cls, text: str) -> AccessPolicy:
        """The policy from its JSON setting (docs/access.md); a bad one raises ValueError
        naming the key."""
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("the access policy must be a JSON object")
        unknown = set(raw) - _KEYS
        if unknown:
            raise ValueError(f"unknown access policy keys: {', '.join(sorted(unknown))}")
        default = cls()
        quota = int(raw.get("deletions_per_day", default.deletions_per_day))
        if quota < 0:
            raise ValueError("deletions_per_day must not be negative")
        roles = _object(raw, "roles")
        iam = _object(raw, "iam_roles")
        return cls(
            role_claim=str(raw.get("role_claim", default.role_claim)),
            role_values=(
                {str(k): Role.named(str(v)) for k, v in roles.items()}
                if roles is not None
                else default.role_values
            ),
            scope_claim=str(raw.get("scope_claim", default.scope_claim)),
            sites=dict(_lists(raw, "sites")),
            unscoped=_one_of(raw, "unscoped", (UNSCOPED_NONE, UNSCOPED_ALL), default.unscoped),
            token_use=_one_of(raw, "token_use", (ID_TOKEN, ACCESS_TOKEN, None), ID_TOKEN),
            iam_roles=(
                tuple((str(k), Role.named(str(v))) for k, v in iam.items())
                if iam is not None
                else default.iam_roles
            ),
            iam_scopes=_lists(raw, "iam_scopes"),
            deletions_per_day=quota,
        )

    @property
    def unscoped_scope(self) -> DeviceScope:
        """The scope of a caller whose identity names none."""
        return EVERY_DEVICE if self.unscoped == UNSCOPED_ALL else NO_DEVICE

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

    def iam_scope(self, arn: str) -> DeviceScope:
        for pattern, entries in self.iam_scopes:
            if fnmatch.fnmatchcase(arn, pattern):
                return self.scope_of(entries)
        return self.unscoped_scope


DEFAULT_POLICY: Final = AccessPolicy()


def _object(raw: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"{key} must be a JSON object")
    return value


def _lists(raw: Mapping[str, Any], key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """An object of lists of strings (``sites``, ``iam_scopes``), in its order."""
    value = _object(raw, key) or {}
    found = []
    for name, entries in value.items():
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ValueError(f"{key}: {name!r} must name a list of strings")
        found.append((str(name), tuple(entries)))
    return tuple(found)


def _one_of(raw: Mapping[str, Any], key: str, allowed: tuple[str | None, ...], default: Any) -> Any:
    value = raw.get(key, default)
    if value not in allowed:
        spelled = " or ".join("null" if a is None else json.dumps(a) for a in allowed)
        raise ValueError(f"{key} must be {spelled}, not {json.dumps(value)}")
    return value


def claim_values(value: object) -> list[str]:
    """A claim's values as API Gateway hands them over: a JSON list, a list claim flattened
    to ``[a b]`` (or a JSON list in a string), or a space-separated string (an OAuth
    ``scope``). Never split at a comma: ``[guests,admin]`` is the one value
    ``guests,admin``."""
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if not isinstance(value, str):
        return []
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
            return claim_values(parsed)  # a JSON list of strings; ``[0e0]`` is not one
        text = text[1:-1]
    return text.split()


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _highest(roles: Iterable[Role]) -> Role | None:
    return max(roles, default=None)


def caller_from_event(event: Mapping[str, Any], policy: AccessPolicy) -> Caller | None:
    """The verified caller of an API Gateway HTTP API (payload 2.0) event; None without one.

    Raises :class:`Unauthenticated` for a JWT without ``sub`` or of the wrong
    ``token_use``."""
    authorizer = _mapping(_mapping(event.get("requestContext")).get("authorizer"))
    jwt = _mapping(authorizer.get("jwt"))
    if jwt:
        return _jwt_caller(_mapping(jwt.get("claims")), policy)
    arn = _mapping(authorizer.get("iam")).get("userArn")
    if isinstance(arn, str) and arn.strip():
        principal = arn.strip()[:MAX_PRINCIPAL_LENGTH]
        return Caller(principal, policy.iam_role(principal), policy.iam_scope(principal))
    stand_in = _mapping(authorizer.get("lambda"))
    if stand_in:
        return _stand_in_caller(stand_in, policy)
    return None


def _jwt_caller(claims: Mapping[str, Any], policy: AccessPolicy) -> Caller:
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.strip():
        raise Unauthenticated("the token has no subject (sub): sign in again")
    _check_token_use(claims.get(TOKEN_USE_CLAIM), policy.token_use)
    values = claim_values(claims.get(policy.role_claim))
    role = _highest(policy.role_values[v] for v in values if v in policy.role_values)
    if policy.scope_claim in claims:
        scope = policy.scope_of(claim_values(claims[policy.scope_claim]))
    else:
        scope = policy.unscoped_scope
    return Caller(sub.strip()[:MAX_PRINCIPAL_LENGTH], role, scope)


def _check_token_use(found: object, expected: str | None) -> None:
    """Refuse (401) a token that is not of the kind the policy takes."""
    if expected is None or found == expected:
        return
    wanted = _TOKEN_NAMES[expected]
    if isinstance(found, str) and found in _TOKEN_NAMES:
        raise Unauthenticated(
            f"this API takes the {wanted} of a sign-in (token_use {expected}), not its "
            f"{_TOKEN_NAMES[found]}: send the {wanted}"
        )
    raise Unauthenticated(
        f"the token names no token_use: this API takes Cognito {wanted}s (token_use "
        f"{expected}; the access policy's token_use is null for another issuer)"
    )


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
