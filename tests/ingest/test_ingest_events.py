"""Ingest decisions for one key: order, duplicates, deletes, versions, and asking S3."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from tests.support.tables import TableFactory
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.ingest.batches import IngestService
from video_index.ingest.events import (
    Action,
    MalformedMessage,
    events_from_body,
    normalize_sequencer,
)
from video_index.ingest.ingestor import Ingestor, Outcome
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.read_model_view import view

KEY = "v1/video/cam-001/2026/11/30/23/20261130T235500.000Z_600000_3f9a1c2e7b4d5a60.mp4"
SEGMENT = ("cam-001", "video", "20261130T235500.000Z_600000_3f9a1c2e7b4d5a60.mp4")


@dataclass
class World:
    s3: Any
    dynamodb: Any
    table: str
    service: IngestService
    aggregation: Aggregation

    def deliver(self, *records: dict[str, Any]) -> dict[str, Any] | None:
        batch = ev.sqs_event(*(ev.sqs_record(ev.s3_notification(r)) for r in records))
        return self.service.handle(batch, None)

    def outcomes(self) -> dict[Outcome, int]:
        return dict(self.service.ingestor.stats.outcomes)

    def segment(self) -> Any:
        return view(self.dynamodb, self.table).segments.get(SEGMENT)

    def buckets(self) -> dict[tuple[str, str, str], dict[str, int]]:
        """The buckets once the stream consumer has applied every change so far."""
        self.aggregation.drain()
        return view(self.dynamodb, self.table).buckets


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> World:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=ev.BUCKET)
    s3.put_bucket_versioning(Bucket=ev.BUCKET, VersioningConfiguration={"Status": "Enabled"})
    dynamodb, table = new_table()
    store = ReadModelStore(dynamodb, table, tombstone_days=35)
    return World(
        s3,
        dynamodb,
        table,
        IngestService(Ingestor(store, ObjectStore(s3, ev.BUCKET))),
        Aggregation(dynamodb, table),
    )


def created(seq: str | None, size: int = 100, etag: str = "aa") -> dict[str, Any]:
    return ev.s3_record(KEY, size=size, etag=etag, sequencer=seq)


def removed(seq: str | None, name: str = "ObjectRemoved:DeleteMarkerCreated") -> dict[str, Any]:
    return ev.s3_record(KEY, event_name=name, sequencer=seq)


def test_a_delete_delivered_before_its_create_wins(world: World) -> None:
    # Given the delete (later sequencer) arrives before the create
    world.deliver(removed("0055AED6DCD9028F00"))
    # When the older create arrives afterwards
    world.deliver(created("0055AED6DCD90281E5"))
    # Then the key stays deleted and nothing is counted
    assert world.segment() is None
    assert world.buckets() == {}
    assert world.outcomes() == {Outcome.STALE: 1}


def test_a_removal_reads_its_item_and_writes_once(world: World) -> None:
    # Given an indexed key, and every DynamoDB call the store makes from now on
    world.deliver(created("01"))
    calls: list[tuple[str, int]] = []
    world.dynamodb.meta.events.register(
        "after-call.dynamodb",
        lambda model, http_response, **_: calls.append((model.name, http_response.status_code)),
    )
    # When its delete marker's event arrives
    world.deliver(removed("02"))
    # Then ingest read the item once (the generations and the segment) and wrote its
    # tombstone with one conditional put that held: no failed write (a write unit) first
    made = list(calls)
    assert [name for name, _ in made] == ["GetItem", "GetItem", "PutItem"]
    assert all(status == 200 for _, status in made)
    assert world.outcomes() == {Outcome.APPLIED: 1}
    assert world.segment() is None
    # And a create of a new key still writes without reading it first
    calls.clear()
    world.deliver(
        ev.s3_record(
            KEY.replace("3f9a1c2e7b4d5a60", "3f9a1c2e7b4d5a61"), size=5, etag="bb", sequencer="03"
        )
    )
    assert [name for name, _ in calls] == ["GetItem", "PutItem"]


def test_sequencers_compare_after_right_padding() -> None:
    # Given S3's rule: pad the shorter with zeros, then compare as strings
    short, long_ = normalize_sequencer("0A1B"), normalize_sequencer("0A1B01")
    # Then "0A1B" is "0A1B00..." which is earlier than "0A1B01"
    assert short is not None and long_ is not None and short < long_
    assert normalize_sequencer("not-hex") is None
    assert normalize_sequencer(None) is None


def test_an_overwrite_moves_bytes_but_not_the_count(world: World) -> None:
    # Given a segment, then a new upload under the same key with another size
    world.deliver(created("0100", size=100, etag="aa"), created("0200", size=250, etag="bb"))
    # When the first upload's event is redelivered late
    world.deliver(created("0100", size=100, etag="aa"))
    # Then the newest content counts, once
    assert world.segment().size == 250 and world.segment().etag == "bb"
    home = world.buckets()[("cam-001", "video", "20261130T23")]
    assert (home["n3"], home["b3"], home["d3"]) == (1, 250, 600_000)
    assert world.outcomes() == {Outcome.STALE: 1}


def test_a_segment_crossing_midnight_covers_the_next_days_first_quarter(world: World) -> None:
    # When a 10-minute segment starting 23:55 UTC is indexed
    world.deliver(created("01"))
    # Then its figures count at 23:45-24:00 and it is seen running at 00:00 next day
    buckets = world.buckets()
    assert buckets[("cam-001", "video", "20261130T23")]["n3"] == 1
    assert buckets[("cam-001", "video", "20261201T00")] == {"c0": 1}


@pytest.mark.parametrize("exists", [True, False])
def test_without_a_sequencer_s3_decides(world: World, exists: bool) -> None:
    # Given an emulator that omits sequencers, and the object's real state in S3
    if exists:
        world.s3.put_object(Bucket=ev.BUCKET, Key=KEY, Body=b"x" * 42)
    # When a create event without sequencer (and with a wrong size) arrives
    world.deliver(created(None, size=999))
    # Then the read model follows HEAD, not the event
    if exists:
        assert world.segment().size == 42
    else:
        assert world.segment() is None
    assert world.outcomes() == {Outcome.APPLIED: 1}


def test_deleting_the_current_version_reveals_the_older_one(world: World) -> None:
    # Given two versions of a key, both indexed in order
    v1 = world.s3.put_object(Bucket=ev.BUCKET, Key=KEY, Body=b"a" * 10)
    v2 = world.s3.put_object(Bucket=ev.BUCKET, Key=KEY, Body=b"b" * 20)
    world.deliver(
        created("0100", size=10, etag=v1["ETag"].strip('"')),
        created("0200", size=20, etag=v2["ETag"].strip('"')),
    )
    # When the current version is deleted permanently (not a delete marker)
    world.s3.delete_object(Bucket=ev.BUCKET, Key=KEY, VersionId=v2["VersionId"])
    world.deliver(
        ev.s3_record(
            KEY, event_name="ObjectRemoved:Delete", sequencer="0300", version_id=v2["VersionId"]
        )
    )
    # Then the older version is what the read model shows (S3 asked), not "deleted"
    assert world.segment().size == 10
    # And the older create redelivered now is stale
    world.deliver(created("0100", size=10))
    assert world.segment().size == 10


def test_lifecycle_expiration_in_an_unversioned_bucket_removes(world: World) -> None:
    world.deliver(created("01"))
    world.deliver(removed("02", name="LifecycleExpiration:Delete"))
    assert world.segment() is None
    assert all(not any(f.values()) for f in world.buckets().values())


def test_direct_invocations_without_sqs(world: World) -> None:
    # Given the handler is invoked by S3 directly, then by EventBridge directly
    world.service.handle(ev.s3_notification(created("01")), None)
    assert world.segment() is not None
    world.service.handle(
        ev.eventbridge_event(KEY, detail_type="Object Deleted", sequencer="02"), None
    )
    # Then both are applied in sequencer order
    assert world.segment() is None


def test_an_unknown_invocation_is_rejected_with_a_reason(world: World) -> None:
    with pytest.raises(MalformedMessage, match="neither an SQS batch"):
        world.service.handle({"hello": "world"}, None)


def test_a_forbidden_head_fails_the_record_not_the_batch(world: World) -> None:
    # Given S3 answers 403 to HEAD (missing permission: not transient, but not to be lost)
    class Forbidden:
        def head_object(self, **_: Any) -> Any:
            from botocore.exceptions import ClientError

            raise ClientError(
                {
                    "Error": {"Code": "403", "Message": "Forbidden"},
                    "ResponseMetadata": {"HTTPStatusCode": 403},
                },
                "HeadObject",
            )

    world.service.ingestor._objects = ObjectStore(Forbidden(), ev.BUCKET)  # type: ignore[attr-defined]
    other = KEY.replace("3f9a1c2e7b4d5a60", "00000000000000aa")
    records = [created(None), ev.s3_record(other, size=5, sequencer="01")]
    messages = [ev.sqs_record(ev.s3_notification(r)) for r in records]
    # When a batch holds a record that needs HEAD and one that does not
    response = world.service.handle(ev.sqs_event(*messages), None)
    # Then only the first goes back to SQS (and finally to the DLQ); the second is applied
    assert response == {"batchItemFailures": [{"itemIdentifier": messages[0]["messageId"]}]}
    assert world.outcomes() == {Outcome.APPLIED: 1}


def test_event_parsing_decodes_keys_and_reads_deletes_without_size() -> None:
    body = json.dumps(
        ev.s3_notification(
            ev.s3_record("tmp/a b+c%.txt", size=3, sequencer="01"),
            ev.s3_record(KEY, event_name="ObjectRemoved:DeleteMarkerCreated", sequencer="02"),
            ev.s3_record(KEY, event_name="ObjectTagging:Put", sequencer="03"),
        )
    )
    first, second = events_from_body(body)
    assert first.key == "tmp/a b+c%.txt" and first.size == 3
    assert second.action is Action.REMOVED and second.size is None and second.etag is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("[]", "neither an S3 event notification"),
        ('{"Records": [{"eventSource": "aws:s3"}]}', "S3 event field"),
        ("", "not JSON"),
    ],
)
def test_malformed_bodies_name_what_is_wrong(body: str, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        events_from_body(body)


def test_an_emulators_notification_without_sequencer_or_identity_is_applied(world: World) -> None:
    # Given moto's own S3 -> SQS notification (no sequencer, no userIdentity, no ownerIdentity)
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName="notifications")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]
    world.s3.put_bucket_notification_configuration(
        Bucket=ev.BUCKET,
        NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn["QueueArn"], "Events": ["s3:ObjectCreated:*"]}]
        },
    )
    world.s3.put_object(Bucket=ev.BUCKET, Key=KEY, Body=b"12345")
    bodies = [
        m["Body"] for m in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    ]
    # When the messages are ingested as they come
    world.service.handle(ev.sqs_event(*(ev.sqs_record(b) for b in bodies)), None)
    # Then S3 (HEAD) decided, and the test event was acknowledged
    assert world.segment().size == 5
    assert world.outcomes() == {Outcome.APPLIED: 1}
