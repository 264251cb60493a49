"""Every gap explains itself (docs/api.md#gaps), through the API over moto.

A camera records 2-minute video files all day and a sensor reading every 2 minutes (1,440
objects: the day is built in-process, once); its day holds
one gap of each reason the product can tell — expired (before the retention cutoff, and
across it), deleted (a request's window, not aligned with the files), silent (nothing of
any kind arrived), missing (the sensor kept arriving; once a whole stretch, once a single
file), and a held stretch past retention (missing, not expired). ``archived`` has no source
until storage tiers exist: no gap may say it. The answer is checked against an independent
reading of the same facts written here, second by second, and its DynamoDB requests are
counted with a botocore hook (docs/api.md: at most 7 for a day without overlaps).

And the days a New York clock changes keep their length: the window of the fall-back day
is 25 hours and the spring-forward day's 23, and its ranges and gaps share it exactly.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from moto import mock_aws

from video_index.core.keys import SegmentKey, segment_id
from video_index.core.table_schema import (
    create_tables,
    deletions_table_definition,
    holds_table_definition,
)
from worlds import events as ev
from worlds.api_world import ApiWorld, iso, make_world

DEVICE = "cam-gaps"
DAY = datetime(2026, 11, 20, tzinfo=UTC)
NOW = datetime(2026, 12, 20, 12, tzinfo=UTC)  # video retention 30 days: cutoff Nov 20 12:00
CUTOFF = NOW - timedelta(days=30)
FILE = timedelta(seconds=120)
MINUTE = timedelta(seconds=60)
SILENT_AFTER = timedelta(seconds=300)
RECEIPT = timedelta(seconds=1)  # every file reaches S3 a second after its end


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return DAY + timedelta(hours=hour, minutes=minute, seconds=second)


# The facts of the day, as the camera, the operators and the product's settings made them.
NO_VIDEO = [  # stretches without video files, and why (what the test expects to read)
    (at(2), at(3)),  # before the cutoff: retention removed it
    (at(4), at(4, 30)),  # before the cutoff, but held: should be there
    (at(11, 58), at(12, 3)),  # across the cutoff
    (at(13), at(13, 30)),  # uploaded, then deleted by a request
    (at(15), at(16)),  # the camera was off: no sensor reading either
    (at(18), at(18, 20)),  # the sensor kept arriving: video lost
    (at(20), at(20, 1)),  # one file lost amid steady uploads
]
NO_SENSOR = [(at(15), at(16))]
DELETION_WINDOW = (at(13, 0, 5), at(13, 29, 55))
HOLD = (at(4), at(4, 30))


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def inside(moment: datetime, spans: list[tuple[datetime, datetime]]) -> bool:
    return any(low <= moment < high for low, high in spans)


def files(kind: str, step: timedelta, duration: timedelta, skip: list[Any]) -> list[SegmentKey]:
    out = []
    moment = DAY
    while moment < DAY + timedelta(days=1):
        if not inside(moment, skip):
            ms_ = int(duration / timedelta(milliseconds=1))
            body = f"{kind}{moment}".encode()
            out.append(
                SegmentKey(
                    kind=kind,
                    device=DEVICE,
                    start=moment,
                    duration_ms=ms_,
                    id=segment_id(kind, DEVICE, moment, ms_, body),
                    ext="mp4" if kind == "video" else "json",
                )
            )
        moment += step
    return out


def upload(world: ApiWorld, segments: list[SegmentKey]) -> None:
    """Put each object and deliver its S3 event (received a second after its end), ten
    records a batch as SQS would."""
    records = []
    for segment in segments:
        etag = world.s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=b"x" * 64)["ETag"]
        records.append(
            ev.sqs_record(
                ev.s3_notification(
                    ev.s3_record(
                        segment.key,
                        size=64,
                        etag=etag.strip('"'),
                        sequencer=f"{next(world.sequencer):X}",
                        event_time=segment.end + RECEIPT,
                    )
                )
            )
        )
    for i in range(0, len(records), 10):
        assert world.ingest.handle(ev.sqs_event(*records[i : i + 10]), None) == {
            "batchItemFailures": []
        }


@pytest.fixture(scope="module")
def day_world() -> Any:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(dynamodb, "read-model")
        dynamodb.create_table(**deletions_table_definition("deletions"))
        dynamodb.create_table(**holds_table_definition("holds"))
        world = make_world(
            dynamodb, "read-model", NOW, deletions_table="deletions", holds_table="holds"
        )
        deleted = [(at(13), at(13, 30))]
        video = files("video", FILE, FILE, [s for s in NO_VIDEO if s not in deleted])
        upload(world, video + files("sensor", FILE, timedelta(0), NO_SENSOR))
        # A request deletes the video of its window (its job's deletes, as S3 events)
        services = world.services
        assert services.deletions is not None and services.holds is not None
        request = services.deletions.create(
            DEVICE, *map(ms, DELETION_WINDOW), kind="video", erase=False, created_by="alice",
            enqueue=False,
        )  # fmt: skip
        for segment in video:
            if segment.start < DELETION_WINDOW[1] and segment.end > DELETION_WINDOW[0]:
                world.delete(segment)
        services.holds.create(DEVICE, *map(ms, HOLD), "case 7", "bob")
        yield world, dynamodb, request.deletion_id


def reading_of_the_facts(deletion_id: str) -> list[dict[str, Any]]:
    """The gaps and reasons the facts above give, read second by second here: a second no
    file covers is deleted within the request's window widened by one file; else expired
    before the cutoff (widened by one file) unless held; else undecided. A run of undecided
    seconds is silent when a silence (more than 300 s without any arrival) meets it."""
    video = files("video", FILE, FILE, NO_VIDEO)
    arrivals = sorted(
        s.end + RECEIPT for s in video + files("sensor", FILE, timedelta(0), NO_SENSOR)
    )
    silences = [(a, b) for a, b in pairwise(arrivals) if b - a > SILENT_AFTER]
    second = timedelta(seconds=1)
    covered = {s.start + n * second for s in video for n in range(int((s.end - s.start) / second))}
    labels: list[tuple[datetime, str]] = []
    moment = DAY
    while moment < DAY + timedelta(days=1):
        if moment not in covered:
            if DELETION_WINDOW[0] - FILE <= moment < DELETION_WINDOW[1] + FILE:
                label = "deleted"
            elif moment < CUTOFF + FILE and not (HOLD[0] <= moment < HOLD[1]):
                label = "expired"
            else:
                label = "undecided"
            labels.append((moment, label))
        moment += timedelta(seconds=1)
    pieces: list[list[Any]] = []
    for moment, label in labels:
        if pieces and pieces[-1][1] == moment and pieces[-1][2] == label:
            pieces[-1][1] = moment + timedelta(seconds=1)
        else:
            pieces.append([moment, moment + timedelta(seconds=1), label])
    out = []
    for start, end, label in pieces:
        if label == "undecided":
            label = "silent" if any(a < end and b > start for a, b in silences) else "missing"
        gap: dict[str, Any] = {"start": iso(start), "end": iso(end), "reason": label}
        gap["deletion"] = (
            {"deletion_id": deletion_id, "created_by": "alice", "created_at": iso(NOW)}
            if label == "deleted"
            else None
        )
        out.append(gap)
    return out


class RequestCounter:
    def __init__(self, client: Any) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        client.meta.events.register("before-parameter-build.dynamodb", self._count)

    def _count(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self.calls[(model.name, params.get("TableName", ""))] += 1


def test_each_gap_of_a_day_says_why_as_the_facts_do(day_world: Any) -> None:
    world, dynamodb, deletion_id = day_world
    window = f"from={iso(DAY)}&to={iso(DAY + timedelta(days=1))}"
    world.get(f"/devices/{DEVICE}/ranges", window)  # warms the cached generation
    counter = RequestCounter(dynamodb)
    # When the day's ranges are asked for
    status, body, _ = world.get(f"/devices/{DEVICE}/ranges", window)
    # Then every gap has the reason an independent reading of the facts gives
    assert status == 200
    assert body["gaps"] == reading_of_the_facts(deletion_id)
    assert {gap["reason"] for gap in body["gaps"]} == {"deleted", "expired", "silent", "missing"}
    assert body["explained_until"] == iso(DAY + timedelta(days=1)) and body["overlaps"] == []
    # And it took at most 7 requests: the buckets, the deletion windows, the holds, and the
    # arrival history of each kind
    assert sum(counter.calls.values()) <= 7, counter.calls
    assert counter.calls == {
        ("Query", "read-model"): 4,  # coverage, then the arrivals of 3 kinds
        ("Query", "deletions"): 1,
        ("Query", "holds"): 1,
    }


# -- the days a New York clock changes ---------------------------------------------------------

NEW_YORK = ZoneInfo("America/New_York")


def local_day(year: int, month: int, day: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, day, tzinfo=NEW_YORK)
    return start.astimezone(UTC), (start + timedelta(days=1)).astimezone(UTC)


@pytest.mark.parametrize(
    ("day", "hours"), [((2026, 11, 1), 25), ((2026, 3, 8), 23)], ids=["fall-back", "spring-forward"]
)
def test_a_dst_days_ranges_and_gaps_share_its_real_length(
    aws: None, new_table: Any, day: tuple[int, int, int], hours: int
) -> None:
    # Given a camera that recorded the local day's 01:00-01:30 (twice on the fall-back
    # day: 01:00 comes twice) and 12:00-12:10, in 60 s files
    start, end = local_day(*day)
    dynamodb, table = new_table()
    world = make_world(dynamodb, table, end + timedelta(days=2))
    recorded: list[tuple[datetime, datetime]] = []
    moment = start
    while moment < end:
        local = moment.astimezone(NEW_YORK)
        if (local.hour == 1 and local.minute < 30) or (local.hour == 12 and local.minute < 10):
            world.put("video", "cam-ny", moment, 60_000)
            recorded.append((moment, moment + MINUTE))
        moment += MINUTE
    # When the local day's ranges are asked for
    status, body, _ = world.get("/devices/cam-ny/ranges", f"from={iso(start)}&to={iso(end)}")
    # Then the window is the day's real length, and its ranges (clipped) and its gaps
    # share it exactly: every moment is video or a gap with its reason
    assert status == 200 and end - start == timedelta(hours=hours)

    def span(item: dict[str, str]) -> timedelta:
        low = max(datetime.fromisoformat(item["start"]), start)
        return min(datetime.fromisoformat(item["end"]), end) - low

    video = sum((span(r) for r in body["ranges"]), timedelta(0))
    gaps = sum((span(g) for g in body["gaps"]), timedelta(0))
    assert video + gaps == timedelta(hours=hours)
    assert video == sum((b - a for a, b in recorded), timedelta(0))
    assert all(gap["reason"] in ("silent", "missing") for gap in body["gaps"])
    # And on the fall-back day both 01:00-01:30 were recorded: three ranges, not two
    assert len(body["ranges"]) == (3 if hours == 25 else 2)
