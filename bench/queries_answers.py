"""The questions of the queries benchmark asked both ways, on the read model (the API's
own :class:`~video_index.query.queries.Queries`) and on an S3 listing, and the checks
that both answers are equal and equal to the independent reference projection's."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import boto3

from bench.capacity import CapacityMeter, describe_shape
from bench.context import BenchmarkFailed
from bench.queries_listing import (
    Listing,
    calendar_by_listing,
    ranges_by_listing,
)
from bench.queries_measure import (
    Calls,
    Measured,
    measure,
)
from bench.queries_world import (
    ACCESS_KEY,
    BUCKET,
    DAY_MS,
    DEVICE,
    MONTH,
    NOW,
    REGION,
    SECRET_KEY,
    YEAR,
    World,
    epoch_ms,
)
from video_index.app.services import build_api_services
from video_index.aws.clients import CLIENT_CONFIG, Clients
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS, Settings
from video_index.query.calendar import CalendarDay
from video_index.query.entries import KindTotals
from video_index.query.queries import Queries
from worlds.reference_projection import ranges as reference_ranges


@dataclass(frozen=True, slots=True)
class Questions:
    """The UTC days asked about and the month's zone."""

    tz: ZoneInfo
    ranges_day: int
    nonstop_day: int

    @property
    def day(self) -> tuple[int, int]:
        start = epoch_ms(dt.datetime(YEAR, MONTH, self.ranges_day, tzinfo=dt.UTC))
        return start, start + DAY_MS

    @property
    def nonstop(self) -> tuple[int, int]:
        start = epoch_ms(dt.datetime(YEAR, MONTH, self.nonstop_day, tzinfo=dt.UTC))
        return start, start + DAY_MS


@dataclass(frozen=True, slots=True)
class Answers:
    """Each question measured on the read model and (but the totals) on the S3 listing."""

    calendar_model: Measured
    ranges_model: Measured
    nonstop_model: Measured
    totals_model: Measured
    calendar_listing: Measured
    ranges_listing: Measured
    nonstop_listing: Measured


def read_model_queries(endpoint: str, table: str, s3: Any) -> tuple[Queries, CapacityMeter, Calls]:
    """The API's own query layer on the loaded table, its read units metered, its calls counted."""
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        config=CLIENT_CONFIG,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    meter = CapacityMeter({table: describe_shape(dynamodb, table)}).attach(dynamodb)
    ddb_calls = Calls(dynamodb, "dynamodb")
    settings = Settings(bucket=BUCKET, table=table)
    clients = Clients(dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs", region_name=REGION))
    queries: Queries = build_api_services(settings, clients, clock=NOW.timestamp).queries
    queries.generation()  # warms the cached generation (one GetItem, not measured)
    if queries.gap_tolerance_ms != DEFAULT_GAP_TOLERANCE_MS:
        raise BenchmarkFailed(
            f"the API's gap tolerance {queries.gap_tolerance_ms} ms is not the world's"
        )
    return queries, meter, ddb_calls


def measure_answers(
    queries: Queries,
    meter: CapacityMeter,
    ddb_calls: Calls,
    s3: Any,
    s3_calls: Calls,
    asked: Questions,
) -> Answers:
    """Every question both ways (the read model first, after one unmeasured run)."""
    tolerance, tz = queries.gap_tolerance_ms, asked.tz
    day_start, day_end = asked.day
    nonstop_start, nonstop_end = asked.nonstop

    def model_calendar() -> list[CalendarDay]:
        return queries.calendar(DEVICE, YEAR, MONTH, tz)

    def model_ranges() -> list[tuple[int, int]]:
        return queries.ranges(DEVICE, day_start, day_end)

    def model_nonstop() -> list[tuple[int, int]]:
        return queries.ranges(DEVICE, nonstop_start, nonstop_end)

    def model_totals() -> dict[str, KindTotals]:
        return queries.device_totals(DEVICE)

    def listed_nonstop() -> list[tuple[int, int]]:
        return ranges_by_listing(Listing(s3, BUCKET, DEVICE), nonstop_start, nonstop_end, tolerance)

    def listed_calendar() -> list[CalendarDay]:
        return calendar_by_listing(Listing(s3, BUCKET, DEVICE), YEAR, MONTH, tz)

    def listed_ranges() -> list[tuple[int, int]]:
        return ranges_by_listing(Listing(s3, BUCKET, DEVICE), day_start, day_end, tolerance)

    # one unmeasured run of the read-model questions (the JVM's warm-up)
    model_calendar()
    model_ranges()
    model_nonstop()
    model_totals()
    s3_before = s3_calls.total
    calendar_model = measure("calendar, read model", model_calendar, ddb_calls, meter=meter)
    ranges_model = measure("ranges, read model", model_ranges, ddb_calls, meter=meter)
    nonstop_model = measure("non-stop ranges, read model", model_nonstop, ddb_calls, meter=meter)
    totals_model = measure("totals, read model", model_totals, ddb_calls, meter=meter)
    if s3_calls.total != s3_before:
        raise BenchmarkFailed("the read-model answers listed S3 (the freshness window?)")
    return Answers(
        calendar_model=calendar_model,
        ranges_model=ranges_model,
        nonstop_model=nonstop_model,
        totals_model=totals_model,
        calendar_listing=measure("calendar, S3 listing", listed_calendar, s3_calls),
        ranges_listing=measure("ranges, S3 listing", listed_ranges, s3_calls),
        nonstop_listing=measure("non-stop ranges, S3 listing", listed_nonstop, s3_calls),
    )


def check_answers(answers: Answers, world: World, asked: Questions, tolerance: int) -> None:
    """Honest comparison: both ways give the same answers, and the ranges are those of the
    whole listing by the independent reference (worlds.reference_projection)."""
    if answers.calendar_model.answer != answers.calendar_listing.answer:
        raise BenchmarkFailed(
            "calendars differ: "
            + "; ".join(
                f"{a} != {b}"
                for a, b in zip(
                    answers.calendar_model.answer, answers.calendar_listing.answer, strict=True
                )
                if a != b
            )[:2000]
        )
    day_start, day_end = asked.day
    reference = [
        r
        for r in reference_ranges(world.model, DEVICE, tolerance)
        if r[0] < day_end and r[1] > day_start
    ]
    if not answers.ranges_model.answer == answers.ranges_listing.answer == reference:
        raise BenchmarkFailed(
            f"ranges differ: read model {answers.ranges_model.answer}, listing "
            f"{answers.ranges_listing.answer}, reference {reference}"
        )
    if (
        not any(d.has_video for d in answers.calendar_model.answer)
        or not answers.ranges_model.answer
    ):
        raise BenchmarkFailed("empty answers: nothing was compared")
    _check_nonstop(answers, world, asked, tolerance)
    want_totals = {
        kind: KindTotals(*figures)
        for (device, kind), figures in world.model.totals.items()
        if device == DEVICE
    }
    if answers.totals_model.answer != want_totals:
        raise BenchmarkFailed(
            f"totals {answers.totals_model.answer} != the projection's {want_totals}"
        )


def _check_nonstop(answers: Answers, world: World, asked: Questions, tolerance: int) -> None:
    """The day without an outage is one range across it, the same all three ways."""
    nonstop_start, nonstop_end = asked.nonstop
    reference = [
        r
        for r in reference_ranges(world.model, DEVICE, tolerance)
        if r[0] < nonstop_end and r[1] > nonstop_start
    ]
    if not answers.nonstop_model.answer == answers.nonstop_listing.answer == reference:
        raise BenchmarkFailed(
            f"non-stop day's ranges differ: read model {answers.nonstop_model.answer}, listing "
            f"{answers.nonstop_listing.answer}, reference {reference}"
        )
    if len(reference) != 1 or not (
        reference[0][0] < nonstop_start and reference[0][1] > nonstop_end - 1000
    ):
        raise BenchmarkFailed(f"day {asked.nonstop_day} is not one range across it: {reference}")
