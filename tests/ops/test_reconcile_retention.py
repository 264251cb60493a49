"""Reconcile tells a held object from a forgotten one (docs/holds.md, docs/operations.md).

A small world on moto: segments of two devices at chosen distances from an injected
"now", holds over some of them (one released), and reconcile run from an S3 Inventory
report (the map's columnar path) and from a listing. Each object's expected class is
written down where the object is made, from the numbers that place it (days past the
kind's retention, which hold it falls in): not computed by the code under test.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tables import TableFactory
from video_index.aws.clients import Clients
from video_index.aws.holds import HoldStore
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.settings import Settings
from video_index.core.table_schema import holds_table_definition
from video_index.holds.service import Holds
from video_index.ops import columnar
from video_index.ops.retention_census import RetentionCensus
from video_index.ops.service import Ops, build_ops
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.inventory_fixtures import destination_uri, write_inventory
from worlds.reference_projection import list_bucket

BUCKET = ev.BUCKET
REPORTS = "video-index-reports"
HOLDS = "holds"
NOW = datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
RETENTION = {"video": 30, "sensor": 90, "analysis": 90}


def _segment(device: str, kind: str, ended_days_past_retention: float, seconds: int = 10) -> str:
    """The key of a segment that ended so many days after (negative: before) its kind's
    retention boundary ``NOW - retention``."""
    boundary = NOW - timedelta(days=RETENTION[kind])
    end = boundary - timedelta(days=ended_days_past_retention)
    start = end - timedelta(seconds=seconds)
    duration, ext = seconds * 1000, "mp4" if kind == "video" else "json"
    content = f"{device} {kind} {start.isoformat()}".encode()
    return str(
        format_key(
            SegmentKey(
                kind=kind,
                device=device,
                start=start,
                duration_ms=duration,
                id=segment_id(kind, device, start, duration, content),
                ext=ext,
            )
        )
    )


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> Iterator[tuple[Ops, dict[str, str]]]:
    s3 = boto3.client("s3")
    for name in (BUCKET, REPORTS):
        s3.create_bucket(Bucket=name)
    dynamodb, table = new_table()
    dynamodb.create_table(**holds_table_definition(HOLDS))
    holds = Holds(HoldStore(dynamodb, HOLDS), clock=lambda: NOW.timestamp())
    boundary = NOW - timedelta(days=RETENTION["video"])

    # Objects and their expected class, by construction.
    expected: dict[str, str] = {}
    # cam-a: a hold over 10 days from 20 to 10 days before the boundary
    held_from, held_to = boundary - timedelta(days=20), boundary - timedelta(days=10)
    holds.create("cam-a", _ms(held_from), _ms(held_to), "case 1", "alice")
    for days in (11, 15, 19.5):  # inside the hold: held
        expected[_segment("cam-a", "video", days)] = "held"
    # a segment straddling the hold's later edge (ends 1 s after it): held whole
    expected[_segment("cam-a", "video", 10 - 1 / 86_400, seconds=20)] = "held"
    for days in (25, 3):  # past retention by > 2 days, outside the hold: overdue
        expected[_segment("cam-a", "video", days)] = "overdue"
    expected[_segment("cam-a", "video", 1)] = "grace"  # 1 day past: the job may not have run
    expected[_segment("cam-a", "video", -1)] = "kept"  # inside retention
    expected[_segment("cam-a", "sensor", -40)] = "kept"  # 70 days old: sensor keeps 90
    expected[_segment("cam-a", "sensor", 5)] = "overdue"  # 95 days old: past sensor's 90
    # cam-b: a released hold protects nothing
    released = holds.create("cam-b", _ms(held_from), _ms(held_to), "case 2", "bob")
    holds.release(released.hold_id, "bob", is_admin=False)
    expected[_segment("cam-b", "video", 15)] = "overdue"
    # cam-c: a hold on another device's footage does not hold cam-c's
    expected[_segment("cam-c", "video", 15)] = "overdue"
    for key in expected:
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    settings = Settings(
        bucket=BUCKET,
        table=table,
        reports_bucket=REPORTS,
        inventory_destination=destination_uri(REPORTS, "inventory", BUCKET, "daily"),
        holds_table=HOLDS,
        retention_days=RETENTION,
    )
    clients = Clients(dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs"))
    pump = Aggregation(dynamodb, table).drain
    yield build_ops(settings, clients, pump=pump, clock=lambda: NOW.timestamp()), expected


def _inventory(ops: Ops) -> None:
    rows = [
        (o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"])
        for o in list_bucket(ops.clients.s3, BUCKET)
    ]
    write_inventory(
        ops.clients.s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket=BUCKET,
        config_id="daily",
        objects=rows,
        fmt="Parquet",
        files=2,
        created=NOW,
    )


@pytest.mark.parametrize("engine", ["moto"])
@pytest.mark.parametrize("source", ["inventory", "list"])
def test_the_report_counts_held_and_overdue_objects_apart(
    world: tuple[Ops, dict[str, str]], source: str
) -> None:
    ops, expected = world
    if source == "inventory":
        _inventory(ops)
    # When reconcile runs (fingerprinting every object)
    report = ops.reconcile(source=source)
    # Then objects past retention are counted as held or overdue, as placed
    count = {name: sum(v == name for v in expected.values()) for name in ("held", "overdue")}
    assert (report.past_retention_held, report.past_retention_overdue) == (
        count["held"],
        count["overdue"],
    )
    # And the overdue samples name exactly the forgotten objects
    assert sorted(report.overdue_samples) == sorted(
        k for k, v in expected.items() if v == "overdue"
    )
    # And both counts are in the saved report and the status summary
    saved: dict[str, Any] = ops.get_json(REPORTS, f"reconcile/{report.run_id}/report.json")
    assert (saved["past_retention_held"], saved["past_retention_overdue"]) == (
        count["held"],
        count["overdue"],
    )


@pytest.mark.parametrize("engine", ["moto"])
def test_the_in_process_reconciler_counts_the_same(world: tuple[Ops, dict[str, str]]) -> None:
    ops, expected = world
    report = ops.reconciler.run(ops.segments.list("v1/"), source="list")
    assert report.past_retention_held == sum(v == "held" for v in expected.values())
    assert report.past_retention_overdue == sum(v == "overdue" for v in expected.values())


# -- the column-wise census against the rule, row by row ---------------------------------

DEVICES = ("cam-a", "cam-b", "cam-c", "cam-d")
DAY_MS = 86_400_000


@st.composite
def census_world(draw: st.DrawFn) -> tuple[list[tuple[str, int, int]], dict[str, list[Any]]]:
    """Video segments (device, start ms, duration ms) around the retention boundary and
    some devices' hold windows (from ms, to ms) whose edges are often a segment's own
    (a window ending where a segment starts holds it not; one ending a millisecond
    after does)."""
    boundary = _ms(NOW - timedelta(days=RETENTION["video"]))
    hours = st.integers(-4 * 24, 24).map(lambda h: boundary + h * 3_600_000)
    segments = draw(
        st.lists(
            st.tuples(st.sampled_from(DEVICES), hours, st.sampled_from([1, 60_000, 3_600_000])),
            max_size=60,
        )
    )
    edges = sorted({s for _, s, _ in segments} | {s + n for _, s, n in segments})
    edge = (st.sampled_from(edges) if edges else hours).flatmap(
        lambda e: st.sampled_from([e - 1, e, e + 1])
    )
    windows = draw(
        st.lists(st.tuples(st.sampled_from(DEVICES), edge, edge), max_size=6).map(
            lambda found: [(d, min(a, b), max(a, b) + 1) for d, a, b in found]
        )
    )
    holds: dict[str, list[Any]] = {}
    for device, from_ms, to_ms in windows:
        holds.setdefault(device, []).append((from_ms, to_ms))
    return segments, holds


@settings(max_examples=80, deadline=None)
@given(census_world())
def test_the_column_wise_census_counts_what_the_rule_says_row_by_row(
    world: tuple[list[tuple[str, int, int]], dict[str, list[Any]]],
) -> None:
    segments, holds = world
    keys = [
        str(
            format_key(
                SegmentKey(
                    kind="video",
                    device=device,
                    start=datetime.fromtimestamp(start / 1000, UTC),
                    duration_ms=duration,
                    id=segment_id(
                        "video",
                        device,
                        datetime.fromtimestamp(start / 1000, UTC),
                        duration,
                        f"{i}".encode(),
                    ),
                    ext="mp4",
                )
            )
        )
        for i, (device, start, duration) in enumerate(segments)
    ]
    reads: list[str] = []

    def held(device: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
        reads.append(device)
        return list(holds.get(device, []))

    # Given a census at NOW over the segments, holds read through a counting reader
    census = RetentionCensus(held, _ms(NOW), RETENTION)
    # When the keys are fingerprinted column-wise with the census
    _, counts = columnar.fingerprint_keys(
        pa.array(keys, pa.string()), [1] * len(keys), census=census
    )
    counts.retention.add(census.settle())  # the rows set aside, judged (end of a unit)
    # Then held and overdue are what the rule gives, worked out here segment by segment:
    # past retention when it ended by NOW - 30 days; held when its [start, end) overlaps a
    # window of its device; overdue when not held and it ended two days before that
    cutoff = _ms(NOW - timedelta(days=RETENTION["video"]))
    expect_held, expect_overdue = 0, []
    for key, (device, start, duration) in zip(keys, segments, strict=True):
        end = start + duration
        if end > cutoff:
            continue
        if any(start < to and end > frm for frm, to in holds.get(device, [])):
            expect_held += 1
        elif end <= cutoff - 2 * DAY_MS:
            expect_overdue.append(key)
    assert counts.retention.held == expect_held
    assert counts.retention.overdue == len(expect_overdue)
    # And the samples are overdue keys, all of them when they fit (keys are parsed
    # grouped by layout, so which ten is not the input's order)
    samples = counts.retention.overdue_samples
    assert len(samples) == min(10, len(expect_overdue))
    assert set(samples) <= set(expect_overdue)
    # And each device's holds were read at most once
    assert len(reads) == len(set(reads))
