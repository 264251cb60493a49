"""Deletion jobs (docs/deletion.md): what they delete, and that they can be stopped anywhere.

On moto's S3 (a versioned bucket) and both DynamoDB engines. The expected end state is
computed independently of the product: a key is the window's when its interval meets
the window; then it has a delete marker on top of its version (or, erased, no version
at all), and every other key is untouched.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.support.deletion_world import (
    BUCKET,
    REPLICA,
    Killed,
    Killer,
    World,
    at,
    current,
    deletions_table,
    expected_versions,
    make_world,
    meets,
    put,
    put_run,
    shape,
    versioned_bucket,
    versions,
)
from video_index.core.errors import BadInput, TransientError
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.jobs import DEFAULT_LEASE_SECONDS, DeletionJobs, JobBusy
from video_index.deletion.model import DeletionState

DEVICE = "cam-del"
OTHER = "cam-keep"
FROM, TO = at(20, 10, 0, 30), at(20, 10, 1, 30)


def _seed(world: World) -> dict[str, list[str]]:
    """Video every 10 s around the window, sensor readings every 30 s, another device."""
    first = at(20, 9, 59)
    readings = [first + timedelta(seconds=30 * i) for i in range(8)]
    return {
        "video": put_run(world.s3, DEVICE, first, 24),
        "sensor": [put(world.s3, DEVICE, moment, 0, "sensor") for moment in readings],
        "other": put_run(world.s3, OTHER, first, 24),
    }


def _covered(keys: list[str], low: Any = FROM, high: Any = TO, kind: str | None = None) -> set[str]:
    return meets(keys, DEVICE, low, high, kind)


def _create(
    jobs: DeletionJobs, *, erase: bool = False, kind: str | None = None, device: str = DEVICE
) -> str:
    request = jobs.create(
        device, to_epoch_ms(FROM), to_epoch_ms(TO), kind=kind, erase=erase, created_by="tester"
    )
    return request.deletion_id


@pytest.mark.parametrize("erase", [False, True], ids=["markers", "erase"])
def test_a_job_deletes_exactly_the_window_of_the_device_and_counts_it(
    world: World, erase: bool
) -> None:
    # Given video and sensor readings of a device around a window, and another device
    seeded = _seed(world)
    every = [k for keys in seeded.values() for k in keys]
    covered = _covered(every)
    assert 0 < len(covered) < len(seeded["video"]) + len(seeded["sensor"])
    jobs = world.jobs(batch_size=4)
    # When the window is deleted
    deletion_id = _create(jobs, erase=erase)
    run = jobs.run(deletion_id)
    # Then the job is done and counted exactly what the window held
    job = run.request
    assert (job.state, job.total, job.deleted, job.remaining) == (
        DeletionState.DONE,
        len(covered),
        len(covered),
        0,
    )
    # And the window's keys carry a delete marker over their version (undeletable) or,
    # erased, have no version left; nothing else changed
    assert shape(versions(world.s3)) == expected_versions(every, covered, erase=erase)
    assert job.versions_deleted == (len(covered) if erase else 0)


@pytest.mark.parametrize("erase", [False, True], ids=["markers", "erase"])
def test_a_window_from_the_top_of_an_hour_takes_that_hours_first_key(
    moto_world: World, erase: bool
) -> None:
    # Given segments from the top of an hour on, after an hour without any
    keys = put_run(moto_world.s3, DEVICE, at(20, 10), 6)
    jobs = moto_world.jobs()
    request = jobs.create(
        DEVICE, to_epoch_ms(at(20, 10)), to_epoch_ms(at(20, 10, 0, 30)),
        kind="video", erase=erase, created_by="t",
    )  # fmt: skip
    # When the window from that hour's first instant is deleted
    job = jobs.run(request.deletion_id).request
    # Then its first key is deleted too (the listing starts after the hour folder's name)
    assert job.deleted == 3
    assert set(current(moto_world.s3)) == set(keys[3:])


def test_an_erasure_also_removes_what_was_deleted_before_and_the_replicas_copies(
    world: World,
) -> None:
    # Given a window whose keys are also in a replica, and one of them deleted already
    seeded = _seed(world)
    every = [k for keys in seeded.values() for k in keys]
    covered = sorted(_covered(every))
    versioned_bucket(world.s3, REPLICA)
    for key in every:
        world.s3.copy_object(Bucket=REPLICA, Key=key, CopySource={"Bucket": BUCKET, "Key": key})
    world.s3.delete_object(Bucket=BUCKET, Key=covered[0])
    # When the window is erased
    jobs = world.jobs(replica=REPLICA)
    job = jobs.run(_create(jobs, erase=True)).request
    # Then no version of any of its keys is left, in the bucket or in the replica
    assert job.state is DeletionState.DONE and job.deleted == len(covered)
    assert job.versions_deleted == len(covered) + 1  # and the earlier delete marker
    for bucket in (BUCKET, REPLICA):
        left = versions(world.s3, bucket)
        assert not set(covered) & set(left), bucket
        assert set(left) == set(every) - set(covered), bucket


def test_running_twice_or_asking_twice_changes_nothing(world: World) -> None:
    # Given a window deleted once
    seeded = _seed(world)
    jobs = world.jobs()
    first = _create(jobs)
    jobs.run(first)
    after_first = versions(world.s3)
    # When the job runs again (a redelivered message) and the same window is asked again
    again = jobs.run(first).request
    second = jobs.run(_create(jobs)).request
    # Then nothing changes: no second delete marker, nothing counted twice
    assert versions(world.s3) == after_first
    assert again.deleted == len(_covered([k for keys in seeded.values() for k in keys]))
    assert (second.state, second.total, second.deleted) == (DeletionState.DONE, 0, 0)


def test_a_kind_deletes_that_kind_only(world: World) -> None:
    seeded = _seed(world)
    jobs = world.jobs()
    jobs.run(_create(jobs, kind="sensor"))
    assert set(current(world.s3)) == set(seeded["video"]) | set(seeded["other"]) | (
        set(seeded["sensor"]) - _covered(seeded["sensor"])
    )


def test_an_unknown_device_is_an_empty_job_not_an_error(world: World) -> None:
    _seed(world)
    calls: list[str] = []
    world.s3.meta.events.register("before-call", lambda **kw: calls.append(kw["model"].name))
    jobs = world.jobs()
    job = jobs.run(_create(jobs, device="cam-nobody")).request
    assert (job.state, job.total, job.deleted, job.remaining) == (DeletionState.DONE, 0, 0, 0)
    # One probe per kind, nothing listed hour by hour
    assert calls == ["ListObjectsV2"] * 3


@pytest.mark.parametrize(
    ("low", "high", "kind"),
    [
        (TO, FROM, None),
        (FROM, FROM, None),
        (FROM, FROM + timedelta(days=31, milliseconds=1), None),
        (FROM, TO, "audio"),
    ],
)
def test_bad_windows_and_kinds_are_refused_and_nothing_is_recorded(
    world: World, low: Any, high: Any, kind: str | None
) -> None:
    jobs = world.jobs()
    with pytest.raises(BadInput):
        jobs.create(
            DEVICE, to_epoch_ms(low), to_epoch_ms(high), kind=kind, erase=False, created_by="t"
        )
    assert list(jobs.table.all_windows()) == []


def test_a_killed_job_resumes_on_an_endpoint_over_http_too(
    aws: None, request: pytest.FixtureRequest
) -> None:
    dynamodb, table = deletions_table("endpoint", request)
    world = make_world(dynamodb, table)
    keys = put_run(world.s3, DEVICE, at(20, 9, 57), 30, step_s=20)
    low, high = at(20, 9, 58, 30), at(20, 10, 4)
    jobs = world.jobs(batch_size=3)
    deletion_id = jobs.create(
        DEVICE, to_epoch_ms(low), to_epoch_ms(high), kind=None, erase=False, created_by="t"
    ).deletion_id
    killer = Killer([world.s3, world.dynamodb], 14, after=True)
    with pytest.raises(Killed):
        jobs.run(deletion_id)
    killer.disarm()
    # While the dead runner's lease holds, nobody else runs the job twice at once
    with pytest.raises(JobBusy):
        world.jobs().run(deletion_id)
    world.clock.now += DEFAULT_LEASE_SECONDS + 1
    job = world.jobs(batch_size=3).run(deletion_id).request
    covered = _covered(keys, low, high)
    assert (job.state, job.deleted) == (DeletionState.DONE, len(covered))
    assert shape(versions(world.s3)) == expected_versions(keys, covered, erase=False)


def test_a_job_out_of_time_pauses_at_a_checkpoint_and_its_continuation_finishes(
    world: World,
) -> None:
    seeded = _seed(world)
    jobs = world.jobs(batch_size=2)
    deletion_id = _create(jobs)
    checks = iter([1000.0] * 6 + [0.0])
    # When the function's time runs out after a few checkpoints
    paused = jobs.run(deletion_id, time_left=lambda: next(checks, 0.0), margin_seconds=60)
    # Then the run stops paused, still running, and anyone may continue at once
    assert paused.paused and paused.request.state is DeletionState.RUNNING
    done = jobs.run(deletion_id).request
    covered = _covered([k for keys in seeded.values() for k in keys])
    assert (done.state, done.deleted) == (DeletionState.DONE, len(covered))


def test_withdrawing_a_running_job_stops_it_and_ends_enforcement(world: World) -> None:
    seeded = _seed(world)
    jobs = world.jobs(batch_size=2)
    deletion_id = _create(jobs)
    assert [w.deletion_id for w in jobs.windows(DEVICE)] == [deletion_id]

    def withdraw_once_deleting(job: Any) -> None:
        if job.deleted and job.state is DeletionState.RUNNING:
            jobs.withdraw(deletion_id, "someone")

    # When the request is withdrawn while its job deletes
    job = jobs.run(deletion_id, progress=withdraw_once_deleting).request
    # Then the job stopped at its next checkpoint, and the window is no longer in force
    assert job.state is DeletionState.WITHDRAWN and job.withdrawn_by == "someone"
    covered = _covered([k for keys in seeded.values() for k in keys])
    assert 0 < job.deleted < len(covered)
    assert len(covered - set(current(world.s3))) <= job.deleted + 2  # one batch in flight
    assert jobs.windows(DEVICE) == []
    # And withdrawing again, or running it again, changes nothing
    assert jobs.withdraw(deletion_id, "else").withdrawn_by == "someone"
    assert jobs.run(deletion_id).request.deleted == job.deleted


def _refuse(code: str, status: int) -> Any:
    def refuse(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "DeleteObjects",
        )

    return refuse


def test_a_refusing_bucket_fails_the_job_with_the_reason_a_slow_one_retries(
    world: World,
) -> None:
    _seed(world)
    jobs = world.jobs()
    slow, denied = _create(jobs), _create(jobs, erase=True)
    event = "before-call.s3.DeleteObjects"
    # A transient failure leaves the job running, its lease given up, for a retry
    slow_down = _refuse("SlowDown", 503)
    world.s3.meta.events.register(event, slow_down)
    with pytest.raises(TransientError):
        jobs.run(slow)
    assert jobs.get(slow).state is DeletionState.RUNNING
    # A refusal that retrying will not fix ends the job failed, with the reason
    world.s3.meta.events.unregister(event, slow_down)
    denial = _refuse("AccessDenied", 403)
    world.s3.meta.events.register(event, denial)
    failed = jobs.run(denied).request
    assert failed.state is DeletionState.FAILED and "denied" in (failed.error or "")
    # And the slow one finishes once S3 answers again; the failed request stays in force
    world.s3.meta.events.unregister(event, denial)
    assert jobs.run(slow).request.state is DeletionState.DONE
    assert {w.deletion_id for w in jobs.windows(DEVICE)} == {slow, denied}


def test_dry_run_preview_counts_what_the_job_would_delete_and_records_nothing(
    world: World,
) -> None:
    seeded = _seed(world)
    jobs = world.jobs()
    preview = jobs.preview(DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=False)
    assert preview.keys == len(_covered([k for keys in seeded.values() for k in keys]))
    assert preview.bytes == preview.keys * 128
    assert list(jobs.table.all_windows()) == []
