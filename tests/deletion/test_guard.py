"""Destruction is guarded (docs/access.md): future windows, erase, the daily quota, and who
may withdraw, through the real resolver on moto."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.support.deletion_world import Clock
from video_index.api.access import configure_policy
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.access import AccessPolicy
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from worlds import events as ev
from worlds.api_world import ApiWorld, at, make_world

DEVICE = "cam-guard"
PAST = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"


def jwt(sub: str, role: str) -> dict[str, Any]:
    claims = {"sub": sub, "cognito:groups": f"[{role}]"}
    return {"jwt": {"claims": claims, "scopes": None}}


@pytest.fixture
def clock() -> Clock:
    return Clock(now=at(30, 12).timestamp())


@pytest.fixture
def world(aws: None, clock: Clock) -> Iterator[ApiWorld]:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
    made = make_world(dynamodb, "read-model")
    made.services.deletions = DeletionJobs(
        DeletionTable(dynamodb, "deletions"),
        ObjectStore(made.s3, ev.BUCKET),
        enqueue=lambda _: None,
        holds=HoldsHeldWindows(Holds(HoldStore(dynamodb, "holds"))),
        clock=clock,
    )
    configure_policy(AccessPolicy(deletions_per_day=3))
    yield made
    configure_policy(None)


def ask(world: ApiWorld, who: dict[str, Any], query: str = PAST) -> tuple[int, Any]:
    status, body, _ = world.call("DELETE", f"/devices/{DEVICE}/segments", query, authorizer=who)
    return status, body


def test_a_window_ending_in_the_future_is_refused_even_for_an_admin(world: ApiWorld) -> None:
    # Given an admin, When a window reaching past now (2026-11-30T12:00Z) is asked for, erase on
    future = "from=2026-11-30T11:00:00Z&to=2026-12-01T00:00:00Z&erase=true"
    status, body = ask(world, jwt("root", "admin"), future)
    # Then 400 naming "to": retention is configured, not requested
    assert status == 400 and body["error"]["parameter"] == "to"
    assert "future" in body["error"]["message"]
    # And nothing was recorded
    assert world.services.deletions is not None
    assert world.services.deletions.windows(DEVICE) == []


def test_erase_needs_an_admin(world: ApiWorld) -> None:
    status, body = ask(world, jwt("op", "operator"), PAST + "&erase=true")
    assert status == 403 and body["error"]["parameter"] == "erase"
    status, body = ask(world, jwt("root", "admin"), PAST + "&erase=true")
    assert status == 202 and body["erase"] is True and body["created_by"] == "root"


def test_a_caller_has_a_daily_quota(world: ApiWorld, clock: Clock) -> None:
    # Given a quota of 3 a day, When one operator asks 4 times
    answers = [ask(world, jwt("op", "operator"))[0] for _ in range(4)]
    # Then the fourth is refused with 429, and another operator still may ask
    assert answers == [202, 202, 202, 429]
    assert ask(world, jwt("other", "operator"))[0] == 202
    # And the next UTC day the first may ask again
    clock.now += 86_400
    assert ask(world, jwt("op", "operator"))[0] == 202


def test_only_the_creator_or_an_admin_withdraws(world: ApiWorld) -> None:
    _, made = ask(world, jwt("ann", "operator"))
    path = f"/deletions/{made['deletion_id']}"
    status, body, _ = world.call("DELETE", path, authorizer=jwt("bob", "operator"))
    assert status == 403 and "who made" in body["error"]["message"]
    status, body, _ = world.call("DELETE", path, authorizer=jwt("ann", "operator"))
    assert status == 200 and body["withdrawn_by"] == "ann"
    _, other = ask(world, jwt("ann", "operator"))
    path = f"/deletions/{other['deletion_id']}"
    status, body, _ = world.call("DELETE", path, authorizer=jwt("root", "admin"))
    assert status == 200 and body["withdrawn_by"] == "root"


def test_a_viewer_or_reviewer_cannot_ask_at_all(world: ApiWorld) -> None:
    for role in ("viewer", "reviewer"):
        assert ask(world, jwt("v", role))[0] == 403
