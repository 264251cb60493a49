"""One managed policy per role with IAM authorization (infra/access.py, docs/access.md)."""

from __future__ import annotations

from typing import Any

from infra.access import invoke_resource, role_routes
from tests.infra.template import Synth, as_list, joined
from video_index.core.access import Role


def _resources(synth: Synth, role: Role) -> set[str]:
    policies = synth.video_index.api.role_policies
    assert policies is not None
    document: dict[str, Any] = synth.props(policies.policies[role])["PolicyDocument"]
    (statement,) = document["Statement"]
    assert statement["Action"] == "execute-api:Invoke" and statement["Effect"] == "Allow"
    return {joined(r).split("/", 1)[1] for r in as_list(statement["Resource"])}


def test_each_role_invokes_exactly_its_routes(synth: Synth) -> None:
    # Given the default stack (IAM authorization), Then each role's policy names exactly
    # the routes of that role and the lower ones, as the resolver's document declares them
    routes = role_routes()
    for role in Role:
        expected = {f"$default/{m}{invoke_resource(p)}" for m, p in routes[role]}
        assert _resources(synth, role) == expected, role
    # And the roles nest: a viewer reads only, an admin may call every authorized route
    viewer = _resources(synth, Role.VIEWER)
    assert viewer and all(r.startswith("$default/GET/") for r in viewer)
    assert "$default/POST/devices/*/annotations" in _resources(synth, Role.REVIEWER)
    assert "$default/POST/devices/*/annotations" not in viewer
    assert "$default/DELETE/devices/*/segments" in _resources(synth, Role.OPERATOR)
    assert "$default/DELETE/devices/*/segments" not in _resources(synth, Role.REVIEWER)
    assert len(routes[Role.ADMIN]) == len(routes[Role.OPERATOR])  # admin adds no route
