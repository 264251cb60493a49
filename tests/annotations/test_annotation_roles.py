"""Whose annotations a caller may change (docs/access.md): reviewers annotate, set the
review status of others' annotations, and change nothing else of them; admins change any."""

from __future__ import annotations

import json
from typing import Any

from tests.annotations.conftest import DEVICE, jwt, post
from worlds.api_world import ApiWorld

BODY = {
    "target": {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T10:05:00Z"},
    "description": "a fox",
    "tags": ["fox"],
}


def change(
    world: ApiWorld, method: str, aid: str, version: int, who: dict[str, Any], **body: Any
) -> int:
    path = f"/devices/{DEVICE}/annotations/{aid}"
    payload = json.dumps({**BODY, **body}) if method == "PUT" else None
    headers = {"If-Match": f'"{version}"'}
    return world.call(method, path, body=payload, headers=headers, authorizer=who)[0]


def test_a_viewer_cannot_annotate(world: ApiWorld) -> None:
    status, body, _ = post(world, BODY, authorizer=jwt("vera", "viewer"))
    assert status == 403 and "reviewer" in body["error"]["message"]


def test_a_reviewer_sets_the_status_of_anothers_annotation_and_nothing_else(
    world: ApiWorld,
) -> None:
    # Given alice's annotation (a reviewer)
    status, created, _ = post(world, BODY, authorizer=jwt("alice", "reviewer"))
    assert status == 201
    aid, bob = created["annotation_id"], jwt("bob", "reviewer")
    # When bob, another reviewer, changes its description, or deletes it: refused
    assert change(world, "PUT", aid, 1, bob, description="a cat", status="approved") == 403
    assert change(world, "DELETE", aid, 1, bob) == 403
    # When bob only approves it: accepted
    assert change(world, "PUT", aid, 1, bob, status="approved") == 200
    # And alice still changes her own freely, an admin anyone's
    assert change(world, "PUT", aid, 2, jwt("alice", "reviewer"), description="two foxes") == 200
    assert change(world, "DELETE", aid, 3, jwt("root", "admin")) == 204
