"""Roles, scope and the decision (video_index.core.access, video_index.core.access_policy),
without AWS or HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from video_index.core.access import (
    EVERY_DEVICE,
    NO_DEVICE,
    Caller,
    DeviceScope,
    Forbidden,
    Role,
    Rule,
    Unauthenticated,
    decide,
)
from video_index.core.access_policy import (
    DEFAULT_POLICY,
    AccessPolicy,
    caller_from_event,
    claim_values,
)

ROLES = list(Role)


def event(authorizer: dict[str, Any] | None) -> dict[str, Any]:
    context: dict[str, Any] = {"requestId": "r"}
    if authorizer is not None:
        context["authorizer"] = authorizer
    return {"requestContext": context}


def jwt(**claims: Any) -> dict[str, Any]:
    """A JWT's claims as API Gateway hands them over; a Cognito ID token unless told."""
    return event({"jwt": {"claims": {"token_use": "id", **claims}, "scopes": None}})


@given(st.sampled_from(ROLES), st.sampled_from(ROLES))
def test_roles_are_cumulative(held: Role, required: Role) -> None:
    # Given a caller holding one role, When a route requires another
    caller = Caller("p", held)
    # Then it is allowed exactly when the held role is at least the required one
    if held.value >= required.value:
        decide(Rule(required), caller)
    else:
        with pytest.raises(Forbidden):
            decide(Rule(required), caller)


@given(st.one_of(st.none(), st.sampled_from(ROLES)))
def test_public_allows_anyone_and_a_role_rule_refuses_no_caller(held: Role | None) -> None:
    decide(Rule(None), None)
    decide(Rule(None), Caller("p", held))
    with pytest.raises(Unauthenticated) as refused:
        decide(Rule(Role.VIEWER), None)
    assert refused.value.status == 401


def test_a_caller_without_a_role_is_forbidden_not_unauthenticated() -> None:
    with pytest.raises(Forbidden) as refused:
        decide(Rule(Role.VIEWER), Caller("jwt:x", None))
    assert refused.value.status == 403 and "no role" in refused.value.message


def test_a_token_without_sub_is_refused() -> None:
    for claims in ({}, {"sub": ""}, {"sub": "  "}, {"cognito:groups": "[admin]"}):
        with pytest.raises(Unauthenticated):
            caller_from_event(jwt(**claims), DEFAULT_POLICY)


def test_cognito_groups_as_api_gateway_flattens_them_give_the_highest_role() -> None:
    caller = caller_from_event(
        jwt(sub="u1", **{"cognito:groups": "[viewer operator]"}), DEFAULT_POLICY
    )
    # (and without a device claim, no device: a missing claim never widens)
    assert caller == Caller("u1", Role.OPERATOR, NO_DEVICE)
    assert not caller.sees("any-camera")


def test_a_comma_never_separates_claim_values() -> None:
    # Given one Cognito group named "guests,admin" (commas are legal in group names), as
    # API Gateway flattens the list claim, and as a JSON list
    for groups in ("[guests,admin]", '["guests,admin"]', "guests,admin"):
        caller = caller_from_event(jwt(sub="u", **{"cognito:groups": groups}), DEFAULT_POLICY)
        # Then it is that one group, mapped to no role
        assert caller is not None and caller.role is None, groups
    assert claim_values("[guests,admin viewer]") == ["guests,admin", "viewer"]
    # And a device claim written with commas names one (unknown) device, not several
    scoped = caller_from_event(jwt(sub="u", **{"custom:devices": "cam-1,cam-2"}), DEFAULT_POLICY)
    assert scoped is not None and not scoped.sees("cam-1") and not scoped.sees("cam-2")


def test_a_scope_claim_with_a_mapped_value() -> None:
    # Given a policy reading OAuth scopes of access tokens, mapping one of them to reviewer
    policy = AccessPolicy(
        role_claim="scope", role_values={"video/review": Role.REVIEWER}, token_use="access"
    )
    token = {"sub": "u", "token_use": "access", "scope": "openid video/review email"}
    caller = caller_from_event(jwt(**token), policy)
    assert caller is not None and caller.role is Role.REVIEWER
    # And an unmapped value gives no role
    none = caller_from_event(jwt(sub="u", token_use="access", scope="openid"), policy)
    assert none is not None and none.role is None


def test_a_token_of_the_other_kind_is_refused_with_a_clear_message() -> None:
    # Given the default policy (Cognito ID tokens, which carry the scope attribute)
    access = jwt(sub="u", token_use="access", **{"cognito:groups": "[admin]"})
    # When the access token of the sign-in is presented, Then 401 saying which to send
    with pytest.raises(Unauthenticated) as refused:
        caller_from_event(access, DEFAULT_POLICY)
    assert refused.value.status == 401
    assert "takes the ID token" in refused.value.message
    assert "not its access token" in refused.value.message
    # And a token naming no token_use is refused too, unless the policy takes any issuer's
    anonymous_kind = event({"jwt": {"claims": {"sub": "u"}, "scopes": None}})
    with pytest.raises(Unauthenticated, match="names no token_use"):
        caller_from_event(anonymous_kind, DEFAULT_POLICY)
    other_issuer = AccessPolicy(token_use=None)
    assert caller_from_event(anonymous_kind, other_issuer) == Caller("u", None, NO_DEVICE)
    # And a policy taking access tokens refuses ID tokens
    with pytest.raises(Unauthenticated, match="takes the access token"):
        caller_from_event(jwt(sub="u"), AccessPolicy(token_use="access"))


def test_unscoped_callers_see_nothing_unless_the_policy_says_all() -> None:
    # Given a JWT without the device claim and an IAM caller no iam_scopes pattern matches
    token = jwt(sub="u", **{"cognito:groups": "[viewer]"})
    iam = event({"iam": {"userArn": "arn:aws:iam::1:user/bob"}})
    for identity in (token, iam):
        # Then by default neither sees any device
        caller = caller_from_event(identity, DEFAULT_POLICY)
        assert caller is not None and caller.scope == NO_DEVICE
        # And with "unscoped": "all" both see every one
        wide = caller_from_event(identity, AccessPolicy.from_json('{"unscoped": "all"}'))
        assert wide is not None and wide.scope == EVERY_DEVICE


def test_iam_callers_get_the_devices_of_the_first_matching_arn_pattern() -> None:
    policy = AccessPolicy.from_json(
        '{"sites": {"north": ["north-*"]}, "iam_scopes": {'
        '"arn:aws:sts::1:assumed-role/NorthOps/*": ["site:north"],'
        '"arn:aws:iam::1:user/*": ["*"]}}'
    )
    north = event({"iam": {"userArn": "arn:aws:sts::1:assumed-role/NorthOps/otto"}})
    user = event({"iam": {"userArn": "arn:aws:iam::1:user/bob"}})
    other = event({"iam": {"userArn": "arn:aws:sts::1:assumed-role/Other/eve"}})
    assert caller_from_event(north, policy).scope == DeviceScope(("north-*",))  # type: ignore[union-attr]
    assert caller_from_event(user, policy).sees("any-camera")  # type: ignore[union-attr]
    assert caller_from_event(other, policy).scope == NO_DEVICE  # type: ignore[union-attr]


def test_sites_expand_to_device_patterns() -> None:
    policy = AccessPolicy(sites={"north": ("north-*",), "south": ("s-01", "s-02")})
    claims = {"sub": "u", "cognito:groups": "[viewer]", "custom:devices": "site:north cam-9"}
    caller = caller_from_event(jwt(**claims), policy)
    assert caller is not None
    assert [caller.sees(d) for d in ("north-1", "cam-9", "s-01", "cam-1")] == [
        True,
        True,
        False,
        False,
    ]
    # An unknown site names nothing
    nothing = caller_from_event(jwt(sub="u", **{"custom:devices": "site:west"}), policy)
    assert nothing is not None and not nothing.sees("west-1")


def test_iam_callers_get_the_role_of_the_first_matching_arn_pattern() -> None:
    policy = AccessPolicy(
        iam_roles=(("arn:aws:iam::1:role/admins*", Role.ADMIN), ("arn:aws:iam::1:*", Role.VIEWER))
    )
    admin = event({"iam": {"userArn": "arn:aws:iam::1:role/admins-x"}})
    other = event({"iam": {"userArn": "arn:aws:iam::1:user/bob"}})
    stranger = event({"iam": {"userArn": "arn:aws:iam::2:user/eve"}})
    assert caller_from_event(admin, policy) == Caller("arn:aws:iam::1:role/admins-x", Role.ADMIN)
    assert caller_from_event(other, policy).role is Role.VIEWER  # type: ignore[union-attr]
    assert caller_from_event(stranger, policy).role is None  # type: ignore[union-attr]


def test_no_authorizer_is_no_caller_and_headers_are_never_read() -> None:
    # Given an event with no authorizer but headers naming a user and roles
    request = event(None) | {"headers": {"x-user": "mallory", "x-roles": "admin"}}
    # Then there is no caller
    assert caller_from_event(request, DEFAULT_POLICY) is None


def test_the_local_stand_in_defaults_to_an_admin_of_every_camera() -> None:
    caller = caller_from_event(event({"lambda": {"principal": "local"}}), DEFAULT_POLICY)
    assert caller == Caller("local", Role.ADMIN, DeviceScope())
    narrowed = caller_from_event(
        event({"lambda": {"principal": "v", "roles": ["viewer"], "devices": ["cam-1"]}}),
        DEFAULT_POLICY,
    )
    assert narrowed == Caller("v", Role.VIEWER, DeviceScope(("cam-1",)))


@given(st.lists(st.text(alphabet="abcdefgh-:/,0123456789", min_size=1, max_size=12), max_size=6))
def test_claim_values_read_every_spelling_alike(values: list[str]) -> None:
    # Given values (commas and all) as a JSON list, API Gateway's flattened list, a JSON
    # list in a string, and a scope string
    spellings = [values, "[" + " ".join(values) + "]", json.dumps(values), " ".join(values)]
    # Then each spelling reads as the same values
    for spelling in spellings:
        assert claim_values(spelling) == values


def test_the_policy_setting_parses_and_refuses_nonsense() -> None:
    policy = AccessPolicy.from_json(
        '{"role_claim": "roles", "roles": {"ops": "operator"}, "sites": {"n": ["n-*"]},'
        ' "iam_roles": {"*": "viewer"}, "deletions_per_day": 3}'
    )
    assert policy.role_values == {"ops": Role.OPERATOR}
    assert policy.iam_roles == (("*", Role.VIEWER),)
    assert policy.deletions_per_day == 3 and policy.sites == {"n": ("n-*",)}
    assert (policy.unscoped, policy.token_use, policy.iam_scopes) == ("none", "id", ())
    for bad, named in (
        ('{"roles": {"x": "superuser"}}', "superuser"),
        ('{"colour": 1}', "colour"),
        ("[]", "JSON object"),
        ('{"deletions_per_day": -1}', "deletions_per_day"),
        ('{"unscoped": "some"}', "unscoped"),
        ('{"unscoped": true}', "unscoped"),
        ('{"token_use": "refresh"}', "token_use"),
        ('{"iam_scopes": {"*": "cam-1"}}', "iam_scopes"),
        ('{"iam_roles": ["admin"]}', "iam_roles"),
    ):
        with pytest.raises(ValueError, match=named):
            AccessPolicy.from_json(bad)
