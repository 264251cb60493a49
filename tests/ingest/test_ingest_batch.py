"""Ingest of whole batches: bad input never fails its neighbours, nothing is lost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from tests.support.tables import TableFactory
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import parse_key
from video_index.ingest.batches import DeadLetterParking, IngestService
from video_index.ingest.ingestor import Ingestor, Outcome
from worlds import events as ev
from worlds.read_model_view import view

BUCKET = ev.BUCKET


def video_key(
    device: str = "cam-001", second: int = 0, segment_id: str = "3f9a1c2e7b4d5a60"
) -> str:
    return f"v1/video/{device}/2026/11/30/12/20261130T1200{second:02d}.000Z_10000_{segment_id}.mp4"


class FailWritesFor:
    """Throttles every write that touches one key's segment item: a transient failure
    that must stay confined to that record."""

    def __init__(self, client: Any, filename: str) -> None:
        self._client = client
        self._filename = filename

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _throttle_if_mine(self, payload: Any, operation: str) -> None:
        from botocore.exceptions import ClientError

        if self._filename in json.dumps(payload, default=str):
            raise ClientError(
                {
                    "Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"},
                    "ResponseMetadata": {"HTTPStatusCode": 400},
                },
                operation,
            )

    def put_item(self, **kwargs: Any) -> Any:
        self._throttle_if_mine(kwargs, "PutItem")
        return self._client.put_item(**kwargs)

    def transact_write_items(self, **kwargs: Any) -> Any:
        self._throttle_if_mine(kwargs, "TransactWriteItems")
        return self._client.transact_write_items(**kwargs)


@dataclass
class Pipeline:
    service: IngestService
    dynamodb: Any
    table: str
    sqs: Any
    dlq_url: str


@pytest.fixture
def pipeline(aws: None, new_table: TableFactory) -> Pipeline:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    sqs = boto3.client("sqs")
    dlq_url = sqs.create_queue(QueueName="video-index-dlq")["QueueUrl"]
    dynamodb, table = new_table()
    throttled = FailWritesFor(dynamodb, parse_key(video_key(second=50)).filename)
    service = IngestService(
        Ingestor(ReadModelStore(throttled, table, tombstone_days=35), ObjectStore(s3, BUCKET)),
        DeadLetterParking(sqs, dlq_url),
    )
    return Pipeline(service, dynamodb, table, sqs, dlq_url)


def test_a_mixed_batch_reports_only_the_transient_failure(pipeline: Pipeline) -> None:
    # Given one SQS batch holding every kind of message the queue can carry
    valid = [video_key(second=s) for s in (0, 10, 20)]
    eventbridge_key = video_key(second=30)
    throttled_key = video_key(second=50)
    messages = {
        "malformed": ev.sqs_record("{this is not json"),
        "foreign": ev.sqs_record(
            ev.s3_notification(ev.s3_record("tmp/camera upload+1.part", size=5, sequencer="0A01"))
        ),
        "invalid": ev.sqs_record(
            ev.s3_notification(
                ev.s3_record("v1/video/Cam 1/2026/11/30/12/x.mp4", size=5, sequencer="0A02")
            )
        ),
        "plus-encoded": ev.sqs_record(
            ev.s3_notification(
                ev.s3_record(
                    "v1/video/cam+1/2026/11/30/12/20261130T120000.000Z_1_ab.mp4",
                    size=5,
                    sequencer="0A03",
                )
            )
        ),
        "test-event": ev.sqs_record(ev.test_event()),
        "eventbridge": ev.sqs_record(
            ev.eventbridge_event(eventbridge_key, size=700, sequencer="0B01")
        ),
        "throttled": ev.sqs_record(
            ev.s3_notification(ev.s3_record(throttled_key, size=900, sequencer="0C01"))
        ),
        **{
            f"valid-{i}": ev.sqs_record(
                ev.s3_notification(ev.s3_record(key, size=1000 + i, sequencer=f"0D0{i}"))
            )
            for i, key in enumerate(valid)
        },
    }

    # When the batch is handled
    response = pipeline.service.handle(ev.sqs_event(*messages.values()), None)

    # Then only the record that hit a transient error is handed back to SQS
    assert response == {
        "batchItemFailures": [{"itemIdentifier": messages["throttled"]["messageId"]}]
    }
    # And every valid record, the EventBridge one included, is in the read model
    segments = view(pipeline.dynamodb, pipeline.table).segments
    expected = [parse_key(key) for key in (*valid, eventbridge_key)]
    assert set(segments) == {(s.device, s.kind, s.filename) for s in expected}
    # And the malformed body is parked in the DLQ with the reason, not dropped
    parked = pipeline.sqs.receive_message(
        QueueUrl=pipeline.dlq_url, MessageAttributeNames=["All"], MaxNumberOfMessages=10
    )["Messages"]
    assert [m["Body"] for m in parked] == ["{this is not json"]
    assert "not JSON" in parked[0]["MessageAttributes"]["reason"]["StringValue"]
    # And each message is accounted for
    assert pipeline.service.ingestor.stats.outcomes == {
        Outcome.APPLIED: 4,
        Outcome.FOREIGN: 1,
        Outcome.INVALID: 2,
        Outcome.MALFORMED: 1,
    }


def test_the_throttled_record_succeeds_when_redelivered(pipeline: Pipeline) -> None:
    # Given a record whose first processing failed transiently, then a healthy store
    key = video_key(second=40)
    message = ev.sqs_record(ev.s3_notification(ev.s3_record(key, size=10, sequencer="0E")))
    # When it is delivered twice (SQS redelivery after a lost response)
    first = pipeline.service.handle(ev.sqs_event(message), None)
    second = pipeline.service.handle(ev.sqs_event(message), None)
    # Then it is applied once and recognized as a duplicate the second time
    assert first == second == {"batchItemFailures": []}
    assert pipeline.service.ingestor.stats.outcomes == {Outcome.DUPLICATE: 1}
    assert len(view(pipeline.dynamodb, pipeline.table).segments) == 1
