"""Roles, scope and the decision (video_index.core.access), without AWS or HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from video_index.core.access import (
    DEFAULT_POLICY,
    AccessPolicy,
    Caller,
    DeviceScope,
    Forbidden,
    Role,
    Rule,
    Unauthenticated,
    caller_from_event,
    claim_values,
    decide,
)

ROLES = list(Role)


def event(authorizer: dict[str, Any] | None) -> dict[str, Any]:
    context: dict[str, Any] = {"requestId": "r"}
    if authorizer is not None:
        context["authorizer"] = authorizer
    return {"requestContext": context}


def jwt(**claims: Any) -> dict[str, Any]:
    return event({"jwt": {"claims": claims, "scopes": None}})


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
    assert caller == Caller("u1", Role.OPERATOR, DeviceScope())
    assert caller.sees("any-camera")


def test_a_scope_claim_with_a_mapped_value() -> None:
    # Given a policy reading OAuth scopes, mapping one of them to reviewer
    policy = AccessPolicy(role_claim="scope", role_values={"video/review": Role.REVIEWER})
    caller = caller_from_event(jwt(sub="u", scope="openid video/review email"), policy)
    assert caller is not None and caller.role is Role.REVIEWER
    # And an unmapped value gives no role
    none = caller_from_event(jwt(sub="u", scope="openid"), policy)
    assert none is not None and none.role is None


def test_sites_expand_to_device_patterns() -> None:
    policy = AccessPolicy(sites={"north": ("north-*",), "south": ("s-01", "s-02")})
    claims = {"sub": "u", "cognito:groups": "[viewer]", "custom:devices": "site:north,cam-9"}
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


@given(st.lists(st.text(alphabet="abcdefgh-:/0123456789", min_size=1, max_size=12), max_size=6))
def test_claim_values_read_every_spelling_alike(values: list[str]) -> None:
    # Given values as a JSON list, API Gateway's flattened list, a scope string and CSV
    spellings = [values, "[" + " ".join(values) + "]", " ".join(values), ",".join(values)]
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
    for bad in (
        '{"roles": {"x": "superuser"}}',
        '{"colour": 1}',
        "[]",
        '{"deletions_per_day": -1}',
    ):
        with pytest.raises(ValueError):
            AccessPolicy.from_json(bad)
