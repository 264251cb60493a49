"""The audit trail (docs/audit.md): records per second one API function sustains.

One API function answers one request at a time, so the records it can write per second
are 1 / (the time of an audited request). In the same run, on moto in this process:

* **audited**: ``GET /devices/{device}/segments`` by a viewer through the real resolver,
  its record written to the Object Lock bucket and the index (two requests, as deployed);
* **baseline**: the same request with the recording step replaced by handing the answer
  back (what the route cost before the trail);
* **the write alone**: :meth:`S3AuditLog.write` of one record.

Medians of interleaved batches, wall and CPU time of this process. moto answers in
microseconds where S3 and DynamoDB answer in milliseconds; the deployed figure is bounded
by the two round trips (docs/audit.md#cost-and-throughput). The answers must be equal and
every audited request must have left exactly one record (the run fails otherwise).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final
from unittest.mock import patch

import boto3
from moto import mock_aws
from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from video_index.api import access as decision
from video_index.core.audit import AuditRecord
from video_index.core.table_schema import create_tables
from worlds import events as ev
from worlds.api_world import AUDIT_BUCKET, ApiWorld, at, iso, make_world

FULL: Final = (9, 100)  # batches, requests per batch
QUICK: Final = (3, 30)
DEVICE: Final = "cam-bench"
WINDOW: Final = f"from={iso(at(29, 10))}&to={iso(at(29, 11))}"
#: us-east-1 list prices (docs/audit.md#cost-and-throughput), USD.
S3_PUT_PER_1000: Final = 0.005
DYNAMODB_WRITE_PER_MILLION: Final = 0.625


@contextmanager
def _unaudited() -> Iterator[None]:
    with patch.object(decision, "recorded", lambda event, answer: answer):
        yield


def _timed(run: Callable[[], object], count: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        run()
    return (time.perf_counter() - wall) / count, (time.process_time() - cpu) / count


def _world() -> ApiWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "bench-read-model")
    world = make_world(dynamodb, "bench-read-model")
    for minute in range(0, 60, 10):
        world.put("video", DEVICE, at(29, 10, minute), 60_000)
    world.drain()
    return world


def _objects(world: ApiWorld) -> int:
    pages = world.s3.get_paginator("list_objects_v2").paginate(Bucket=AUDIT_BUCKET)
    return sum(len(page.get("Contents", [])) for page in pages)


def audit_benchmark(context: BenchContext) -> None:
    batches, count = QUICK if context.quick else FULL
    with mock_aws():
        world = _world()
        viewer = ev.cognito_authorizer("u-bench", ["viewer"], devices=DEVICE)

        def request() -> Any:
            status, body, _ = world.call(
                "GET", f"/devices/{DEVICE}/segments", WINDOW, authorizer=viewer
            )
            if status != 200:
                raise BenchmarkFailed(f"the request was answered {status}: {body}")
            return [item["key"] for item in body["items"]]

        log = world.services.audit
        assert log is not None
        written = iter(range(10**9))

        def write() -> None:
            n = next(written)
            log.write(_record(f"bench-{n}", log.now_ms() + n))

        with _unaudited():
            baseline_answer = request()
        before = _objects(world)
        if request() != baseline_answer or _objects(world) != before + 1:
            raise BenchmarkFailed("the audited answer differs, or it left no single record")
        audited, baseline, alone = [], [], []
        for _ in range(batches):  # interleaved: all three see the same machine
            audited.append(_timed(request, count))
            with _unaudited():
                baseline.append(_timed(request, count))
            alone.append(_timed(write, count))
        _report(context, batches, count, audited, baseline, alone)


def _record(request_id: str, now_ms: int) -> AuditRecord:
    return AuditRecord(
        record_id=f"{now_ms:013d}-{request_id}",
        time="2026-11-30T12:30:00.000Z",
        principal="u-bench",
        role="viewer",
        action="segments.list",
        route="GET /devices/{device}/segments",
        device=DEVICE,
        window_from="2026-11-29T10:00:00.000Z",
        window_to="2026-11-29T11:00:00.000Z",
        outcome="ok",
        status=200,
        request_id=request_id,
        source="203.0.113.10",
    )


def _report(
    context: BenchContext,
    batches: int,
    count: int,
    *series: list[tuple[float, float]],
) -> None:
    table = Table(
        title=f"Audit records per second, one API function (GET /devices/{{device}}/segments "
        f"on moto in-process; median of {batches} batches of {count})"
    )
    for column in ("request", "ms wall", "ms CPU", "per second (wall)"):
        table.add_column(column, justify="left" if column == "request" else "right")
    names = (
        "audited (record in bucket + index)",
        "baseline (same route, unrecorded)",
        "the record's write alone",
    )
    medians = []
    for name, runs in zip(names, series, strict=True):
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        medians.append(wall)
        table.add_row(name, f"{wall * 1e3:.2f}", f"{cpu * 1e3:.2f}", f"{1 / wall:,.0f}")
    table.add_row("added by auditing", f"{(medians[0] - medians[1]) * 1e3:+.2f}", "", "")
    context.console.print(table)
    per_million = S3_PUT_PER_1000 * 1000 + DYNAMODB_WRITE_PER_MILLION
    context.console.print(
        f"Writing a million records: ${per_million:.2f} at us-east-1 list prices "
        f"(S3 PUT ${S3_PUT_PER_1000}/1,000 + DynamoDB on-demand write "
        f"${DYNAMODB_WRITE_PER_MILLION}/million); storage in docs/audit.md."
    )
