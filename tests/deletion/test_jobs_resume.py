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
from hypothesis import HealthCheck, given, settings
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


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(kill_at=st.integers(1, 26), after=st.booleans(), erase=st.booleans())
def test_a_job_killed_anywhere_and_resumed_ends_as_if_never_stopped(
    shared: World, kill_at: int, after: bool, erase: bool
) -> None:
    # Given 12 keys of a device over two hour folders, 9 of them in the window, deleted
    # 2 at a time
    device = f"{next(_devices)}-{uuid.uuid4().hex[:6]}"
    keys = put_run(shared.s3, device, at(20, 9, 58), 12, step_s=20)
    covered = meets(keys, device, LOW, HIGH)
    jobs = shared.jobs(batch_size=2)
    deletion_id = jobs.create(
        device, to_epoch_ms(LOW), to_epoch_ms(HIGH), kind="video", erase=erase, created_by="t"
    ).deletion_id
    # When the process dies at its n-th AWS request
    killer = Killer([shared.s3, shared.dynamodb], kill_at, after=after)
    try:
        jobs.run(deletion_id)
    except Killed:
        pass
    finally:
        killer.disarm()
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
