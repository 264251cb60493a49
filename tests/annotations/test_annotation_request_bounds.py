"""The cost of annotations in DynamoDB requests (docs/annotations.md), counted at the botocore
level on moto over HTTP: the join adds at most one Query per page of segments, a window of
annotations is one Query, a read one Query."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.query.test_api_request_bounds import load
from video_index.annotations.model import Annotation, Target
from video_index.core.keys import SegmentKey
from video_index.core.table_schema import create_tables
from video_index.core.timeunits import DAY_MS, to_epoch_ms
from worlds.api_world import ApiWorld, address, make_world
from worlds.tables import without_stream

DEVICE = "cam-001"
NOW = datetime(2026, 12, 15, tzinfo=UTC)
DAY = "from=2026-11-10T00:00:00Z&to=2026-11-11T00:00:00Z"


class TableCounter:
    """Requests per (operation, table) of one client."""

    def __init__(self, client: Any) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        client.meta.events.register("provide-client-params.dynamodb", self._count)

    def _count(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        tables = (
            [params["TableName"]] if "TableName" in params else list(params.get("RequestItems", ()))
        )
        for table in tables or ["?"]:
            self.calls[(model.name, table)] += 1

    def reset(self) -> None:
        self.calls.clear()

    def on(self, table: str) -> Counter[str]:
        return Counter({op: n for (op, t), n in self.calls.items() if t == table})


def day_of_segments(count: int) -> list[SegmentKey]:
    """``count`` 10 s video segments on 2026-11-10 from 08:00 UTC, 20 ms apart."""
    first = datetime(2026, 11, 10, 8, tzinfo=UTC)
    return [
        SegmentKey(
            kind="video",
            device=DEVICE,
            start=first + timedelta(milliseconds=n * 10_020),
            duration_ms=10_000,
            id=f"{n:016x}",
            ext="mp4",
        )
        for n in range(count)
    ]


def _annotation(aid: str, target: Target, n: int) -> Annotation:
    return Annotation(
        annotation_id=aid,
        device=DEVICE,
        target=target,
        description=f"note {n}",
        status="approved" if n % 2 else "pending",
        tags=("bound",),
        version=1,
        created_at="2026-12-01T00:00:00.000Z",
        created_by="loader",
        updated_at="2026-12-01T00:00:00.000Z",
        updated_by="loader",
    )


@pytest.fixture(scope="module")
def worlds(
    dynamodb_endpoint: str,
) -> Iterator[tuple[ApiWorld, ApiWorld, TableCounter, list[SegmentKey]]]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint)
        create_tables(dynamodb, "bounds-join", "bounds-join-annotations")
        without_stream(dynamodb, "bounds-join")
        day = day_of_segments(250)
        load(dynamodb, "bounds-join", day)
        counter = TableCounter(dynamodb)
        plain = make_world(dynamodb, "bounds-join", now=NOW, aggregate=False)
        joined = make_world(
            dynamodb,
            "bounds-join",
            now=NOW,
            annotations_table="bounds-join-annotations",
            aggregate=False,
        )
        service = joined.services.annotations
        assert service is not None
        # A note on every third segment of the day, ranges over a few of them, and two
        # long ranges running into the day from weeks before
        n = 0
        for segment in day[::3]:
            n += 1
            service.import_one(_annotation(f"s{n:05d}", Target.of_segment(segment), n))
        for segment in day[::25]:
            n += 1
            target = Target.of_range(segment.start_ms, segment.start_ms + 60_000)
            service.import_one(_annotation(f"r{n:05d}", target, n))
        first = to_epoch_ms(datetime(2026, 10, 20, tzinfo=UTC))
        for k in range(2):
            n += 1
            target = Target.of_range(first + k * DAY_MS, first + k * DAY_MS + 31 * DAY_MS)
            service.import_one(_annotation(f"l{n:05d}", target, n))
        plain.get(f"/devices/{DEVICE}")  # warms the cached generation
        joined.get(f"/devices/{DEVICE}")
        yield plain, joined, counter, day


def test_the_join_costs_at_most_one_query_per_page_of_segments(
    worlds: tuple[ApiWorld, ApiWorld, TableCounter, list[SegmentKey]],
) -> None:
    plain, joined, counter, _ = worlds
    cursor: str | None = ""
    pages = 0
    while cursor is not None:
        # Given the same page of 100 segments asked without and with annotations
        query = DAY + "&limit=100&kind=video" + (f"&cursor={cursor}" if cursor else "")
        counter.reset()
        status, without, _ = plain.get(f"/devices/{DEVICE}/segments", query)
        baseline = sum(counter.calls.values())
        counter.reset()
        status, page, _ = joined.get(f"/devices/{DEVICE}/segments", query)
        # Then the answers list the same segments, the joined one with annotations
        assert status == 200
        assert [e["key"] for e in page["items"]] == [e["key"] for e in without["items"]]
        # (cursors are sealed with a fresh nonce each: both lead on, or neither)
        assert (page["next_cursor"] is None) == (without["next_cursor"] is None)
        assert any(e["annotations"] for e in page["items"])
        # And the join added exactly one request: one Query of the annotations table
        assert counter.on("bounds-join-annotations") == Counter({"Query": 1}), counter.calls
        assert sum(counter.calls.values()) == baseline + 1, counter.calls
        cursor = page["next_cursor"]
        pages += 1
    assert pages == 3


def test_every_long_range_reaches_every_segment_of_the_day(
    worlds: tuple[ApiWorld, ApiWorld, TableCounter, list[SegmentKey]],
) -> None:
    _, joined, _, day = worlds
    status, page, _ = joined.get(f"/devices/{DEVICE}/segments", DAY + "&limit=1000&kind=video")
    assert status == 200 and len(page["items"]) == len(day)
    for entry in page["items"]:
        longs = [a for a in entry["annotations"] if a["annotation_id"].startswith("l")]
        assert len(longs) == 2, entry["id"]


def test_a_single_segment_costs_one_more_query(
    worlds: tuple[ApiWorld, ApiWorld, TableCounter, list[SegmentKey]],
) -> None:
    plain, joined, counter, day = worlds
    # (the read-model items were loaded without objects: the HEAD answers 404 then)
    with_object = day[3]
    for world in (plain, joined):
        world.s3.put_object(Bucket="video-index-segments", Key=with_object.key, Body=b"x")
    plain.get(address(with_object))  # the serving generation, read once and cached
    counter.reset()
    assert plain.get(address(with_object))[0] == 200
    # (the segment itself: one GetItem by key, no index Query)
    assert counter.on("bounds-join") == Counter({"GetItem": 1}), counter.calls
    baseline = sum(counter.calls.values())
    joined.get(address(with_object))
    counter.reset()
    status, entry, _ = joined.get(address(with_object))
    assert status == 200 and entry["annotations"]
    assert counter.on("bounds-join-annotations") == Counter({"Query": 1})
    assert sum(counter.calls.values()) == baseline + 1


def test_a_window_of_annotations_is_one_query_and_one_batch_read_per_page(
    worlds: tuple[ApiWorld, ApiWorld, TableCounter, list[SegmentKey]],
) -> None:
    _, joined, counter, _ = worlds
    counter.reset()
    status, page, _ = joined.call("GET", f"/devices/{DEVICE}/annotations", DAY + "&limit=50")
    assert status == 200 and len(page["items"]) == 50 and page["next_cursor"]
    # One Query of the annotations; whether their segments exist: one BatchGetItem
    assert counter.on("bounds-join-annotations") == Counter({"Query": 1}), counter.calls
    assert counter.on("bounds-join") == Counter({"BatchGetItem": 1}), counter.calls
    # And reading one annotation is one Query (plus the batch read for its segment)
    aid = next(a["annotation_id"] for a in page["items"] if a["target"].get("segment"))
    counter.reset()
    assert joined.call("GET", f"/devices/{DEVICE}/annotations/{aid}")[0] == 200
    assert counter.on("bounds-join-annotations") == Counter({"Query": 1})
    assert counter.on("bounds-join") == Counter({"BatchGetItem": 1})
