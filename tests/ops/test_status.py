"""``video-index status``'s figures of the aggregation (docs/operations.md, "Aggregation"):
read from the consumer's control item, against moto; and the silent cameras and camera
clocks (docs/operations.md#camera-clocks) read from the device items."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from typing import Any

import boto3
import pytest
from rich.console import Console

from video_index.cli.status import _print_status
from video_index.core.table_schema import create_tables
from video_index.ops.status import StatusTarget, collect

TABLE = "status-read-model"
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_tables(client, TABLE)
    return client


def _status(dynamodb: Any) -> dict[str, Any]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="q")["QueueUrl"]
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    target = StatusTarget(
        queue_url=queue,
        dlq_url=dlq,
        table=TABLE,
        sqs=sqs,
        dynamodb=dynamodb,
        cloudwatch=boto3.client("cloudwatch", region_name="us-east-1"),
    )
    return collect(target, now=NOW)


def test_before_any_batch_the_aggregation_is_none_and_healthy(dynamodb: Any) -> None:
    # Given a read model the consumer never wrote to
    # When the status is collected
    status = _status(dynamodb)
    # Then there is no aggregation figure, and that is no problem
    assert status["aggregation"] is None
    assert status["errors"] == [] and status["healthy"] is True


def test_the_last_batch_shows_when_it_was_applied_and_its_lag(dynamodb: Any) -> None:
    # Given the consumer applied a batch 90 s ago whose newest change was 2.5 s older
    applied_ms, newest_ms = NOW_MS - 90_000, NOW_MS - 92_500
    dynamodb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": "control"},
            "sk": {"S": "aggregate"},
            "t": {"N": str(applied_ms)},
            "a": {"N": str(newest_ms)},
            "lag_ms": {"N": str(applied_ms - newest_ms)},
        },
    )
    # When the status is collected
    status = _status(dynamodb)
    # Then it shows when, how long ago, and the lag
    assert status["aggregation"] == {
        "applied_at": "2026-03-01T11:58:30.000+00:00",
        "applied_ago_seconds": 90.0,
        "newest_change_at": "2026-03-01T11:58:27.500+00:00",
        "lag_seconds": 2.5,
    }
    assert status["errors"] == []


def test_silent_cameras_are_listed_but_are_no_problem_of_ingest(dynamodb: Any) -> None:
    # Given two cameras: video last started an hour before NOW, and a minute before NOW
    for device, ago_ms in (("cam-quiet", 3_600_000), ("cam-busy", 60_000)):
        dynamodb.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": "g1#devices"},
                "sk": {"S": device},
                "n:video": {"N": "5"},
                "l:video": {"N": str(NOW_MS - ago_ms)},
            },
        )
    # When the status is collected
    status = _status(dynamodb)
    # Then the quiet one is listed, silent since its last start + 300 s; ingest is healthy
    assert status["silent"] == [
        {"device": "cam-quiet", "silent_since": "2026-03-01T11:05:00.000+00:00"}
    ]
    assert status["healthy"] is True


def test_camera_clocks_ahead_and_the_largest_upload_delays_are_listed(dynamodb: Any) -> None:
    # Given three cameras' clock slots as the consumer keeps them ([slot, least lateness,
    # files] per ten minutes of receipt): one whose files ended 90 s after S3 received them,
    # one whose least lateness is 2 s (a backlog 10 minutes late in another slot), and one
    # 5 s ahead, within the tolerance
    slot = NOW_MS - NOW_MS % 600_000
    for device, slots in (
        ("cam-fast", [slot, -90_000, 60]),
        ("cam-late", [slot - 600_000, 600_000, 60, slot, 2_000, 60]),
        ("cam-near", [slot, -5_000, 60]),
    ):
        dynamodb.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": "g1#devices"},
                "sk": {"S": device},
                "n:video": {"N": "60"},
                "l:video": {"N": str(NOW_MS - 10_000)},
                "k:video": {"L": [{"N": str(value)} for value in slots]},
            },
        )
    # When the status is collected
    status = _status(dynamodb)
    # Then the camera ahead (beyond 10 s) is listed, and the late one's steady 2 s delay
    assert status["clocks"] == {
        "ahead": [{"device": "cam-fast", "ahead_ms": 90_000, "files": 60}],
        "upload_delay": [{"device": "cam-late", "upload_delay_ms": 2_000, "files": 120}],
    }
    assert status["healthy"] is True


def test_the_status_table_names_the_clocks_ahead_and_the_delays() -> None:
    # Given a status with one camera ahead and one late
    status = {
        "queue": {"url": "q", "depth": 0, "visible": 0, "in_flight": 0, "delayed": 0},
        "dlq": {"url": "dlq", "depth": 0, "visible": 0, "in_flight": 0, "delayed": 0},
        "oldest_message_age_seconds": None,
        "read_model": {"generation": 1, "building": None, "rebuild": None},
        "aggregation": None,
        "last_reconcile": None,
        "silent": [],
        "clocks": {
            "ahead": [{"device": "cam-fast", "ahead_ms": 88_000, "files": 60}],
            "upload_delay": [{"device": "cam-late", "upload_delay_ms": 2_000, "files": 120}],
        },
        "problems": [],
        "errors": [],
    }
    # When it is printed
    out = StringIO()
    _print_status(Console(file=out, width=200), status)
    # Then the rows say who runs ahead and by how much, and the delays
    text = out.getvalue()
    assert "clocks ahead" in text and "cam-fast (88.0 s)" in text
    assert "upload delays" in text and "cam-late (2.0 s)" in text
