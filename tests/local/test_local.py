"""``video-index local`` and ``video-index status``, end to end, plus the pieces in-process.

The end-to-end tests run ``python -m video_index.cli local`` as a subprocess (moto
server with the tables, workers, API) and talk to it only through its ready file: S3 with
boto3, the API with urllib, ``video-index status`` as another subprocess.

The running stack is the session fixture ``local_stack`` (``tests/local/conftest.py``);
its helpers are in ``tests/support/local_stack.py``.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.support.local_stack import (
    CLI,
    EVENT_TIMEOUT,
    EVENTS,
    READY_KEYS,
    ROOT,
    STOP_TIMEOUT,
    RunningStack,
    accepts,
    assert_nothing_left,
    child_env,
    iso,
    listed,
    poll,
    put_segments,
    queue_depth,
    start_local,
    stop,
)
from worlds.media import clip

# --- end to end ----------------------------------------------------------------------------


def test_ready_file_lists_endpoints_names_and_credentials(local_stack: RunningStack) -> None:
    ready = local_stack.ready
    assert ready.keys() >= READY_KEYS
    assert ready["bucket"] == "video-index-local"
    assert ready["table"] == "video-index-read-model"
    assert ready["annotations_table"] == "video-index-annotations"
    assert ready["queue_url"].endswith("/video-index-notifications")
    assert ready["dlq_url"].endswith("/video-index-dlq")
    for name in ("s3", "sqs", "dynamodb", "api"):
        assert ready[name].startswith("http://127.0.0.1:")
    status, document = local_stack.get("/openapi.json")
    assert status == 200 and "/devices/{device}" in document["paths"]
    # The queue is configured like the CDK stack's, with the visibility timeout asked for.
    attributes = local_stack.client("sqs").get_queue_attributes(
        QueueUrl=ready["queue_url"], AttributeNames=["All"]
    )["Attributes"]
    assert attributes["VisibilityTimeout"] == "2"
    assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == 5
    # The moto server holds the tables under the fixed key of the ready file.
    tables = local_stack.client("dynamodb").list_tables()["TableNames"]
    assert {ready["table"], ready["annotations_table"]} <= set(tables)


def test_uploads_and_deletes_reach_the_api(local_stack: RunningStack) -> None:
    device = "cam-001"
    now = datetime.now(UTC).replace(microsecond=0)
    # Older than the fresh window (the read model answers) and recent (merged with S3).
    old_first = (now - timedelta(days=2)).replace(minute=10, second=0)
    new_first = now - timedelta(minutes=2)
    old_keys = put_segments(local_stack, device, old_first, 3)
    new_keys = put_segments(local_stack, device, new_first, 3)
    old_window = (old_first - timedelta(minutes=5), old_first + timedelta(minutes=5))
    new_window = (new_first - timedelta(minutes=5), now + timedelta(minutes=1))

    poll(
        lambda: listed(local_stack, device, *old_window),
        lambda keys: keys == set(old_keys),
        "old segments listed",
        EVENT_TIMEOUT,
    )
    poll(
        lambda: listed(local_stack, device, *new_window),
        lambda keys: keys == set(new_keys),
        "recent segments listed",
        EVENT_TIMEOUT,
    )
    # Totals come from the read model only: all six arrived through events.
    _, totals = poll(
        lambda: local_stack.get(f"/devices/{device}"),
        lambda answer: answer[1].get("kinds", {}).get("video", {}).get("segments") == 6,
        "device totals",
        EVENT_TIMEOUT,
    )
    assert totals["kinds"]["video"]["first_start"] == iso(old_first)
    assert totals["kinds"]["video"]["duration_ms"] == 60_000

    status, calendar = local_stack.get(
        f"/devices/{device}/calendar", month=f"{old_first:%Y-%m}", tz="UTC"
    )
    assert status == 200, calendar
    day = next(d for d in calendar["days"] if d["date"] == f"{old_first:%Y-%m-%d}")
    assert day["has_video"] is True and day["segments"] == 3 and day["video_ms"] == 30_000

    status, ranges = local_stack.get(
        f"/devices/{device}/ranges", **{"from": iso(old_window[0]), "to": iso(old_window[1])}
    )
    assert status == 200, ranges
    assert ranges["ranges"] == [
        {"start": iso(old_first), "end": iso(old_first + timedelta(seconds=30))}
    ]

    status, error = local_stack.get(f"/devices/{device}/segments", **{"from": "yesterday"})
    assert status == 400 and error["error"]["parameter"], error

    bucket = local_stack.ready["bucket"]
    s3 = local_stack.client("s3")
    s3.delete_object(Bucket=bucket, Key=old_keys[1])
    s3.delete_object(Bucket=bucket, Key=new_keys[0])
    poll(
        lambda: listed(local_stack, device, *old_window),
        lambda keys: keys == {old_keys[0], old_keys[2]},
        "old segment gone",
        EVENT_TIMEOUT,
    )
    poll(
        lambda: listed(local_stack, device, *new_window),
        lambda keys: keys == {new_keys[1], new_keys[2]},
        "recent segment gone",
        EVENT_TIMEOUT,
    )
    poll(
        lambda: local_stack.get(f"/devices/{device}")[1]["kinds"]["video"]["segments"],
        lambda segments: segments == 4,
        "device totals after deletes",
        EVENT_TIMEOUT,
    )


def _status(stack: RunningStack) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "status", "--ready-file", str(stack.ready_file), "--json"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _aggregated(stack: RunningStack) -> dict[str, int]:
    """The consumer's control item (``control``/``aggregate``), as numbers; {} before any."""
    item = (
        stack.client("dynamodb")
        .get_item(
            TableName=stack.ready["table"],
            Key={"pk": {"S": "control"}, "sk": {"S": "aggregate"}},
            ConsistentRead=True,
        )
        .get("Item", {})
    )
    return {name: int(value["N"]) for name, value in item.items() if "N" in value}


def test_status_shows_when_the_aggregation_last_applied_a_batch_and_its_lag(
    local_stack: RunningStack,
) -> None:
    # Given a segment uploaded now, aggregated (its device's totals count it), and the
    # consumer's control item then
    uploaded_ms = int(time.time() * 1000)
    put_segments(local_stack, "cam-lag", datetime(2026, 1, 5, 7, 0, tzinfo=UTC), 1)
    poll(
        lambda: local_stack.get("/devices/cam-lag"),
        lambda answer: answer[1].get("kinds", {}).get("video", {}).get("segments") == 1,
        "the upload aggregated",
        EVENT_TIMEOUT,
    )
    control = _aggregated(local_stack)
    assert control["t"] >= uploaded_ms and control["lag_ms"] == control["t"] - control["a"]
    # When the status is asked for, as JSON and as a table
    status = json.loads(_status(local_stack).stdout)["aggregation"]
    table = subprocess.run(
        [*CLI, "status", "--ready-file", str(local_stack.ready_file)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    # Then it shows when a batch was applied and that batch's lag, from the control item
    applied = datetime.fromisoformat(status["applied_at"])
    assert round(applied.timestamp() * 1000) >= control["t"]
    assert status["lag_seconds"] >= 0 and status["applied_ago_seconds"] >= 0
    assert datetime.fromisoformat(status["newest_change_at"]) <= applied
    assert "aggregation" in table and "last batch applied" in table and "lag" in table


def test_poison_message_ends_in_the_dlq_and_status_alerts(local_stack: RunningStack) -> None:
    # What reconcile leaves in the control item (docs/operations.md), for status to show.
    summary = {"run_id": "run-1", "source": "list", "entries_added": 2, "entries_removed": 0}
    local_stack.client("dynamodb").put_item(
        TableName=local_stack.ready["table"],
        Item={
            "pk": {"S": "control"},
            "sk": {"S": "reconcile"},
            "run_id": {"S": "run-1"},
            "source": {"S": "list"},
            "entries_added": {"N": "2"},
            "entries_removed": {"N": "0"},
        },
    )
    local_stack.client("sqs").send_message(
        QueueUrl=local_stack.ready["queue_url"], MessageBody="not json"
    )
    poll(
        lambda: queue_depth(local_stack, "dlq_url"),
        lambda depth: depth >= 1,
        "poison message in the DLQ",
        EVENT_TIMEOUT,
    )
    result = _status(local_stack)
    assert result.returncode == 1, result.stdout + result.stderr
    status = json.loads(result.stdout)
    assert status["dlq"]["depth"] >= 1
    assert status["healthy"] is False and status["errors"] == []
    assert status["read_model"]["generation"] == 1
    assert status["read_model"]["building"] is None
    assert status["last_reconcile"] == summary
    assert status["oldest_message_age_seconds"] is None  # moto has no SQS metrics


def test_status_of_a_deployed_stack_uses_flags_and_boto3_configuration(
    local_stack: RunningStack,
) -> None:
    ready = local_stack.ready
    env = {
        **child_env(),
        "AWS_ENDPOINT_URL_SQS": ready["sqs"],
        "AWS_ENDPOINT_URL_DYNAMODB": ready["dynamodb"],
        "AWS_ENDPOINT_URL_CLOUDWATCH": ready["s3"],
        "AWS_ACCESS_KEY_ID": ready["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": ready["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": ready["region"],
    }
    flags = ["--queue-url", ready["queue_url"], "--dlq-url", ready["dlq_url"]]
    result = subprocess.run(
        [*CLI, "status", *flags, "--table", ready["table"], "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    status = json.loads(result.stdout)
    assert status["errors"] == [], status
    assert result.returncode == (0 if status["dlq"]["depth"] == 0 else 1)
    assert status["queue"]["url"] == ready["queue_url"]
    assert status["read_model"]["generation"] == 1

    missing = subprocess.run(
        [*CLI, "status", *flags],
        cwd=ROOT,
        env={k: v for k, v in env.items() if k != "VIDEO_INDEX_TABLE"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "--table" in missing.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_everything(tmp_path: Path, sig: signal.Signals) -> None:
    stack = start_local(tmp_path)
    # The tables are on the stack's own moto server: no engine of its own to leave behind.
    assert stack.ready["dynamodb_engine"] == "moto"
    assert stack.ready["dynamodb"] == stack.ready["s3"]
    began = time.monotonic()
    stack.process.send_signal(sig)
    try:
        returncode = stack.process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        raise AssertionError(f"still running {STOP_TIMEOUT:.0f} s after {sig.name}") from None
    assert returncode == 0, stack.output()
    assert time.monotonic() - began < STOP_TIMEOUT
    assert_nothing_left(stack)
    assert "stopped" in stack.output()


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://127.0.0.1:8000", "http://:8000"])
def test_a_malformed_dynamodb_endpoint_is_refused(tmp_path: Path, url: str) -> None:
    # Given a --dynamodb-endpoint that is not an http(s) URL with a host
    # When the stack is started with it
    result = subprocess.run(
        [*CLI, "local", "--ready-file", str(tmp_path / "r"), "--dynamodb-endpoint", url],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Then it is a usage error naming the option, and nothing started
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--dynamodb-endpoint" in result.stderr and url in result.stderr
    assert not (tmp_path / "r").exists()


def test_an_unreachable_dynamodb_endpoint_fails_the_start(tmp_path: Path) -> None:
    # Given an endpoint nothing listens on
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # When the stack is started with it
    result = subprocess.run(
        [*CLI, "local", "--ready-file", str(tmp_path / "r"), "--dynamodb-endpoint", url],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Then the start fails saying which endpoint, and no ready file is left
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the local stack failed" in result.stdout and url in " ".join(result.stdout.split())
    assert not (tmp_path / "r").exists()


def test_tables_go_to_the_dynamodb_endpoint_given(tmp_path: Path) -> None:
    from video_index.local.moto_process import MotoProcess

    # Given a DynamoDB-compatible endpoint the user runs (here: moto's server, elsewhere)
    with MotoProcess() as engine:
        # When the stack is started on it
        stack = start_local(tmp_path, "--dynamodb-endpoint", engine.endpoint)
        try:
            # Then the ready file names it, the tables are there, and an upload reaches the
            # API through it (ingest writes there, the aggregation reads its stream)
            assert stack.ready["dynamodb"] == engine.endpoint
            assert stack.ready["dynamodb_engine"] == "endpoint"
            tables = stack.client("dynamodb").list_tables()["TableNames"]
            assert {stack.ready["table"], stack.ready["annotations_table"]} <= set(tables)
            first = datetime(2026, 3, 2, 8, tzinfo=UTC)
            keys = put_segments(stack, "cam-endpoint", first, 3)
            poll(
                lambda: listed(stack, "cam-endpoint", first, first + timedelta(minutes=1)),
                lambda found: found == set(keys),
                "the segments listed",
                EVENT_TIMEOUT,
            )
        finally:
            stop(stack.process)
        # And the stack leaves the endpoint it did not start running
        assert accepts(engine.endpoint)
        assert_nothing_left(stack, started_elsewhere=("dynamodb",))


# --- the pieces, in-process --------------------------------------------------------------


def test_worker_redelivers_failures_and_sqs_dead_letters_them() -> None:
    """Lambda's semantics over moto: one batch, failures stay, redrive after maxReceiveCount."""
    from video_index.local.aws import client, isolated_session
    from video_index.local.stack import MotoServer
    from video_index.local.worker import SqsEventSourceWorker

    moto = MotoServer().start()
    try:
        sqs = client(isolated_session(), "sqs", moto.endpoint)
        dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        queue = sqs.create_queue(
            QueueName="queue",
            Attributes={
                "VisibilityTimeout": "1",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3}),
            },
        )["QueueUrl"]
        for body in ("ok-1", "fail", "ok-2"):
            sqs.send_message(
                QueueUrl=queue,
                MessageBody=body,
                MessageAttributes={"origin": {"DataType": "String", "StringValue": "test"}},
            )
        events: list[dict[str, Any]] = []

        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            assert context.get_remaining_time_in_millis() > 0
            events.append(event)
            return {
                "batchItemFailures": [
                    {"itemIdentifier": r["messageId"]}
                    for r in event["Records"]
                    if r["body"] == "fail"
                ]
            }

        worker = SqsEventSourceWorker(
            sqs, queue, handler, region="us-east-1", visibility_timeout_seconds=1
        )
        worker.start()
        try:
            dead = poll(
                lambda: sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=1).get("Messages", []),
                bool,
                "failing message in the DLQ",
                20.0,
            )
        finally:
            worker.stop()
        assert [m["Body"] for m in dead] == ["fail"]
        # The batching window gathered all three into the first invocation.
        assert sorted(r["body"] for r in events[0]["Records"]) == ["fail", "ok-1", "ok-2"]
        bodies = [r["body"] for e in events for r in e["Records"]]
        assert bodies.count("ok-1") == bodies.count("ok-2") == 1  # deleted after success
        counts = [
            r["attributes"]["ApproximateReceiveCount"]
            for e in events
            for r in e["Records"]
            if r["body"] == "fail"
        ]
        # Delivered again after each failure, then SQS moved it instead of a 4th delivery.
        # (With a 1 s visibility timeout a busy machine can let a received copy expire
        # before its batch is handed over, so a middle delivery may be skipped.)
        assert counts[0] == "1" and counts[-1] == "3" and len(counts) >= 2
        assert counts == sorted(set(counts), key=int)
        assert (
            sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"][
                "ApproximateNumberOfMessages"
            ]
            == "0"
        )
        # Each record has the shape Lambda gives it.
        record = events[0]["Records"][0]
        expected = json.loads((EVENTS / "sqs_record.json").read_text())
        assert set(expected) <= set(record)
        assert set(expected["attributes"]) <= set(record["attributes"])
        assert record["eventSource"] == "aws:sqs"
        assert record["eventSourceARN"].endswith(":queue")
        assert record["messageAttributes"]["origin"] == {
            "stringValue": "test",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "String",
        }
        assert worker.stats.failed_invocations == 0
    finally:
        moto.stop()
    assert not accepts(moto.endpoint)


def test_http_requests_become_api_gateway_v2_events() -> None:
    from video_index.local.http_api import build_event, response_parts

    event = build_event(
        method="GET",
        target="/devices/cam-001/segments?kind=video&kind=sensor&from=2026-11-30T12%3A00%3A00%2B01%3A00&x=",
        headers=[
            ("Host", "127.0.0.1:8080"),
            ("User-Agent", "test"),
            ("X-Multi", "1"),
            ("X-Multi", "2"),
            ("Cookie", "a=1; b=2"),
        ],
        body=b"",
        source_ip="127.0.0.1",
        now=1796041800.0,
    )
    sample = json.loads((EVENTS / "apigw_http_v2.json").read_text())
    assert set(sample) - {"cookies"} <= set(event)
    assert set(sample["requestContext"]) - {"authorizer"} <= set(event["requestContext"])
    assert (
        event["rawPath"] == event["requestContext"]["http"]["path"] == "/devices/cam-001/segments"
    )
    assert event["rawQueryString"].startswith("kind=video&kind=sensor&from=2026-11-30T12%3A00")
    assert event["queryStringParameters"] == {
        "kind": "video,sensor",
        "from": "2026-11-30T12:00:00+01:00",
        "x": "",
    }
    assert event["headers"]["x-multi"] == "1,2"
    assert event["headers"]["user-agent"] == "test"
    assert "cookie" not in event["headers"] and event["cookies"] == ["a=1", "b=2"]
    assert event["requestContext"]["timeEpoch"] == 1796041800000
    assert event["requestContext"]["time"] == "30/Nov/2026:12:30:00 +0000"
    assert "body" not in event and event["isBase64Encoded"] is False
    # And the server stands in for an authorizer: the caller is "local" unless X-User says
    assert event["requestContext"]["authorizer"] == {"lambda": {"principal": "local"}}
    named = build_event(
        method="GET", target="/", headers=[("X-User", "alice")], body=b"", source_ip="127.0.0.1"
    )
    assert named["requestContext"]["authorizer"] == {"lambda": {"principal": "alice"}}
    # And X-Roles / X-Devices narrow the stand-in's caller (docs/access.md)
    scoped = build_event(
        method="GET",
        target="/",
        headers=[("X-User", "vic"), ("X-Roles", "viewer"), ("X-Devices", "cam-1, site:north")],
        body=b"",
        source_ip="127.0.0.1",
    )
    assert scoped["requestContext"]["authorizer"] == {
        "lambda": {"principal": "vic", "roles": ["viewer"], "devices": ["cam-1", "site:north"]}
    }

    binary = build_event(
        method="PUT", target="/x", headers=[], body=b"\xff\x00", source_ip="127.0.0.1"
    )
    assert binary["isBase64Encoded"] is True and binary["body"] == "/wA="
    assert "queryStringParameters" not in binary

    status, headers, body = response_parts(
        {
            "statusCode": 201,
            "headers": {"Content-Type": "text/plain"},
            "multiValueHeaders": {"X-Twice": ["1", "2"]},
            "cookies": ["c=3"],
            "body": "aGk=",
            "isBase64Encoded": True,
        }
    )
    assert status == 201 and body == b"hi"
    assert ("X-Twice", "1") in headers and ("X-Twice", "2") in headers
    assert ("set-cookie", "c=3") in headers


def test_worker_follows_lambdas_rules_for_batch_responses() -> None:
    """Named failures stay; an unknown id, a non-list or a raised error fails the batch."""
    from video_index.local.worker import SqsEventSourceWorker

    class FakeSqs:
        def __init__(self) -> None:
            self.deleted: list[str] = []

        def delete_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> Any:
            self.deleted.extend(entry["ReceiptHandle"] for entry in Entries)
            return {"Successful": [{"Id": entry["Id"]} for entry in Entries]}

    messages = [
        {"MessageId": f"m{n}", "ReceiptHandle": f"r{n}", "Body": "{}", "MD5OfBody": "x"}
        for n in range(3)
    ]

    def run(response: Any) -> list[str]:
        sqs = FakeSqs()

        def handler(event: dict[str, Any], context: Any) -> Any:
            if isinstance(response, Exception):
                raise response
            return response

        SqsEventSourceWorker(sqs, "url", handler, region="us-east-1")._invoke(messages)
        return sqs.deleted

    assert run(None) == ["r0", "r1", "r2"]
    assert run({}) == ["r0", "r1", "r2"]
    assert run({"batchItemFailures": []}) == ["r0", "r1", "r2"]
    assert run({"batchItemFailures": [{"itemIdentifier": "m1"}]}) == ["r0", "r2"]
    assert run({"batchItemFailures": [{"itemIdentifier": "nope"}]}) == []
    assert run({"batchItemFailures": [{"itemIdentifier": ""}]}) == []
    assert run({"batchItemFailures": "m1"}) == []
    assert run(RuntimeError("boom")) == []


# --- the uploader CLI through the whole local pipeline -----------------------------------


def test_an_upload_through_the_cli_reaches_the_api(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    # Given a (progressive) MP4 a camera recorded two days ago
    segment = tmp_path / "clip.mp4"
    segment.write_bytes(clip("mp4"))
    start = (datetime.now(UTC) - timedelta(days=2)).replace(microsecond=0)
    argv = [
        sys.executable,
        "-m",
        "video_index.cli",
        "upload",
        str(segment),
        "--device",
        "cam-cli",
        "--kind",
        "video",
        "--start",
        start.isoformat(),
        "--duration-ms",
        "10000",
        "--json",
    ]
    # When it is uploaded with the CLI against the local stack, twice (a camera retry)
    first = subprocess.run(argv, env=local_stack.env(), capture_output=True, text=True, timeout=60)
    again = subprocess.run(argv, env=local_stack.env(), capture_output=True, text=True, timeout=60)
    # Then the first uploads, the retry finds the same content, both exit 0
    assert first.returncode == 0, first.stdout + first.stderr
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(first.stdout)[0]["status"] == "uploaded"
    assert json.loads(again.stdout)[0]["status"] == "already-present"
    key = json.loads(first.stdout)[0]["key"]
    # And the API lists it once S3 -> SQS -> ingest has run
    window = {
        "from": (start - timedelta(minutes=1)).isoformat(),
        "to": (start + timedelta(minutes=1)).isoformat(),
    }
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, body = local_stack.get("/devices/cam-cli/segments", **window)
        if status == 200 and [i["key"] for i in body["items"]] == [key]:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the upload never reached the API: {body}")
    # And the device's totals count it once the stream consumer has applied it (totals
    # follow the aggregation lag, docs/read-model.md#aggregation-by-stream)
    kinds: dict[str, Any] = {}
    while time.monotonic() < deadline and "video" not in kinds:
        kinds = local_stack.get("/devices/cam-cli")[1]["kinds"]
        time.sleep(0.2)
    assert kinds["video"]["segments"] == 1, kinds
    # And it was stored fragmented, so it streams as it is
    (item,) = body["items"]
    assert (item["container"], item["playable"]) == ("fmp4", True)


def test_demo_once_prints_calendars_and_exits_0(tmp_path: Path) -> None:
    # Given nothing running: this is what `make demo` runs (with --once for a test)
    result = subprocess.run(
        [sys.executable, "-m", "video_index.cli", "local", "--demo", "--once"],
        env={**child_env(), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    # Then it exits 0 after printing a month calendar per camera, ranges, totals, curl lines
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    for device in ("cam-dock", "cam-entrance", "cam-parking"):
        assert f"{device} — " in out
    assert "Mon" in out and "Sun" in out
    assert "today's continuous video ranges" in out
    assert "totals per device and kind" in out
    assert "curl -s 'http://127.0.0.1:" in out
    # And the viewer's address, at the entrance camera's latest minutes
    assert "/viewer?device=cam-entrance&date=" in out


def test_dynamodb_is_shared_by_every_credential_and_region(local_stack: RunningStack) -> None:
    # Given the stack's DynamoDB endpoint and a program with its own credentials and region
    # (as the AWS CLI of a user would be configured)
    other = boto3.client(
        "dynamodb",
        endpoint_url=local_stack.ready["dynamodb"],
        region_name="eu-west-1",
        aws_access_key_id="someoneelse",
        aws_secret_access_key="whatever",
        config=Config(proxies={}),
    )
    # When it lists the tables
    tables = other.list_tables()["TableNames"]
    # Then it sees the stack's tables, not an empty database of its own
    assert {local_stack.ready["table"], local_stack.ready["annotations_table"]} <= set(tables)
