"""Annotations (docs/annotations.md): requests and capacity units per operation, the join's
cost per page of segments, each beside its baseline measured in the same run.

One camera has a day of back-to-back 10 s video segments in a read-model table on
DynamoDB Local (loaded directly, as ingest would leave it; the objects in a moto
bucket so that finding a segment works as deployed). Through the API's own code:

* create / replace / read / delete / list a window / read the history of annotations
  with a typical description (200 characters), and the same for the largest
  (4,000 characters, 3 bytes each in UTF-8), and a 31-day range (30 window copies);
  the baseline is one plain ``PutItem`` of the same annotation item into a plain table;
* a page of 100 segments without the join (no annotations table configured) and with
  it, while a note is on every third segment: the join's extra requests and read units.

Requests are counted and capacity units priced by AWS's rules (:mod:`bench.capacity`),
not taken from DynamoDB Local. The run fails when the join costs more than one request
per page or a list misses an annotation.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import boto3
from boto3.dynamodb.types import TypeSerializer
from moto import mock_aws
from rich.table import Table

from bench.capacity import CapacityMeter, Totals, describe_shape
from bench.context import BenchContext, BenchmarkFailed
from bench.figures import ratio
from video_index.annotations.layout import anchor_sk, partition
from video_index.annotations.model import Annotation, Draft, SegmentRef, Target
from video_index.core.keys import SegmentKey
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from video_index.core.table_schema import annotations_table_definition, create_tables
from video_index.core.timeunits import DAY_MS, iso_ms, to_epoch_ms
from worlds import events as ev
from worlds.api_world import ApiWorld, make_world
from worlds.read_model_view import stored
from worlds.reference_projection import project, with_aggregates
from worlds.tables import without_stream

DEVICE: Final = "cam-001"
REGION: Final = "us-east-1"
DAY: Final = datetime(2026, 11, 10, tzinfo=UTC)
NOW: Final = datetime(2026, 12, 15, tzinfo=UTC)
SEGMENT_MS: Final = 10_000
#: Segments of the day (full and quick run) and annotations per measured operation.
SEGMENTS: Final = {False: 2_000, True: 300}
REPEATS: Final = {False: 100, True: 10}
PAGE: Final = 100
TYPICAL: Final = "x" * 200
#: The longest description, each character 3 bytes in UTF-8.
LARGEST: Final = "€" * 4000

_serialize = TypeSerializer().serialize


@dataclass
class Figures:
    """One operation's cost per call, from a meter's totals before and after."""

    name: str
    calls: int
    requests: Counter[str] = field(default_factory=Counter)
    write_units: float = 0.0
    read_units: float = 0.0

    def per_call(self, value: float) -> float:
        return value / self.calls

    def described(self) -> str:
        return ", ".join(f"{op} {n / self.calls:g}" for op, n in sorted(self.requests.items()) if n)


class Metered:
    """One meter over every table of the run; :meth:`measure` takes the difference."""

    def __init__(self, client: Any, tables: list[str]) -> None:
        self.meter = CapacityMeter({t: describe_shape(client, t) for t in tables}).attach(client)

    def _totals(self) -> Totals:
        self.meter.settle({})
        return self.meter.totals()

    @contextmanager
    def measure(self, name: str, calls: int) -> Iterator[Figures]:
        before = self._totals()
        figures = Figures(name, calls)
        yield figures
        after = self._totals()
        for op, now in after.by_operation.items():
            was = before.by_operation.get(op)
            figures.requests[op] = now.requests - (was.requests if was else 0)
        figures.write_units = after.write_units - before.write_units
        figures.read_units = after.read_units - before.read_units


def day_of_segments(count: int) -> list[SegmentKey]:
    return [
        SegmentKey(
            kind="video",
            device=DEVICE,
            start=DAY + timedelta(milliseconds=n * SEGMENT_MS),
            duration_ms=SEGMENT_MS,
            id=f"{n:016x}",
            ext="mp4",
        )
        for n in range(count)
    ]


def load_segments(client: Any, s3: Any, table: str, segments: list[SegmentKey]) -> None:
    """The read model of ``segments`` written directly; their objects put into the bucket."""
    model = project([{"Key": s.key, "Size": 2_500_000, "ETag": '"e"'} for s in segments])
    items = stored(with_aggregates(model, DEFAULT_GAP_TOLERANCE_MS))
    for first in range(0, len(items), 25):
        requests = [
            {"PutRequest": {"Item": {k: _serialize(v) for k, v in item.items()}}}
            for item in items[first : first + 25]
        ]
        while requests:
            answer = client.batch_write_item(RequestItems={table: requests})
            requests = answer.get("UnprocessedItems", {}).get(table, [])
    for segment in segments[::3]:
        s3.put_object(Bucket=ev.BUCKET, Key=segment.key, Body=b"x")


def _draft(description: str, start_ms: int, length_ms: int = 60_000) -> Draft:
    return Draft(description, "pending", ("bench",), from_ms=start_ms, to_ms=start_ms + length_ms)


def baseline_put(metered: Metered, client: Any, table: str, description: str, n: int) -> Figures:
    """One plain PutItem of the annotation item per call: the floor of any write."""
    start = to_epoch_ms(DAY)
    with metered.measure(f"PutItem of the item ({len(description)} chars)", n) as figures:
        for i in range(n):
            annotation = Annotation(
                annotation_id=uuid.uuid4().hex,
                device=DEVICE,
                target=Target.of_range(start + i * 1000, start + i * 1000 + 60_000),
                description=description,
                status="pending",
                tags=("bench",),
                version=1,
                created_at=iso_ms(start),
                created_by="bench",
                updated_at=iso_ms(start),
                updated_by="bench",
            )
            item = {
                "pk": partition(DEVICE),
                "sk": anchor_sk(annotation.target.start_ms, annotation.annotation_id),
                **annotation.attributes(),
            }
            client.put_item(TableName=table, Item={k: _serialize(v) for k, v in item.items()})
    return figures


def crud(
    metered: Metered, world: ApiWorld, description: str, n: int, length_ms: int
) -> list[Figures]:
    """create, get, replace, list, history, delete of ``n`` annotations."""
    service = world.services.annotations
    assert service is not None
    label = f"{len(description)} chars" + (
        f", {length_ms // DAY_MS}-day range" if length_ms > DAY_MS else ""
    )
    start = to_epoch_ms(DAY) + 3 * 3_600_000
    created = []
    results = []
    with metered.measure(f"create ({label})", n) as figures:
        for i in range(n):
            created.append(service.create(DEVICE, _draft(description, start + i, length_ms), "b"))
    results.append(figures)
    with metered.measure(f"get ({label})", n) as figures:
        for annotation in created:
            service.get(DEVICE, annotation.annotation_id)
    results.append(figures)
    with metered.measure(f"replace ({label})", n) as figures:
        for i, annotation in enumerate(created):
            draft = _draft(description[::-1], start + i, length_ms)
            service.replace(DEVICE, annotation.annotation_id, draft, {1}, "b")
    results.append(figures)
    with metered.measure(f"history, 2 versions ({label})", n) as figures:
        for annotation in created:
            service.history(DEVICE, annotation.annotation_id)
    results.append(figures)
    with metered.measure(f"list a page of {min(n, 50)} ({label})", 1) as figures:
        page = service.window(DEVICE, start, start + n + length_ms, limit=min(n, 50))
    if len(page.items) != min(n, 50):
        raise BenchmarkFailed(f"a window listed {len(page.items)} of {min(n, 50)} annotations")
    results.append(figures)
    with metered.measure(f"delete ({label})", n) as figures:
        for annotation in created:
            service.delete(DEVICE, annotation.annotation_id, {2}, "b")
    results.append(figures)
    return results


def join_pages(
    metered: Metered, plain: ApiWorld, joined: ApiWorld, segments: list[SegmentKey]
) -> tuple[Figures, Figures, int]:
    """Every page of the day's segments, without and with the join; pages read."""
    service = joined.services.annotations
    assert service is not None
    noted = {segment.id for segment in segments[::3]}
    for n, segment in enumerate(segments[::3]):
        note = Draft(f"note {n}", "approved", ("seen",), segment=SegmentRef.of_key(segment))
        service.create(DEVICE, note, "bench")
    day = f"from={iso_ms(to_epoch_ms(DAY))}&to={iso_ms(to_epoch_ms(DAY) + DAY_MS)}"
    pages = -(-len(segments) // PAGE)
    results = []
    for world, name in ((plain, "segments page of 100"), (joined, "... with the join")):
        cursor = None
        with metered.measure(name, pages) as figures:
            for _ in range(pages):
                query = f"{day}&kind=video&limit={PAGE}" + (f"&cursor={cursor}" if cursor else "")
                status, body, _ = world.get(f"/devices/{DEVICE}/segments", query)
                if status != 200:
                    raise BenchmarkFailed(f"segments page: {status} {json.dumps(body)[:200]}")
                cursor = body["next_cursor"]
                if world is joined and not all(
                    e["annotations"] for e in body["items"] if e["id"] in noted
                ):
                    raise BenchmarkFailed("a noted segment came without its annotation")
        results.append(figures)
    return results[0], results[1], pages


def _table(title: str, rows: list[Figures], baseline: Figures | None) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("operation", "requests per call", "WCU", "RCU", "CU vs baseline"):
        table.add_column(
            column, justify="left" if column in ("operation", "requests per call") else "right"
        )
    base = None
    if baseline is not None:
        base = baseline.per_call(baseline.write_units + baseline.read_units)
    for figures in rows:
        units = figures.per_call(figures.write_units + figures.read_units)
        table.add_row(
            figures.name,
            figures.described(),
            f"{figures.per_call(figures.write_units):.2f}",
            f"{figures.per_call(figures.read_units):.2f}",
            ratio(units, base, digits=1) if base else "",
        )
    return table


def annotations_benchmark(context: BenchContext) -> None:
    console = context.console
    quick = context.quick
    label = "QUICK smoke run, not the figures to quote" if quick else "full run"
    n = REPEATS[quick]
    console.rule(f"[bold]annotations[/]: {n} annotations per operation ({label})")
    server = context.dynamodb_server()
    with mock_aws():
        client = boto3.client("dynamodb", endpoint_url=server.endpoint, region_name=REGION)
        suffix = uuid.uuid4().hex[:8]
        read_model, annotations = f"bench-rm-{suffix}", f"bench-ann-{suffix}"
        plain_table = f"bench-plain-{suffix}"
        create_tables(client, read_model, annotations)
        without_stream(client, read_model)  # loaded with its aggregates: no consumer
        client.create_table(**annotations_table_definition(plain_table))
        began = time.perf_counter()
        # loaded directly, aggregates included: no consumer adds them again
        plain = make_world(client, read_model, now=NOW, aggregate=False)
        joined = make_world(
            client, read_model, now=NOW, annotations_table=annotations, aggregate=False
        )
        segments = day_of_segments(SEGMENTS[quick])
        load_segments(client, plain.s3, read_model, segments)
        plain.get(f"/devices/{DEVICE}")  # the cached generation, outside the figures
        joined.get(f"/devices/{DEVICE}")
        console.print(
            f"setup: {len(segments):,} segments loaded in {time.perf_counter() - began:.1f} s"
        )
        metered = Metered(client, [read_model, annotations, plain_table])

        typical_base = baseline_put(metered, client, plain_table, TYPICAL, n)
        largest_base = baseline_put(metered, client, plain_table, LARGEST, n)
        typical = crud(metered, joined, TYPICAL, n, 60_000)
        largest = crud(metered, joined, LARGEST, n, 60_000)
        longest = crud(metered, joined, TYPICAL, max(2, n // 10), 31 * DAY_MS)
        with metered.measure("create on a segment (finds it: GetItem, S3 HEAD)", n) as on_segment:
            service = joined.services.annotations
            assert service is not None
            for segment in segments[: 3 * n : 3]:
                note = Draft(TYPICAL, "pending", (), segment=SegmentRef.of_key(segment))
                service.create(DEVICE, note, "b")
        without, with_join, pages = join_pages(metered, plain, joined, segments[3 * n :])

    console.print(
        _table(
            "Annotation writes and reads, typical description",
            [typical_base, *typical, on_segment],
            typical_base,
        )
    )
    console.print(
        _table(
            "... the largest description (4,000 characters, 12 KB)",
            [largest_base, *largest],
            largest_base,
        )
    )
    console.print(_table("... a 31-day range (an anchor and 30 carries)", longest, typical_base))
    console.print(
        _table(
            f"The join: {pages} pages of {PAGE} segments, a note on every third",
            [without, with_join],
            without,
        )
    )
    extra_requests = with_join.per_call(sum(with_join.requests.values())) - without.per_call(
        sum(without.requests.values())
    )
    extra_units = with_join.per_call(with_join.read_units) - without.per_call(without.read_units)
    console.print(
        f"the join: [bold]{extra_requests:+.2f} requests[/] and {extra_units:+.2f} RCU per page "
        f"of {PAGE} segments (bound: +1 request per page)"
    )
    if extra_requests > 1:
        raise BenchmarkFailed(f"the join costs {extra_requests:.2f} extra requests per page")
