"""``GET /me`` (docs/access.md): the caller, its roles, the actions they allow and its scope,
and every action it names agreeing with what the server then does for that caller.

The viewer shows a control only for an action ``/me`` names, so a wrong answer here would
show a control the server refuses, or hide one it allows. Each action is checked against
the real resolver: the request it stands for, made by each role, is allowed exactly when
``/me`` names the action for that role.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Final

import pytest

from tests.api import test_access_matrix as matrix
from tests.api.test_access_matrix import BODIES, IN_SCOPE, WINDOW, jwt
from video_index.annotations.identity import local_authorizer
from worlds.api_world import ApiWorld

#: What each role may do, as docs/access.md's table says it (written out, not read from
#: the code under test).
EXPECTED: Final = {
    "viewer": ["read"],
    "reviewer": ["read", "annotate", "review"],
    "operator": ["read", "annotate", "review", "export", "delete", "hold", "share"],
    "admin": [
        "read", "annotate", "review", "export", "delete", "hold", "share", "erase",
        "manage_others",
    ],
}  # fmt: skip
ROLES: Final = ("viewer", "reviewer", "operator", "admin")
#: The matrix's world: two devices with footage, every capability's service (holds,
#: deletions, exports) on moto.
world = matrix.world


def me(world: ApiWorld, authorizer: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    return world.call("GET", "/me", authorizer=authorizer)


@pytest.mark.parametrize("role", ROLES)
def test_me_names_the_callers_role_actions_and_scope(world: ApiWorld, role: str) -> None:
    # Given a signed-in caller holding one role, its claim naming one device
    # When it asks who it is
    status, body, headers = me(world, jwt(role))
    # Then it is told its principal, role, the roles that role includes, what it may do,
    # and its device; the answer is kept by no cache
    assert status == 200, body
    assert body == {
        "principal": f"user-{role}",
        "role": role,
        "roles": list(ROLES[: ROLES.index(role) + 1]),
        "actions": EXPECTED[role],
        "scope": {"all": False, "devices": [IN_SCOPE]},
    }
    assert headers["Cache-Control"] == "no-store"


def test_without_a_device_claim_the_scope_is_empty_unless_the_policy_says_all(
    world: ApiWorld,
) -> None:
    # Given a caller whose token has no device claim
    token = jwt("viewer", devices=None)
    # Then by default it sees no device, and with "unscoped": "all" every one
    assert me(world, token)[1]["scope"] == {"all": False, "devices": []}
    world.policy = replace(world.policy, unscoped="all")
    assert me(world, token)[1]["scope"] == {"all": True, "devices": []}


def test_the_highest_of_several_roles_counts(world: ApiWorld) -> None:
    token = jwt("viewer")
    token["jwt"]["claims"]["cognito:groups"] = "[viewer operator]"
    status, body, _ = me(world, token)
    assert (status, body["role"], body["actions"]) == (200, "operator", EXPECTED["operator"])


def test_a_scoped_caller_is_told_its_device_patterns(world: ApiWorld) -> None:
    # Given a policy naming a site, and an operator whose claim names it and one more camera
    world.policy = replace(world.policy, sites={"north": ("north-*", "gate-1")})
    token = jwt("operator", devices="site:north cam-7")
    # When it asks who it is
    status, body, _ = me(world, token)
    # Then the scope is the site's patterns, expanded, and the camera
    assert status == 200, body
    assert body["scope"] == {"all": False, "devices": ["north-*", "gate-1", "cam-7"]}


def test_without_a_caller_or_a_role_me_is_refused(world: ApiWorld) -> None:
    assert me(world, {})[0] == 401
    assert me(world, jwt(None))[0] == 403


def test_locally_the_stand_in_authorizer_is_who_me_names(world: ApiWorld) -> None:
    # Given the local server's stand-in for an authorizer: a reviewer scoped to one camera
    local = local_authorizer({"x-user": "rita", "x-roles": "reviewer", "x-devices": "cam-1"})
    status, body, _ = me(world, local)
    assert status == 200, body
    assert (body["principal"], body["role"], body["scope"]) == (
        "rita",
        "reviewer",
        {"all": False, "devices": ["cam-1"]},
    )
    # And without those headers, the local caller is an admin of every camera
    status, body, _ = me(world, local_authorizer({}))
    assert (body["principal"], body["role"], body["scope"]["all"]) == ("local", "admin", True)


# --- every action /me names is one the server allows, and no other ----------------------------


def _annotation_of_someone_else(world: ApiWorld) -> tuple[str, dict[str, Any]]:
    body = BODIES[("POST", "/devices/{device}/annotations")]
    status, made, _ = world.call(
        "POST",
        f"/devices/{IN_SCOPE}/annotations",
        body=json.dumps(body),
        authorizer=jwt("admin"),
    )
    assert status == 201, made
    return made["annotation_id"], made


def _deletion_of_someone_else(world: ApiWorld) -> str:
    status, body, headers = world.call(
        "DELETE", f"/devices/{IN_SCOPE}/segments", WINDOW, authorizer=jwt("admin")
    )
    assert status == 202, body
    return headers["Location"]


def attempt(world: ApiWorld, action: str, role: str) -> int:
    """The status of the request ``action`` stands for, made by a caller holding ``role``."""
    caller = jwt(role)
    device = f"/devices/{IN_SCOPE}"
    if action == "read":
        return world.call("GET", f"{device}/segments", WINDOW, authorizer=caller)[0]
    if action in ("annotate", "export", "hold", "share"):
        path = {"annotate": "annotations", "export": "exports", "hold": "holds"}.get(
            action, "shares"
        )
        body = dict(BODIES[("POST", f"/devices/{{device}}/{path}")])
        if action == "hold":  # outside WINDOW: a hold there would refuse the deletions (409)
            body |= {"from": "2026-11-29T12:00:00Z", "to": "2026-11-29T12:05:00Z"}
        payload = json.dumps(body)
        return world.call("POST", f"{device}/{path}", body=payload, authorizer=caller)[0]
    if action in ("delete", "erase"):
        query = WINDOW + ("&erase=true" if action == "erase" else "")
        return world.call("DELETE", f"{device}/segments", query, authorizer=caller)[0]
    if action == "review":
        # someone else's annotation, its review status changed and nothing else
        annotation_id, made = _annotation_of_someone_else(world)
        changed = {"target": made["target"], "status": "approved"}
        return world.call(
            "PUT",
            f"{device}/annotations/{annotation_id}",
            body=json.dumps(changed),
            headers={"If-Match": f'"{made["version"]}"'},
            authorizer=caller,
        )[0]
    if action == "manage_others":
        # withdraw someone else's deletion request
        return world.call("DELETE", _deletion_of_someone_else(world), authorizer=caller)[0]
    raise AssertionError(f"no request stands for {action}")


def test_every_action_me_names_is_allowed_and_every_other_refused(world: ApiWorld) -> None:
    every = EXPECTED["admin"]
    outcomes = {}
    for role in ROLES:
        # Given what /me says the role may do
        _, body, _ = me(world, jwt(role))
        for action in every:
            # When the role makes the request the action stands for
            status = attempt(world, action, role)
            outcomes[(role, action)] = status
            # Then it is allowed exactly when /me names the action
            allowed = status not in (401, 403)
            assert allowed == (action in body["actions"]), (role, action, status)
            assert status < 500, (role, action, status)
    assert len(outcomes) == len(ROLES) * len(every) == 36
