"""No resurrection (docs/deletion.md): ingest and reconcile delete again what a recorded
window covers, and never count it; a withdrawn request stops that.

In-process: moto's S3 (versioned), the read model and the deletion requests table on
the same DynamoDB engine, S3 events shaped as S3 sends them.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.support.deletion_world import (
    BUCKET,
    World,
    at,
    deletions_table,
    make_world,
    put,
    versions,
)
from tests.support.tables import make_table_factory
from video_index.aws.deletions import DeletionTable
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import parse_key
from video_index.core.layout import bucket_pk
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.enforcement import Enforcer
from video_index.holds.service import HoldsHeldWindows
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor, Outcome
from video_index.ops.reconcile import Reconciler
from worlds import events as ev
from worlds.aggregation import Aggregation

DEVICE = "cam-enforced"
FROM, TO = at(21, 8), at(21, 9)
_sequencer = itertools.count(0x10000)


class Setup:
    def __init__(self, world: World, dynamodb: Any, read_model: str) -> None:
        self.world = world
        self.store = ReadModelStore(dynamodb, read_model, tombstone_days=35)
        self.objects = ObjectStore(world.s3, BUCKET)
        self.table = DeletionTable(world.dynamodb, world.table)
        self.enforcer = Enforcer(self.table, self.objects, HoldsHeldWindows(world.holds))
        self.ingest = IngestService(Ingestor(self.store, self.objects, enforcer=self.enforcer))
        self.aggregation = Aggregation(dynamodb, read_model)
        self.jobs = world.jobs()

    def record(self, *, erase: bool = False, kind: str | None = None) -> str:
        return self.jobs.create(
            DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=kind, erase=erase, created_by="t"
        ).deletion_id

    def upload(self, moment: Any, kind: str = "video", device: str = DEVICE) -> str:
        key = put(self.world.s3, device, moment, 0 if kind == "sensor" else 10_000, kind)
        head = self.world.s3.head_object(Bucket=BUCKET, Key=key)
        self.deliver(
            ev.s3_record(
                key,
                size=head["ContentLength"],
                etag=head["ETag"].strip('"'),
                sequencer=f"{next(_sequencer):X}",
                bucket=BUCKET,
            )
        )
        return key

    def created(self, key: str, sequencer: str | None = None) -> dict[str, Any]:
        """The ObjectCreated:Put record S3 sends for ``key`` (128 bytes)."""
        sequencer = sequencer or f"{next(_sequencer):X}"
        return ev.s3_record(key, size=128, sequencer=sequencer, bucket=BUCKET)

    def deliver(self, *records: dict[str, Any]) -> None:
        batch = ev.sqs_event(*(ev.sqs_record(ev.s3_notification(r)) for r in records))
        assert self.ingest.handle(batch, None) == {"batchItemFailures": []}

    def removed(self, key: str) -> None:
        """The delete event S3 sends for the delete marker."""
        self.deliver(
            ev.s3_record(
                key,
                event_name="ObjectRemoved:DeleteMarkerCreated",
                sequencer=f"{next(_sequencer):X}",
                bucket=BUCKET,
            )
        )

    def indexed(self, key: str) -> bool:
        record = self.store.get_segment(1, parse_key(key))
        return record is not None and record.present


@pytest.fixture
def setup(aws: None, engine: str, request: pytest.FixtureRequest) -> Setup:
    dynamodb, read_model = make_table_factory(engine, request)()
    _, deletions = deletions_table(engine, request)
    return Setup(make_world(dynamodb, deletions), dynamodb, read_model)


def test_an_upload_inside_a_recorded_window_is_deleted_again_and_never_counted(
    setup: Setup,
) -> None:
    # Given a recorded deletion window
    setup.record()
    # When a camera uploads (again) a segment inside it, and its event arrives
    key = setup.upload(at(21, 8, 30))
    # Then ingest deleted it again (a delete marker on top) and did not index it
    assert setup.ingest.ingestor.stats.outcomes == {Outcome.ENFORCED: 1}
    assert [v.marker for v in versions(setup.world.s3)[key]] == [True, False]
    assert not setup.indexed(key)
    # And when the delete event of that marker arrives, nothing was ever counted
    setup.removed(key)
    assert not setup.indexed(key)
    assert list(setup.store.query_all(bucket_pk(1, DEVICE))) == []
    # And a redelivered creation event deletes nothing twice
    setup.deliver(setup.created(key, "1"))
    assert [v.marker for v in versions(setup.world.s3)[key]] == [True, False]


def test_an_erased_window_keeps_no_version_of_a_new_upload(setup: Setup) -> None:
    setup.record(erase=True)
    key = setup.upload(at(21, 8, 30))
    assert key not in versions(setup.world.s3)
    assert not setup.indexed(key)


def test_uploads_outside_the_window_its_kind_or_its_device_are_indexed_as_usual(
    setup: Setup,
) -> None:
    setup.record(kind="video")
    kept = [
        setup.upload(at(21, 9, 0)),  # starts where the window ends
        setup.upload(at(21, 8, 30), kind="sensor"),  # another kind
        setup.upload(at(21, 8, 30), device="cam-other"),  # another device
    ]
    assert all(setup.indexed(key) for key in kept)
    assert setup.ingest.ingestor.stats.outcomes == {Outcome.APPLIED: 1}  # the last batch


def test_after_withdrawal_a_new_upload_stays(setup: Setup) -> None:
    deletion_id = setup.record()
    setup.jobs.withdraw(deletion_id, "t")
    key = setup.upload(at(21, 8, 30))
    assert setup.indexed(key)
    assert [v.marker for v in versions(setup.world.s3)[key]] == [False]


def test_windows_are_read_once_per_batch_and_a_new_request_applies_to_the_next_batch(
    setup: Setup,
) -> None:
    # Given no request yet: a batch of uploads is indexed, reading the windows once
    first, second = (
        put(setup.world.s3, DEVICE, at(21, 8, 1)),
        put(setup.world.s3, DEVICE, at(21, 8, 2)),
    )
    before = setup.table.consumption.requests
    setup.deliver(setup.created(first), setup.created(second))
    assert setup.table.consumption.requests - before == 1
    assert setup.indexed(first) and setup.indexed(second)
    # When a request is recorded, the very next batch enforces it
    setup.record()
    key = setup.upload(at(21, 8, 3))
    assert not setup.indexed(key)


def test_reconcile_deletes_again_what_a_window_covers_even_where_the_read_model_agrees(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an object inside a window that is in S3 and in the read model (a rebuild
    # projected it before anything deleted it again)
    plain = IngestService(Ingestor(setup.store, setup.objects))
    key = put(setup.world.s3, DEVICE, at(21, 8, 30))
    outside = put(setup.world.s3, DEVICE, at(21, 10))
    for k in (key, outside):
        batch = ev.sqs_event(
            ev.sqs_record(
                ev.s3_notification(ev.s3_record(k, size=128, sequencer="A", bucket=BUCKET))
            )
        )
        plain.handle(batch, None)  # fmt: skip
    setup.record()
    setup.aggregation.drain()
    reconciler = Reconciler(
        setup.store,
        setup.objects,
        Ingestor(setup.store, setup.objects),
        mender=setup.aggregation.mender,
        enforcer=setup.enforcer,
    )
    # When reconcile runs dry, it reports the enforcement and changes nothing
    with caplog.at_level("WARNING"):
        dry = reconciler.run(setup.objects.list("v1/"), source="list", dry_run=True, force=True)
    assert dry.deletions_enforced == 1
    assert setup.indexed(key) and [v.marker for v in versions(setup.world.s3)[key]] == [False]
    # And what it logs is in the conditional: it deleted nothing (issue 35)
    said = [r.getMessage() for r in caplog.records if "deletion window" in r.getMessage()]
    assert said == ["object inside a recorded deletion window would be deleted again (dry run)"]
    caplog.clear()
    # When it runs, the object is deleted again and its entry removed; the rest stays
    with caplog.at_level("WARNING"):
        report = reconciler.run(setup.objects.list("v1/"), source="list", force=True)
    said = [r.getMessage() for r in caplog.records if "deletion window" in r.getMessage()]
    assert said == ["object inside a recorded deletion window deleted again"]
    assert report.deletions_enforced == 1 and report.entries_removed == 1
    assert [v.marker for v in versions(setup.world.s3)[key]] == [True, False]
    assert not setup.indexed(key) and setup.indexed(outside)
