"""Holds win as deployed (docs/holds.md): every function is built by its own handler's
``build()`` from the template's ``Environment.Variables`` (each table, bucket and queue it
names made on moto under a local name, :mod:`tests.support.template_world`), and a hold
placed after a deletion request keeps its footage — through the deletion job, a bulk
deletion, enforcement on re-ingest and reconcile — while bulk restore brings held footage
back. Without the holds table none of the functions that delete starts.

Expected answers are the test's own: which keys a window or a hold covers is worked out
by :func:`tests.support.deletion_world.meets`, an independent reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.infra.template import Synth
from tests.support.deletion_world import current, meets, put
from tests.support.template_world import REGION, TemplateWorld, template_world
from video_index.app.services import ApiServices
from video_index.bulk.local import LocalEngine
from video_index.bulk.names import ACTION_DELETE_PLAN
from video_index.bulk.steps import dispatch
from video_index.core import functions
from video_index.core.errors import ConfigurationError
from video_index.core.keys import parse_key
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.model import DeletionState
from video_index.ingest.ingestor import Outcome
from video_index.local import s3_fidelity
from video_index.local.context import LocalLambdaContext
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.read_model_view import view

DEVICE = "cam-held"
FIRST = datetime(2025, 11, 29, 8, 0, tzinfo=UTC)
#: The request covers the first hour; the hold, placed after it, ten minutes of it.
FROM, TO = FIRST, FIRST + timedelta(hours=1)
HELD_FROM, HELD_TO = FIRST + timedelta(minutes=20), FIRST + timedelta(minutes=30)


@pytest.fixture
def deployed(synth: Synth, aws: None) -> Iterator[TemplateWorld]:
    undo = s3_fidelity.install()  # moto's S3 lists versions as S3 does (video-index local)
    try:
        yield template_world(synth)
    finally:
        undo()


def _segments(world: TemplateWorld, count: int = 12, step: int = 10) -> list[str]:
    """``count`` segments of 10 minutes' spacing from an hour before FIRST (so the window
    has footage before, inside and after it); the keys."""
    bucket = world.name(world.synth.video_index.storage.bucket)
    s3 = boto3.client("s3", region_name=REGION)
    start = FIRST - timedelta(minutes=30)
    return [
        put(s3, DEVICE, start + timedelta(minutes=step * n), 60_000, bucket=bucket)
        for n in range(count)
    ]


def _current(world: TemplateWorld) -> set[str]:
    bucket = world.name(world.synth.video_index.storage.bucket)
    return set(current(boto3.client("s3", region_name=REGION), bucket))


def _record_then_hold(api: ApiServices) -> str:
    """A deletion request over [FROM, TO), then a hold inside it: the request's id."""
    assert api.deletions is not None and api.holds is not None
    request = api.deletions.create(
        DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=False, created_by="ann"
    )
    api.holds.create(DEVICE, to_epoch_ms(HELD_FROM), to_epoch_ms(HELD_TO), "case 7", "bob")
    return request.deletion_id


# --- built as deployed -------------------------------------------------------------------


def test_every_function_is_built_from_its_template_environment_and_deleters_need_the_holds(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    for spec in functions.FUNCTIONS:
        # When its handler builds it from the template's environment, Then that succeeds
        assert deployed.build(spec, monkeypatch) is not None, spec.name
        # And one that deletes footage refuses to start without the holds table
        if spec.name in ("ingest", "reconcile", "deletion", "bulk", "retention"):
            with pytest.raises(ConfigurationError, match="VIDEO_INDEX_HOLDS_TABLE"):
                deployed.build(spec, monkeypatch, without=("VIDEO_INDEX_HOLDS_TABLE",))


def test_the_retention_job_as_deployed_keeps_what_a_hold_covers(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given footage of 2020 (past every retention the stack sets) and a hold on part of it
    first = datetime(2020, 3, 2, 8, 0, tzinfo=UTC)
    bucket = deployed.name(deployed.synth.video_index.storage.bucket)
    s3 = boto3.client("s3", region_name=REGION)
    keys = [put(s3, DEVICE, first + timedelta(minutes=n), 60_000, bucket=bucket) for n in range(6)]
    held_from, held_to = first + timedelta(minutes=2), first + timedelta(minutes=4)
    api = deployed.build(functions.API, monkeypatch)
    api.holds.create(DEVICE, to_epoch_ms(held_from), to_epoch_ms(held_to), "case 2", "bob")
    held = meets(keys, DEVICE, held_from, held_to)
    # When the retention function's job runs
    report = deployed.build(functions.RETENTION, monkeypatch).run()
    # Then it deleted the rest and kept what the hold covers
    assert (report.deleted, report.kept_held) == (len(keys) - len(held), len(held))
    assert _current(deployed) == held


# --- a hold placed after a deletion request --------------------------------------------


def test_the_deletion_job_keeps_footage_held_after_its_request_and_says_so(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given footage, a deletion request over an hour of it, then a hold inside that hour
    keys = _segments(deployed)
    api = deployed.build(functions.API, monkeypatch)
    deletion_id = _record_then_hold(api)
    covered, held = meets(keys, DEVICE, FROM, TO), meets(keys, DEVICE, HELD_FROM, HELD_TO)
    assert held and held < covered
    # When the deletion function handles the message the API queued for the job
    queue = deployed.name(deployed.synth.video_index.deletion.queue)
    (message,) = boto3.client("sqs", region_name=REGION).receive_message(QueueUrl=queue)["Messages"]
    worker = deployed.build(functions.DELETION, monkeypatch)
    context = LocalLambdaContext("video-index-deletion", 900, REGION)
    result = worker.handle(ev.sqs_event(ev.sqs_record(message["Body"])), context)
    # Then the job is done: it deleted the window but for what the hold keeps, and says so
    assert result == {"batchItemFailures": []}
    assert _current(deployed) == set(keys) - (covered - held)
    job = api.deletions.get(deletion_id)
    assert job.state is DeletionState.DONE, job
    assert (job.deleted, job.kept_held, job.remaining) == (len(covered - held), len(held), 0)


def test_a_bulk_deletion_keeps_footage_held_after_its_requests_were_recorded(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given footage, and the bulk function built as deployed
    keys = _segments(deployed)
    bulk = deployed.build(functions.BULK, monkeypatch)
    api = deployed.build(functions.API, monkeypatch)
    covered, held = meets(keys, DEVICE, FROM, TO), meets(keys, DEVICE, HELD_FROM, HELD_TO)

    def invoke(payload: dict[str, Any]) -> dict[str, Any]:
        result = dispatch(bulk, payload)
        if payload["action"] == ACTION_DELETE_PLAN:  # the requests are recorded: now a hold
            api.holds.create(DEVICE, to_epoch_ms(HELD_FROM), to_epoch_ms(HELD_TO), "case", "b")
        return result

    # When a bulk deletion of the hour runs, the hold placed right after its plan
    window = {"from_ms": to_epoch_ms(FROM), "to_ms": to_epoch_ms(TO), "created_by": "ann"}
    report = LocalEngine(bulk, invoke=invoke).delete({**window, "devices": [DEVICE]})
    # Then it deleted the hour but for what the hold keeps, and reports what it kept
    assert _current(deployed) == set(keys) - (covered - held)
    assert (report["done"], report["deleted"], report["kept_held"]) == (
        1,
        len(covered - held),
        len(held),
    )


def test_ingest_keeps_held_footage_uploaded_again_into_a_deletion_window(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a deletion request in force over an hour, then a hold inside it
    api = deployed.build(functions.API, monkeypatch)
    _record_then_hold(api)
    # And footage uploaded (again) into that hour, held and not
    keys = _segments(deployed)
    covered, held = meets(keys, DEVICE, FROM, TO), meets(keys, DEVICE, HELD_FROM, HELD_TO)
    bucket = deployed.name(deployed.synth.video_index.storage.bucket)
    s3 = boto3.client("s3", region_name=REGION)
    records = []
    for n, key in enumerate(keys):
        head = s3.head_object(Bucket=bucket, Key=key)
        etag, size = head["ETag"].strip('"'), head["ContentLength"]
        record = ev.s3_record(key, size=size, etag=etag, sequencer=f"{n + 1:016X}", bucket=bucket)
        records.append(ev.sqs_record(ev.s3_notification(record)))
    # When the ingest function handles the notifications
    ingest = deployed.build(functions.INGEST, monkeypatch)
    assert ingest.handle(ev.sqs_event(*records), None) == {"batchItemFailures": []}
    # Then what the window covers is deleted again, but for what the hold keeps
    assert _current(deployed) == set(keys) - (covered - held)
    outcomes = ingest.ingestor.stats.outcomes
    assert (outcomes[Outcome.ENFORCED], outcomes[Outcome.HELD]) == (
        len(covered - held),
        len(held),
    )
    # And the held footage is indexed like any other (never the deleted)
    table = deployed.name(deployed.synth.video_index.read_model.table)
    stored = view(boto3.client("dynamodb", region_name=REGION), table).segments.values()
    indexed = {s.id for s in stored}
    assert indexed == {parse_key(k).id for k in set(keys) - (covered - held)}


def test_reconcile_keeps_held_footage_inside_a_deletion_window(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given footage the read model never heard of, a deletion request over an hour of it
    # (its job never ran) and a hold inside that hour
    keys = _segments(deployed)
    api = deployed.build(functions.API, monkeypatch)
    _record_then_hold(api)
    covered, held = meets(keys, DEVICE, FROM, TO), meets(keys, DEVICE, HELD_FROM, HELD_TO)
    # When the reconcile function reconciles from a listing (the stream consumer beside it)
    ops = deployed.build(functions.RECONCILE, monkeypatch)
    table = deployed.name(deployed.synth.video_index.read_model.table)
    with Aggregation(boto3.client("dynamodb", region_name=REGION), table).running():
        report = ops.reconcile(source="list")
    # Then it deleted again what the window covers but for what the hold keeps, counted
    assert _current(deployed) == set(keys) - (covered - held)
    assert (report.deletions_enforced, report.deletions_held) == (len(covered - held), len(held))
    assert report.entries_added == len(keys) - len(covered - held)


def test_bulk_restore_brings_back_held_footage_inside_a_deletion_window(
    deployed: TemplateWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a copy of the footage in another bucket, a deletion request over an hour of it
    # then a hold inside that hour, and the segment bucket emptied
    keys = _segments(deployed)
    s3 = boto3.client("s3", region_name=REGION)
    bucket = deployed.name(deployed.synth.video_index.storage.bucket)
    s3.create_bucket(Bucket="copy-of-segments")
    for key in keys:
        s3.copy_object(
            Bucket="copy-of-segments", Key=key, CopySource={"Bucket": bucket, "Key": key}
        )
        s3.delete_object(Bucket=bucket, Key=key)
    api = deployed.build(functions.API, monkeypatch)
    _record_then_hold(api)
    covered, held = meets(keys, DEVICE, FROM, TO), meets(keys, DEVICE, HELD_FROM, HELD_TO)
    # When the bulk function restores from the copy
    bulk = deployed.build(functions.BULK, monkeypatch)
    report = LocalEngine(bulk).restore({"source_bucket": "copy-of-segments", "run_id": "r1"})
    # Then held footage comes back like any other; only the rest of the window stays deleted
    assert _current(deployed) == set(keys) - (covered - held)
    assert (report["held"], report["withheld"]) == (len(held), len(covered - held))
