"""Destruction is guarded (docs/access.md): future windows, erase, the daily quota, and who
may withdraw, through the real resolver on moto."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from tests.support.deletion_world import Clock
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from worlds import events as ev
from worlds.api_world import WORLD_POLICY, ApiWorld, at, make_world

DEVICE = "cam-guard"
PAST = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"


def jwt(sub: str, role: str) -> dict[str, Any]:
    return ev.cognito_authorizer(sub, [role], devices="*")


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
    made.policy = replace(WORLD_POLICY, deletions_per_day=3)
    yield made


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


def test_the_quota_is_spent_only_by_a_request_that_passed_every_check(world: ApiWorld) -> None:
    # Given a quota of 3 a day, and a hold over the first hour of a day of the device
    Holds(HoldStore(boto3.client("dynamodb"), "holds")).create(
        DEVICE,
        int(at(29, 10).timestamp() * 1000),
        int(at(29, 11).timestamp() * 1000),
        "case 1",
        "someone",
    )
    operator = jwt("op", "operator")
    # When the operator asks again and again for what is refused: the held window (409),
    # windows that are backwards, too long or in the future, and a bad kind (400)
    queries = [
        PAST,
        "from=2026-11-29T12:00:00Z&to=2026-11-29T11:00:00Z",
        "from=2026-10-01T00:00:00Z&to=2026-11-29T00:00:00Z",
        "from=2026-11-30T11:00:00Z&to=2026-12-01T00:00:00Z",
        "from=2026-11-29T12:00:00Z&to=2026-11-29T13:00:00Z&kind=audio",
    ]
    refused = [ask(world, operator, query)[0] for query in queries * 2]
    assert refused == [409, 400, 400, 400, 400] * 2
    # Then none of them spent the quota: three requests that pass are still accepted
    accepted = [
        ask(world, operator, f"from=2026-11-29T1{h}:00:00Z&to=2026-11-29T1{h}:30:00Z")[0]
        for h in (2, 3, 4)
    ]
    assert accepted == [202, 202, 202]
    # And the fourth is the one refused with 429
    assert ask(world, operator, "from=2026-11-29T15:00:00Z&to=2026-11-29T16:00:00Z")[0] == 429
