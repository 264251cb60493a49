"""docs/read-model.md request bounds, counted at the botocore level on DynamoDB Local:
a month calendar ≤ 2 requests and a day's ranges ≤ 2, with 10 or 50,000 segments."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from moto import mock_aws

from tests.support.api_world import ApiWorld, make_world
from tests.support.reference_projection import project
from video_index.core.keys import SegmentKey
from video_index.core.table_schema import create_tables
from video_index.local.dynamodb_local import DynamoDBLocal

_ser = TypeSerializer().serialize
DEVICE = "cam-001"
NOW = datetime(2026, 12, 15, tzinfo=UTC)


def month_of_segments(count: int) -> list[SegmentKey]:
    """``count`` 10 s video segments spread over November 2026: one block a day
    from 08:00 UTC, with a 20 ms gap between segments (one range a day)."""
    per_day = -(-count // 30)
    segments: list[SegmentKey] = []
    for day in range(30):
        for i in range(min(per_day, count - len(segments))):
            start = datetime(2026, 11, day + 1, 8, tzinfo=UTC).timestamp() * 1000 + i * 10_020
            segments.append(
                SegmentKey(
                    kind="video",
                    device=DEVICE,
                    start=datetime.fromtimestamp(start / 1000, tz=UTC),
                    duration_ms=10_000,
                    id=f"{len(segments):016x}",
                    ext="mp4",
                )
            )
    return segments


def load(dynamodb: Any, table: str, segments: list[SegmentKey]) -> None:
    """Write the read model of ``segments`` directly (as ingest would leave it)."""
    model = project([{"Key": s.key, "Size": 2_500_000, "ETag": '"e"'} for s in segments])
    items: list[dict[str, Any]] = [{"pk": "g1#devices", "sk": DEVICE}]
    for seg in model.segments.values():
        items.append(
            {
                "pk": f"g1#seg#{seg.device}#{seg.kind}",
                "sk": seg.filename,
                "present": True,
                "size": seg.size,
                "etag": seg.etag,
                "seq": "0" * 32,
                "ver": 1,
                "start": seg.start,
                "end": seg.end,
                "id": seg.id,
                "observed": False,
            }
        )
    for (device, kind, hour), figures in model.buckets.items():
        items.append({"pk": f"g1#bkt#{device}", "sk": f"{kind}#{hour}", **figures})
    for i in range(0, len(items), 25):
        requests = [
            {"PutRequest": {"Item": {k: _ser(v) for k, v in item.items()}}}
            for item in items[i : i + 25]
        ]
        while requests:
            response = dynamodb.batch_write_item(RequestItems={table: requests})
            requests = response.get("UnprocessedItems", {}).get(table, [])


class RequestCounter:
    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def reset(self) -> None:
        self.calls.clear()

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@pytest.fixture(scope="module", params=[10, 50_000], ids=lambda n: f"{n}-segments")
def loaded(
    request: pytest.FixtureRequest, dynamodb_local: DynamoDBLocal
) -> Iterator[tuple[ApiWorld, RequestCounter]]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", endpoint_url=dynamodb_local.endpoint)
        table = f"bounds-{request.param}"
        create_tables(dynamodb, table)
        load(dynamodb, table, month_of_segments(request.param))
        counter = RequestCounter(dynamodb)
        world = make_world(dynamodb, table, now=NOW)
        world.get(f"/devices/{DEVICE}")  # warms the cached generation
        yield world, counter


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Kathmandu"])
def test_a_month_calendar_takes_at_most_two_requests(
    loaded: tuple[ApiWorld, RequestCounter], tz: str
) -> None:
    world, counter = loaded
    counter.reset()
    status, body, _ = world.get(f"/devices/{DEVICE}/calendar", f"month=2026-11&tz={tz}")
    assert status == 200 and sum(d["segments"] for d in body["days"]) > 0
    assert counter.total <= 2, counter.calls


def test_a_days_ranges_take_at_most_two_requests(loaded: tuple[ApiWorld, RequestCounter]) -> None:
    world, counter = loaded
    counter.reset()
    status, body, _ = world.get(
        f"/devices/{DEVICE}/ranges", "from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"
    )
    assert status == 200 and len(body["ranges"]) == 1
    assert counter.total <= 2, counter.calls


def test_device_totals_take_one_request_plus_first_and_last(
    loaded: tuple[ApiWorld, RequestCounter],
) -> None:
    world, counter = loaded
    counter.reset()
    status, body, _ = world.get(f"/devices/{DEVICE}")
    assert status == 200 and body["kinds"]["video"]["segments"] > 0
    assert counter.calls["Query"] <= 3, counter.calls
