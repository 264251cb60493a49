"""docs/read-model.md request bounds, counted at the botocore level on moto over HTTP:
a month calendar ≤ 2 requests and a day's ranges ≤ 2, with 10, 10,000 or 50,000 segments; the
ranges of a day when recording never stops ≤ 2 (also when the day reaches now, plus the
arrival history its gap's reason reads); a device's totals 1; a poll of the live playlist
1. The requests of every reason are counted in tests/query/test_gap_reasons.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from moto import mock_aws

from video_index.core.keys import SegmentKey
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from video_index.core.table_schema import create_tables
from worlds import events as ev
from worlds.api_world import ApiWorld, iso, make_world
from worlds.read_model_view import stored
from worlds.reference_projection import project, ranges, with_aggregates
from worlds.tables import without_stream

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
    """Write the read model of ``segments`` directly, as ingest and the stream consumer
    would leave it: segment items, bucket items with their coverage, device items with
    their totals (recounted by the reference). A world on it must not aggregate again."""
    model = with_aggregates(
        project([{"Key": s.key, "Size": 2_500_000, "ETag": '"e"'} for s in segments]),
        DEFAULT_GAP_TOLERANCE_MS,
    )
    items = stored(model)
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


#: 10,000 segments hold more than 2 MB of segment items (three 1 MB query pages): an answer
#: that read them instead of the buckets would break its bound. 50,000 in `make test-deep`.
@pytest.fixture(
    scope="module",
    params=[10, 10_000, pytest.param(50_000, marks=pytest.mark.deep)],
    ids=lambda n: f"{n}-segments",
)
def loaded(
    request: pytest.FixtureRequest, dynamodb_endpoint: str
) -> Iterator[tuple[ApiWorld, RequestCounter]]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint)
        table = f"bounds-{request.param}"
        create_tables(dynamodb, table)
        without_stream(dynamodb, table)
        load(dynamodb, table, month_of_segments(request.param))
        counter = RequestCounter(dynamodb)
        world = make_world(dynamodb, table, now=NOW, aggregate=False)
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


def test_device_totals_take_one_request(loaded: tuple[ApiWorld, RequestCounter]) -> None:
    world, counter = loaded
    counter.reset()
    status, body, _ = world.get(f"/devices/{DEVICE}")
    assert status == 200 and body["kinds"]["video"]["segments"] > 0
    assert counter.total == 1, counter.calls


def test_a_live_poll_takes_one_request(loaded: tuple[ApiWorld, RequestCounter]) -> None:
    # Given a device with 10 or 50,000 files (the generation read once, as a warm function has)
    world, counter = loaded
    counter.reset()
    # When a player polls its live playlist
    status, body, _ = world.get(f"/devices/{DEVICE}/live.m3u8")
    # Then one Query answers it (docs/playback.md, "Live"), and one PutItem indexes its
    # audit record (docs/audit.md: every poll reads footage)
    assert status == 200 and body.count("#EXTINF") == 6
    assert counter.calls == Counter({"Query": 1, "PutItem": 1}), counter.calls


# -- a camera that never stops ----------------------------------------------------------

NONSTOP = "cam-nonstop"
#: Back-to-back 30 s segments from the 10th to the 13th of November, except for one
#: 5-minute outage a day, after which the camera starts again at an odd millisecond.
OUTAGES = [
    datetime(2026, 11, 10, 5, 13, 20, tzinfo=UTC),
    datetime(2026, 11, 11, 9, 41, 10, tzinfo=UTC),
    datetime(2026, 11, 12, 14, 7, 50, tzinfo=UTC),
]
OUTAGE = timedelta(minutes=5, milliseconds=437)
#: The recent-part world's now: in the afternoon of the 11th, after its outage.
AFTERNOON = datetime(2026, 11, 11, 18, 0, 5, tzinfo=UTC)
ELEVENTH = "from=2026-11-11T00:00:00Z&to=2026-11-12T00:00:00Z"


def nonstop_segments() -> list[SegmentKey]:
    segments: list[SegmentKey] = []
    at, end = datetime(2026, 11, 10, tzinfo=UTC), datetime(2026, 11, 13, tzinfo=UTC)
    outages = list(OUTAGES)
    while at < end:
        length = timedelta(seconds=30)
        if outages and at + length > outages[0]:
            length = outages[0] - at  # the last segment before the outage is cut short
        if length:
            segments.append(
                SegmentKey(
                    kind="video",
                    device=NONSTOP,
                    start=at,
                    duration_ms=length // timedelta(milliseconds=1),
                    id=f"{len(segments):016x}",
                    ext="mp4",
                )
            )
        at += length
        if outages and at == outages[0]:
            at = outages.pop(0) + OUTAGE
    return segments


def expected_ranges(segments: list[SegmentKey], start: datetime, end: datetime) -> list[Any]:
    """The reference's whole ranges intersecting ``[start, end)``, as the API shows them."""
    model = project([{"Key": s.key, "Size": 1, "ETag": '"e"'} for s in segments])
    whole = ranges(model, NONSTOP, DEFAULT_GAP_TOLERANCE_MS)
    low, high = start.timestamp() * 1000, end.timestamp() * 1000
    return [
        {"start": iso(_moment(a)), "end": iso(_moment(b))} for a, b in whole if a < high and b > low
    ]


def _moment(epoch_ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=epoch_ms)


@pytest.fixture(scope="module")
def nonstop(
    dynamodb_endpoint: str,
) -> Iterator[tuple[ApiWorld, ApiWorld, RequestCounter, list[SegmentKey]]]:
    """A world long after the recording, and one in its afternoon of the 11th (whose
    recent part comes from segment items and the bucket, which holds the recent objects)."""
    with mock_aws():
        dynamodb = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint)
        table = "bounds-nonstop"
        create_tables(dynamodb, table)
        without_stream(dynamodb, table)
        segments = nonstop_segments()
        load(dynamodb, table, segments)
        counter = RequestCounter(dynamodb)
        later = make_world(dynamodb, table, now=NOW, aggregate=False)
        afternoon = make_world(dynamodb, table, now=AFTERNOON, aggregate=False)
        recent = AFTERNOON - timedelta(hours=2)
        for segment in segments:
            if recent <= segment.start < AFTERNOON:
                afternoon.s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=b"v")
        later.get(f"/devices/{NONSTOP}")  # warms the cached generations
        afternoon.get(f"/devices/{NONSTOP}")
        yield later, afternoon, counter, segments


def test_a_days_ranges_take_at_most_two_requests_when_recording_never_stops(
    nonstop: tuple[ApiWorld, ApiWorld, RequestCounter, list[SegmentKey]],
) -> None:
    # Given a camera recording through the 11th and the days around it
    later, _, counter, segments = nonstop
    counter.reset()
    # When the ranges of the 11th are asked for
    status, body, _ = later.get(f"/devices/{NONSTOP}/ranges", ELEVENTH)
    # Then both come back whole (from the 10th's outage and to the 12th's)
    day = datetime(2026, 11, 11, tzinfo=UTC)
    assert status == 200
    assert body["ranges"] == expected_ranges(segments, day, day + timedelta(days=1))
    assert len(body["ranges"]) == 2
    # And took at most two requests
    assert counter.total <= 2, counter.calls


def test_a_days_ranges_reaching_now_take_at_most_two_requests(
    nonstop: tuple[ApiWorld, ApiWorld, RequestCounter, list[SegmentKey]],
) -> None:
    # Given the same camera, asked in the afternoon of the 11th
    _, afternoon, counter, segments = nonstop
    counter.reset()
    # When the ranges of the 11th are asked for
    status, body, _ = afternoon.get(f"/devices/{NONSTOP}/ranges", ELEVENTH)
    # Then the last range ends with the last segment so far
    day = datetime(2026, 11, 11, tzinfo=UTC)
    so_far = [s for s in segments if s.start < AFTERNOON]
    assert status == 200
    assert body["ranges"] == expected_ranges(so_far, day, day + timedelta(days=1))
    # And took at most two requests for the ranges (the buckets, and the segment items of
    # the recent part), and three for the reason of the outage's gap: the arrival history of
    # each kind (no deletions or holds table in this world, docs/api.md#gaps)
    assert body["gaps"] and counter.total <= 2 + 3, counter.calls


def test_device_totals_of_a_camera_that_never_stops_take_one_request(
    nonstop: tuple[ApiWorld, ApiWorld, RequestCounter, list[SegmentKey]],
) -> None:
    later, _, counter, segments = nonstop
    counter.reset()
    status, body, _ = later.get(f"/devices/{NONSTOP}")
    assert status == 200
    assert body["kinds"] == {
        "video": {
            "segments": len(segments),
            "bytes": 2_500_000 * len(segments),
            "duration_ms": sum(s.duration_ms for s in segments),
            "first_start": iso(segments[0].start),
            "last_start": iso(segments[-1].start),
            "retention_days": 30,
            "silent_since": body["kinds"]["video"]["silent_since"],  # the clock's business
            "clock": None,  # a read model loaded without receipts: nothing to say
        }
    }
    assert counter.total == 1, counter.calls
