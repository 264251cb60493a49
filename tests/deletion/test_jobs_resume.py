"""A deletion job stopped anywhere and continued ends as if it had never stopped.

One moto world for the module (each example uses a device of its own); the process is
"killed" at its n-th AWS request — before the request, or once it took effect but
before its answer was read — and every request after that fails, as in a dead process.
Another runner continues once the dead one's lease has run out.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.support.deletion_world import (
    Killed,
    Killer,
    World,
    at,
    deletions_table,
    expected_versions,
    make_world,
    meets,
    put_run,
    shape,
    versions,
)
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.jobs import DEFAULT_LEASE_SECONDS
from video_index.deletion.model import DeletionState

LOW, HIGH = at(20, 9, 58, 30), at(20, 10, 3)
_devices = (f"cam-{n}" for n in itertools.count())


@pytest.fixture(scope="module")
def shared(request: pytest.FixtureRequest) -> Iterator[World]:
    with mock_aws():
        dynamodb, table = deletions_table("moto", request)
        yield make_world(dynamodb, table)


def new_job(world: World, *, erase: bool) -> tuple[str, str, list[str], set[str]]:
    """12 keys of a device of its own over two hour folders, 9 of them in the window, and a
    job deleting them 2 at a time: (deletion id, device, keys, keys covered)."""
    device = f"{next(_devices)}-{uuid.uuid4().hex[:6]}"
    keys = put_run(world.s3, device, at(20, 9, 58), 12, step_s=20)
    deletion_id = (
        world.jobs(batch_size=2)
        .create(
            device, to_epoch_ms(LOW), to_epoch_ms(HIGH), kind="video", erase=erase, created_by="t"
        )
        .deletion_id
    )
    return deletion_id, device, keys, meets(keys, device, LOW, HIGH)


def requests_of_a_whole_run(world: World, *, erase: bool) -> list[str]:
    """The AWS requests (operation names, in order) an uninterrupted job of the same shape
    makes: the kill points, so every example kills at a request that really happens."""
    deletion_id, _, _, covered = new_job(world, erase=erase)
    recorder = Killer([world.s3, world.dynamodb], None)
    try:
        job = world.jobs(batch_size=2).run(deletion_id).request
    finally:
        recorder.disarm()
    assert (job.state, job.deleted) == (DeletionState.DONE, len(covered))
    return recorder.operations


@pytest.fixture(scope="module")
def whole_runs(shared: World) -> dict[bool, list[str]]:
    """``requests_of_a_whole_run`` for each ``erase``, recorded once: every job of the shape
    makes the same requests (each example checks so up to its kill point)."""
    return {erase: requests_of_a_whole_run(shared, erase=erase) for erase in (False, True)}


@settings(
    max_examples=5,  # a CI budget: `make test-deep` runs ten times as many, at random
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), after=st.booleans(), erase=st.booleans())
def test_a_job_killed_anywhere_and_resumed_ends_as_if_never_stopped(
    shared: World, whole_runs: dict[bool, list[str]], data: st.DataObject, after: bool, erase: bool
) -> None:
    # Given the requests a whole run makes, and one of them drawn as the kill point
    requests = whole_runs[erase]
    kill_at = data.draw(st.integers(1, len(requests)), label="kill_at")
    note(f"killed {'after' if after else 'before'} request {kill_at}: {requests[kill_at - 1]}")
    # And a job of the same shape: 12 keys of a device over two hour folders, 9 of them in
    # the window, deleted 2 at a time
    deletion_id, device, keys, covered = new_job(shared, erase=erase)
    # When the process dies at that request
    killer = Killer([shared.s3, shared.dynamodb], kill_at, after=after)
    try:
        with pytest.raises(Killed):
            shared.jobs(batch_size=2).run(deletion_id)
    finally:
        killer.disarm()
    # (the kill fired, at the request drawn: the run made the same requests until then)
    assert killer.operations[:kill_at] == requests[:kill_at]
    # And another process continues once the dead one's lease has run out
    shared.clock.now += DEFAULT_LEASE_SECONDS + 1
    job = shared.jobs(batch_size=2).run(deletion_id).request
    # Then the end is that of an uninterrupted run: each key deleted once (one delete
    # marker, or no version left), none skipped, each counted once
    assert job.state is DeletionState.DONE
    assert (job.total, job.deleted) == (len(covered), len(covered))
    prefix = f"v1/video/{device}/"
    assert shape(versions(shared.s3, prefix=prefix)) == expected_versions(
        keys, covered, erase=erase
    )
