"""Deletion jobs end, and say how (docs/deletion.md, "When a job fails").

On moto's S3 and DynamoDB, the deletion worker fed SQS-shaped records as Lambda feeds it:

* an error inside a job that retrying will not fix — the product's own (the old
  ``to: must be after from`` of a zero-length reading) or an unexpected one — ends the job
  ``failed`` with the reason at once, never ``running`` without a runner;
* a transient failure is retried from the checkpoint until the queue's last receive, which
  ends the job ``failed`` with the reason and consumes the message (never a job parked in
  the DLQ while it reads ``running``); each failure is counted once (``DeletionJobsFailed``);
* the failed request stays in force: enforcement deletes a re-upload into its window again,
  ``retry`` (``video-index delete --resume``) continues it from its checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from aws_lambda_powertools import Metrics
from botocore.exceptions import ClientError

from tests.support.deletion_world import World, at, put, put_run, versions
from video_index.aws.objects import ObjectStore
from video_index.core.errors import BadInput
from video_index.core.holding import HeldWindow
from video_index.core.keys import parse_key
from video_index.core.queue_settings import DELETION_MAX_RECEIVES
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.enforcement import Enforcer, Verdict
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.model import DeletionState
from video_index.deletion.worker import DeletionWorker
from worlds import events as ev

DEVICE = "cam-fails"
FROM, TO = at(20, 10), at(20, 10, 1)
SLOW_DOWN = "before-call.s3.DeleteObjects"


def _seed(world: World) -> list[str]:
    """Six 10-second segments in the window, and one reading of 0 ms inside it."""
    return [*put_run(world.s3, DEVICE, FROM, 6), put(world.s3, DEVICE, FROM, 0, "sensor")]


def _create(jobs: DeletionJobs) -> str:
    return jobs.create(
        DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=False, created_by="ann"
    ).deletion_id


class _RefusingHolds:
    """Holds that cannot be read: ``error`` on every question (a fault injected)."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.armed = False

    def windows(self, device: str, from_ms: int, to_ms: int) -> Sequence[HeldWindow]:
        if self.armed:
            raise self.error
        return ()


def _slow_down(**_: Any) -> None:
    raise ClientError(
        {"Error": {"Code": "SlowDown"}, "ResponseMetadata": {"HTTPStatusCode": 503}},
        "DeleteObjects",
    )


def _metrics() -> Metrics:
    """Powertools metrics, empty (Powertools keeps one metric set per process)."""
    metrics = Metrics(namespace="test", service="deletion")
    metrics.clear_metrics()
    return metrics


def _deliver(worker: DeletionWorker, deletion_id: str, receive: int) -> dict[str, Any]:
    record = ev.sqs_record(json.dumps({"deletion_id": deletion_id}), receive_count=receive)
    return worker.handle(ev.sqs_event(record), None)


@pytest.mark.parametrize(
    "error",
    [BadInput("to", "must be after from"), KeyError("from_ms")],
    ids=["the product's own", "unexpected"],
)
def test_an_error_retrying_will_not_fix_ends_the_job_failed_with_its_reason_at_once(
    world: World, error: Exception
) -> None:
    # Given a recorded request over a window, whose job then meets an error inside
    _seed(world)
    holds = _RefusingHolds(error)
    jobs = world.jobs()
    jobs.holds = holds
    deletion_id = _create(jobs)
    holds.armed = True
    metrics = _metrics()
    worker = DeletionWorker(jobs, lambda _: None, metrics)
    # When the worker receives its message for the first time
    answer = _deliver(worker, deletion_id, receive=1)
    # Then the message is consumed and the job reads failed, naming the reason
    assert answer == {"batchItemFailures": []}
    failed = jobs.get(deletion_id)
    assert failed.state is DeletionState.FAILED
    assert failed.error is not None and str(error).strip("'") in failed.error
    assert "lease_owner" not in jobs.table.get_request(deletion_id)  # type: ignore[operator]
    # And it is counted once, however often the message comes again
    _deliver(worker, deletion_id, receive=2)
    assert metrics.metric_set["DeletionJobsFailed"]["Value"] == [1.0]


def test_a_transient_failure_is_retried_until_the_last_receive_which_ends_it_failed(
    world: World,
) -> None:
    # Given a job whose DeleteObjects S3 keeps answering 503 SlowDown
    keys = _seed(world)
    jobs = world.jobs()
    deletion_id = _create(jobs)
    metrics = _metrics()
    worker = DeletionWorker(jobs, lambda _: None, metrics)
    world.s3.meta.events.register(SLOW_DOWN, _slow_down)
    # When SQS delivers its message again and again
    for receive in range(1, DELETION_MAX_RECEIVES):
        answer = _deliver(worker, deletion_id, receive)
        # Then each delivery before the last fails its record (SQS retries), the job
        # running and its lease given up for the next delivery
        assert len(answer["batchItemFailures"]) == 1, receive
        assert jobs.get(deletion_id).state is DeletionState.RUNNING
        assert "lease_owner" not in jobs.table.get_request(deletion_id)  # type: ignore[operator]
    # And the last one ends the job failed with the reason, and consumes the message
    assert _deliver(worker, deletion_id, DELETION_MAX_RECEIVES) == {"batchItemFailures": []}
    failed = jobs.get(deletion_id)
    assert failed.state is DeletionState.FAILED
    assert "SlowDown" in (failed.error or "") and "last retry" in (failed.error or "")
    assert metrics.metric_set["DeletionJobsFailed"]["Value"] == [1.0]
    # And nothing was deleted
    assert all(len(vs) == 1 for key, vs in versions(world.s3).items() if key in keys)


def test_a_failed_request_stays_in_force_and_a_retry_finishes_it(world: World) -> None:
    # Given a job that ended failed (S3 slowed down on its last receive)
    keys = _seed(world)
    jobs = world.jobs()
    deletion_id = _create(jobs)
    world.s3.meta.events.register(SLOW_DOWN, _slow_down)
    worker = DeletionWorker(jobs, lambda _: None)
    _deliver(worker, deletion_id, DELETION_MAX_RECEIVES)
    assert jobs.get(deletion_id).state is DeletionState.FAILED
    world.s3.meta.events.unregister(SLOW_DOWN, _slow_down)
    # When a segment appears in its window (a camera's late upload)
    again = put(world.s3, DEVICE, FROM + timedelta(seconds=35), 5_000)
    enforcer = Enforcer(jobs.table, ObjectStore(world.s3, "video-index-deletion-tests"), jobs.holds)
    segment = parse_key(again)
    verdict = enforcer.enforce(segment, by="ingest")
    # Then enforcement deletes it again: the request a person made stays in force
    window = enforcer.window_of(segment)
    assert verdict is Verdict.ENFORCED
    assert window is not None and window.deletion_id == deletion_id
    assert [v.marker for v in versions(world.s3)[again]] == [True, False]
    # When the job is retried (video-index delete --resume)
    reopened = jobs.retry(deletion_id)
    assert (reopened.state, reopened.error) == (DeletionState.QUEUED, None)
    done = jobs.run(deletion_id).request
    # Then it finishes, the zero-length reading included
    assert done.state is DeletionState.DONE
    assert all(versions(world.s3)[key][0].marker for key in keys)
    # And a retry of a job that did not fail changes nothing
    assert jobs.retry(deletion_id).state is DeletionState.DONE
