"""The cost benchmark's counts (bench/cost.py) against counts made another way.

* **Requests**: every HTTP request botocore sends is counted on the wire by a
  ``before-send`` handler this test adds to botocore's built-in handlers (so every client
  any session makes carries it, as moto's own stubber does), its operation read from the
  request itself (the JSON protocols' ``X-Amz-Target``; S3's method, path and query), its
  component from the User-Agent the bench's counted clients carry. The bench counts with
  ``before-call`` hooks of its own; the two must agree exactly.
* **S3 → SQS messages**: S3 sends one per object created and one per delete marker: the
  camera's PUTs and the keys in the retention job's ``DeleteObjects`` bodies, read on the
  wire.
* **Lambda invocations** of ingest: one ``DeleteMessageBatch`` each (no record failed).
* **Capacity units**: the meter's units for items of chosen sizes against AWS's
  documented rule (worked out here), and moto's ``ConsumedCapacity`` against the same
  rule: where moto is right, and where it is not (why the bench does not use it).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore import handlers
from moto import mock_aws

from bench.capacity import CapacityMeter
from bench.cost_meter import USER_AGENT_MARK
from bench.cost_pipeline import run_sample
from bench.cost_world import Camera, Sample

_TARGET = re.compile(r"^(DynamoDB_20120810|DynamoDBStreams_20120810|AmazonSQS)\.(\w+)$")
_SERVICES = {
    "DynamoDB_20120810": "dynamodb",
    "DynamoDBStreams_20120810": "dynamodbstreams",
    "AmazonSQS": "sqs",
}


def _s3_operation(method: str, url: str) -> str:
    """S3's operation from the HTTP request (virtual-hosted: the key is the path)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    has_key = parts.path not in ("", "/")
    if method == "POST" and "delete" in query:
        return "DeleteObjects"
    if method == "GET" and not has_key:
        return "ListObjectVersions" if "versions" in query else "ListObjectsV2"
    return {"GET": "GetObject", "HEAD": "HeadObject", "PUT": "PutObject", "DELETE": "DeleteObject"}[
        method
    ]


class WireCount:
    """Requests on the wire by (component, service, operation), and what they carried."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, str, str]] = Counter()
        self.deleted_keys: Counter[str] = Counter()

    def __call__(self, request: Any, **_: Any) -> None:
        agent = str(request.headers.get("User-Agent", ""))
        if USER_AGENT_MARK not in agent:
            return  # the bench's own set-up and checks
        component = agent.split(USER_AGENT_MARK, 1)[1].split()[0]
        target = request.headers.get("X-Amz-Target")
        if target:
            found = _TARGET.match(target.decode() if isinstance(target, bytes) else target)
            assert found, target
            service, operation = _SERVICES[found.group(1)], found.group(2)
        else:
            service, operation = "s3", _s3_operation(request.method, request.url)
            if operation == "DeleteObjects":
                self.deleted_keys[component] += str(request.body).count("<Key>")
        self.requests[(component, service, operation)] += 1


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> WireCount:
    count = WireCount()
    monkeypatch.setattr(
        handlers, "BUILTIN_HANDLERS", [*handlers.BUILTIN_HANDLERS, ("before-send", count)]
    )
    return count


def test_the_benchs_request_counts_equal_the_requests_on_the_wire(wire: WireCount) -> None:
    # Given a small sample: two 60 s cameras for three minutes, through the whole pipeline
    run = run_sample(Sample(Camera("t", 60), cameras=2, minutes=3), window_s=60, batch_size=1000)
    # Then every request the bench counted was sent, and nothing else the components sent
    assert dict(run.ledger.requests) == dict(wire.requests)
    # And the camera's PUTs, ingest's and the consumer's calls are all there
    assert wire.requests[("camera", "s3", "PutObject")] == run.uploads == 6
    assert wire.requests[("ingest", "dynamodb", "PutItem")] > 0
    assert wire.requests[("aggregation", "dynamodbstreams", "GetRecords")] > 0
    # And S3 sent one message per object created and one per key the retention job deleted
    assert run.ledger.messages == {
        "ObjectCreated:Put": wire.requests[("camera", "s3", "PutObject")],
        "ObjectRemoved:DeleteMarkerCreated": wire.deleted_keys["retention"],
    }
    # And ingest ran once per batch it acknowledged
    assert (
        run.ledger.invocations["ingest"].count
        == wire.requests[("ingest", "sqs", "DeleteMessageBatch")]
    )


# -- capacity units: the rule, the meter, moto -------------------------------------------------

#: "One write request unit represents one write for an item up to 1 KB in size ... Item
#: sizes for writes are rounded up to the next 1 KB multiple"; "One read request unit
#: represents one strongly consistent read request, or two eventually consistent read
#: requests, for an item up to 4 KB in size" (DynamoDB Developer Guide, Read/write
#: capacity mode). Item size: attribute names plus values (UTF-8 bytes for strings).
#: (payload bytes of attribute ``v``, WCU to write it, RCU to read it strongly,
#: eventually) -- names "pk", "sk", "v" and values "a", "b": 7 bytes besides the payload.
RULE = [
    (100, 1, 1.0, 0.5),
    (1017, 1, 1.0, 0.5),  # 1,024 bytes: one unit
    (1018, 2, 1.0, 0.5),  # 1,025 bytes: two
    (3000, 3, 1.0, 0.5),
    (5000, 5, 2.0, 1.0),
]


@pytest.mark.parametrize(("payload", "wcu", "strong", "eventual"), RULE)
def test_the_meter_prices_by_the_documented_rule_and_moto_does_not_always(
    payload: int, wcu: int, strong: float, eventual: float
) -> None:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        meter = CapacityMeter().attach(client)
        key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
        # When an item of this size is written, then read strongly and eventually
        put = client.put_item(
            TableName="t", Item={**key, "v": {"S": "x" * payload}}, ReturnConsumedCapacity="TOTAL"
        )
        strong_read = client.get_item(
            TableName="t", Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL"
        )
        eventual_read = client.get_item(TableName="t", Key=key, ReturnConsumedCapacity="TOTAL")
    figures = meter.totals().by_operation
    # Then the meter's units are the rule's
    assert figures["PutItem"].write_units == wcu
    assert figures["GetItem"].read_units == strong + eventual
    # And moto's own figure agrees with the rule only for a write of up to 1 KB and an
    # eventually consistent read: it reports 1.0 per write and 0.5 per read, whatever the
    # size or consistency (so the bench prices by the rule, not by moto)
    moto = [r["ConsumedCapacity"]["CapacityUnits"] for r in (put, strong_read, eventual_read)]
    assert moto == [1.0, 0.5, 0.5]
    assert (moto[0] == wcu) == (payload + 7 <= 1024)
    assert (moto[1] == strong) is False
