"""Measuring one question of the queries benchmark (requests by operation, read units, median
wall and server time) and the tables it prints.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from rich.table import Table

from bench.capacity import CapacityMeter
from bench.context import BenchmarkFailed
from bench.figures import ratio
from bench.queries_world import (
    DDB_READ_USD_PER_MILLION,
    MIN_RUNS,
    RUN_BUDGET_S,
    RUNS,
    S3_LIST_USD_PER_1000,
    from_ms,
)
from video_index.query.calendar import CalendarDay

T = TypeVar("T")


@contextmanager
def no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- measuring -----------------------------------------------------------------------------


class Calls:
    """API calls a client makes, by operation, counted by a botocore ``before-call`` hook;
    and the time between sending each request and starting to parse its response (the
    server: moto in this process, or DynamoDB Local over loopback; the rest is the client)."""

    def __init__(self, client: Any, service: str) -> None:
        self.calls: Counter[str] = Counter()
        self.server_s = 0.0
        self._sent = 0.0
        events = client.meta.events
        events.register(f"before-call.{service}", self._count)
        events.register_first(f"before-send.{service}", self._send)
        events.register(f"before-parse.{service}", self._received)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _send(self, **_: Any) -> None:
        self._sent = time.perf_counter()

    def _received(self, **_: Any) -> None:
        self.server_s += time.perf_counter() - self._sent

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@dataclass
class Measured:
    answer: Any
    requests: int
    operations: dict[str, int]
    seconds: list[float]
    server_seconds: list[float]
    read_units: float | None = None

    @property
    def ms(self) -> float:
        return 1000 * statistics.median(self.seconds)

    @property
    def server_ms(self) -> float:
        return 1000 * statistics.median(self.server_seconds)

    @property
    def runs(self) -> int:
        return len(self.seconds)


def measure(
    label: str,
    question: Callable[[], T],
    calls: Calls,
    *,
    meter: CapacityMeter | None = None,
) -> Measured:
    """Median wall time of RUNS runs (MIN_RUNS once they took RUN_BUDGET_S); the answer,
    requests and RCU must be the same every run."""
    answers: list[T] = []
    requests: list[Counter[str]] = []
    seconds: list[float] = []
    server: list[float] = []
    units: list[float] = []
    while len(seconds) < RUNS and (len(seconds) < MIN_RUNS or sum(seconds) < RUN_BUDGET_S):
        gc.collect()
        before_calls, before_server = Counter(calls.calls), calls.server_s
        before_units = meter.totals().read_units if meter else 0.0
        began = time.perf_counter()
        answers.append(question())
        seconds.append(time.perf_counter() - began)
        server.append(calls.server_s - before_server)
        requests.append(calls.calls - before_calls)
        if meter:
            units.append(meter.totals().read_units - before_units)
    if any(answer != answers[0] for answer in answers):
        raise BenchmarkFailed(f"{label}: the answer changed between runs")
    if any(r != requests[0] for r in requests) or len(set(units)) > 1:
        raise BenchmarkFailed(f"{label}: requests differ between runs: {requests}, {units}")
    return Measured(
        answers[0],
        sum(requests[0].values()),
        dict(requests[0]),
        seconds,
        server,
        units[0] if meter else None,
    )


# -- printing --------------------------------------------------------------------------------


def answer_of_calendar(days: list[CalendarDay]) -> str:
    with_video = sum(d.has_video for d in days)
    return f"{len(days)} days, {with_video} with video, {sum(d.segments for d in days):,} segments"


def answer_of_ranges(ranges: list[tuple[int, int]]) -> str:
    shown = ", ".join(
        f"{from_ms(a):%m-%d %H:%M:%S}..{from_ms(b):%m-%d %H:%M:%S}" for a, b in ranges[:3]
    ) + (", ..." if len(ranges) > 3 else "")
    return f"{len(ranges)} ranges: {shown}"


def operations(measured: Measured) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(measured.operations.items()))


def wall_ms(measured: Measured) -> str:
    text = f"{measured.ms:,.1f}\n(server {measured.server_ms:,.1f})"
    return text if measured.runs == RUNS else f"{text}\n[{measured.runs} runs]"


def results_table(rows: list[tuple[str, str, Measured, Measured]]) -> Table:
    table = Table(
        title=(
            f"Calendar and ranges: read model vs S3 listing (no index); wall ms median of {RUNS} "
            "runs unless marked, (server) = request sent to response received"
        ),
        title_justify="left",
    )
    table.add_column("question")
    table.add_column("read model\nrequests", justify="right")
    table.add_column("read model\nRCU", justify="right")
    table.add_column("read model\nms", justify="right")
    table.add_column("S3 listing\nrequests", justify="right")
    table.add_column("S3 listing\nms", justify="right")
    table.add_column("requests\nlisting / model", justify="right")
    table.add_column("time\nlisting / model", justify="right")
    for question, _, model, listing in rows:
        table.add_row(
            question,
            f"{model.requests}",
            f"{model.read_units or 0:,.1f}",
            wall_ms(model),
            f"{listing.requests:,}",
            wall_ms(listing),
            ratio(listing.requests, model.requests, digits=1),
            ratio(listing.ms, model.ms, digits=1),
        )
    return table


def cost_table(rows: list[tuple[str, str, Measured, Measured]]) -> Table:
    table = Table(
        title=(
            "Request cost per 1,000 questions at assumed list prices (us-east-1: S3 Standard "
            f"LIST ${S3_LIST_USD_PER_1000} per 1,000 requests; DynamoDB on-demand "
            f"${DDB_READ_USD_PER_MILLION} per million read request units)"
        ),
        title_justify="left",
    )
    table.add_column("question")
    table.add_column("read model (RCU x price)", justify="right")
    table.add_column("S3 listing (LIST x price)", justify="right")
    table.add_column("listing / model", justify="right")
    for question, _, model, listing in rows:
        model_usd = 1000 * (model.read_units or 0) * DDB_READ_USD_PER_MILLION / 1e6
        listing_usd = 1000 * listing.requests * S3_LIST_USD_PER_1000 / 1000
        table.add_row(
            question,
            f"${model_usd:.4f}",
            f"${listing_usd:.4f}",
            ratio(listing_usd, model_usd, digits=1),
        )
    return table


# -- the benchmark ---------------------------------------------------------------------------
