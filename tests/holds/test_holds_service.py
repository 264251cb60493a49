"""Holds on moto's DynamoDB: create, read, list a window, release by creator or admin, and
deletion requests refused over a hold (docs/holds.md)."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.errors import BadInput, Conflict, NotFound
from video_index.core.table_schema import deletions_table_definition, holds_table_definition
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Forbidden, Holds, HoldsHeldWindows

DAY = 86_400_000
T0 = 1_780_000_000_000  # a fixed instant; nothing depends on today


@pytest.fixture
def holds() -> Iterator[Holds]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**holds_table_definition("holds"))
        ids = iter(f"h{i}" for i in range(100))
        yield Holds(HoldStore(client, "holds"), clock=lambda: T0 / 1000, new_id=lambda: next(ids))


def test_a_hold_is_created_read_listed_and_released_with_its_history(holds: Holds) -> None:
    # Given a hold over two days of cam-1
    hold = holds.create("cam-1", T0, T0 + 2 * DAY, "  case 42 ", "alice")
    # Then it reads back with who and why
    read = holds.get(hold.hold_id)
    assert (read.reason, read.created_by, read.active, read.version) == (
        "case 42",
        "alice",
        True,
        1,
    )
    # And lists in windows it overlaps, not in others or for other devices
    assert [h.hold_id for h in holds.window("cam-1", T0 + DAY, T0 + 3 * DAY)] == [hold.hold_id]
    assert holds.window("cam-1", T0 + 2 * DAY, T0 + 3 * DAY) == []
    assert holds.window("cam-2", T0, T0 + DAY) == []
    # When its creator releases it
    released = holds.release(hold.hold_id, "alice", is_admin=False)
    # Then it stays, released, with both versions in its history
    again = holds.get(hold.hold_id)
    assert again == released
    assert (again.active, again.released_by) == (False, "alice")
    assert [c.action for c in again.history] == ["create", "release"]
    assert HoldsHeldWindows(holds).held("cam-1", T0, T0 + DAY) == []


def test_only_the_creator_or_an_admin_releases(holds: Holds) -> None:
    hold = holds.create("cam-1", T0, T0 + DAY, "incident", "alice")
    with pytest.raises(Forbidden, match="alice"):
        holds.release(hold.hold_id, "bob", is_admin=False)
    assert holds.get(hold.hold_id).active
    assert holds.release(hold.hold_id, "carol", is_admin=True).released_by == "carol"


def test_bad_holds_are_refused_naming_the_parameter(holds: Holds) -> None:
    with pytest.raises(BadInput) as longer:
        holds.create("cam-1", T0, T0 + 31 * DAY + 1, "x", "alice")
    assert longer.value.parameter == "to"
    with pytest.raises(BadInput) as empty:
        holds.create("cam-1", T0, T0 + DAY, "   ", "alice")
    assert empty.value.parameter == "reason"
    with pytest.raises(BadInput) as long_reason:
        holds.create("cam-1", T0, T0 + DAY, "x" * 1001, "alice")
    assert long_reason.value.parameter == "reason"
    with pytest.raises(NotFound):
        holds.get("nosuchhold")


def test_a_deletion_request_overlapping_a_hold_is_a_conflict_naming_it(holds: Holds) -> None:
    # Given a hold on cam-1 and deletion jobs that check holds first
    hold = holds.create("cam-1", T0, T0 + DAY, "case 7", "alice")
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(**deletions_table_definition("deletions"))
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="segments")
    jobs = DeletionJobs(
        DeletionTable(client, "deletions"),
        ObjectStore(s3, "segments"),
        enqueue=lambda _: None,
        clock=lambda: (T0 + 10 * DAY) / 1000,  # the windows below have ended
        holds=HoldsHeldWindows(holds),
    )
    # When a request overlaps it, Then it is refused naming the hold, before any write
    with pytest.raises(Conflict, match=hold.hold_id):
        jobs.create("cam-1", T0 + DAY - 1, T0 + 2 * DAY, kind=None, erase=False, created_by="bob")


def test_a_point_in_time_is_held_where_it_lies(holds: Holds) -> None:
    # Given a hold over [T0 + 1 day, T0 + 2 days) of cam-1
    hold = holds.create("cam-1", T0 + DAY, T0 + 2 * DAY, "case 9", "alice")
    held = HoldsHeldWindows(holds)
    # Then a zero-length reading (start = end) is held at its instant, the hold's first
    # instant included and its end excluded, and a point is never an error
    table = [
        (T0 + DAY - 1, []),
        (T0 + DAY, [hold.hold_id]),
        (T0 + DAY + 1, [hold.hold_id]),
        (T0 + 2 * DAY - 1, [hold.hold_id]),
        (T0 + 2 * DAY, []),
    ]
    for instant, expected in table:
        assert [w.hold_id for w in held.windows("cam-1", instant, instant)] == expected, instant
    # And only an end before the start is refused, naming it
    with pytest.raises(BadInput) as backwards:
        holds.window("cam-1", T0 + 1, T0)
    assert backwards.value.parameter == "to"
