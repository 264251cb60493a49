"""Calendar and ranges (docs/read-model.md): the read model vs answering from an S3 listing.

One camera, ``cam-001``, records back-to-back 10 s video segments through
November 2026, with a 5-minute outage at a random time every day. The same
objects are in a moto bucket and, as the independent projection of their
listing (``worlds.reference_projection``), in a read-model table on DynamoDB
Local, loaded directly with ``BatchWriteItem`` (as ingest would leave it).

Two questions are answered both ways in the same run:

* the month calendar in ``Europe/Berlin`` (``Queries.calendar``),
* the continuous ranges of one UTC day (``Queries.ranges``), and the same for a
  day without an outage, whose range runs on across both midnights;

by the API's own code on the read model, and without an index by listing the
S3 prefixes that can hold the answer and computing it from the keys. The
answers must be equal (the run fails otherwise). A device's totals
(``Queries.device_totals``) are asked of the read model only, and checked against
the projection. Requests are counted with botocore hooks; DynamoDB read units are
priced by AWS's rules (``bench.capacity``).

The table holds what ingest and the stream consumer leave: segment items, bucket
items with their figures and hourly video coverage (``r``), and device items with
each kind's totals (``worlds.reference_projection.with_aggregates``), so the
questions can be answered from segment items or from the stored aggregates,
whichever the query layer reads.
"""

from __future__ import annotations

import gc
import time
import uuid
from typing import Any
from zoneinfo import ZoneInfo

import boto3
from botocore.config import Config
from moto import mock_aws
from rich.console import Console

from bench.context import BenchContext
from bench.queries_answers import (
    Answers,
    Questions,
    check_answers,
    measure_answers,
    read_model_queries,
)
from bench.queries_listing import (
    Listing,
    check_indexed_listing,
    indexed_listing,
    local_day_starts,
)
from bench.queries_measure import (
    Calls,
    Measured,
    answer_of_calendar,
    answer_of_ranges,
    cost_table,
    no_gc,
    operations,
    results_table,
    wall_ms,
)
from bench.queries_world import (
    ACCESS_KEY,
    BUCKET,
    DEVICE,
    FIRST_DAY,
    FULL_DAYS,
    HOUR_MS,
    KIND,
    LOAD_THREADS,
    MAX_VIDEO_MS,
    MIN_RUNS,
    MONTH,
    NONSTOP_DAY,
    NOW,
    QUICK_DAYS,
    RANGES_DAY,
    REGION,
    REQUEST_BOUND,
    RUN_BUDGET_S,
    RUNS,
    SECRET_KEY,
    SEGMENT_MS,
    TOTALS_BOUND,
    YEAR,
    ZONE,
    World,
    batch_write,
    build_world,
    from_ms,
    put_into_moto,
    read_model_items,
)
from video_index.aws.clients import S3_CONFIG
from video_index.core.table_schema import create_tables
from worlds.tables import without_stream


def queries_benchmark(context: BenchContext) -> None:
    console = context.console
    days = QUICK_DAYS if context.quick else FULL_DAYS
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    console.rule(
        f"[bold]queries[/]: calendar and ranges of {DEVICE}, {days} days of "
        f"{SEGMENT_MS // 1000} s video segments, read model vs S3 listing ({label})"
    )
    server = context.dynamodb_server()
    with no_gc():  # millions of objects that live on: no cycles to find, only rescans
        began = time.perf_counter()
        world = build_world(days, NONSTOP_DAY[context.quick])
        items = read_model_items(world.model)
        world_s = time.perf_counter() - began

    admin = boto3.client(
        "dynamodb",
        endpoint_url=server.endpoint,
        region_name=REGION,
        config=Config(max_pool_connections=2 * LOAD_THREADS),
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    table = f"bench-queries-{uuid.uuid4().hex[:8]}"
    create_tables(admin, table)
    without_stream(admin, table)  # loaded with its aggregates: no consumer
    try:
        began = time.perf_counter()
        with no_gc():
            batch_write(admin, table, items, LOAD_THREADS)
        item_count = len(items)
        del items
        load_s = time.perf_counter() - began
        with mock_aws():
            s3 = boto3.client("s3", region_name=REGION, config=S3_CONFIG)
            began = time.perf_counter()
            with no_gc():
                backend, bucket = put_into_moto(s3, world)
            put_s = time.perf_counter() - began
            console.print(
                f"load: {len(world.segments):,} segments and their {item_count:,} read-model "
                f"items (independent projection) built in {world_s:.1f} s; items written to "
                f"DynamoDB Local with BatchWriteItem ({LOAD_THREADS} threads) in {load_s:.1f} s; "
                f"objects put into the moto bucket and checked in {put_s:.1f} s"
            )
            with indexed_listing(bucket) as original:
                hour = world.segments[0].key.rsplit("/", 1)[0] + "/"
                check = check_indexed_listing(
                    backend, bucket, original, [f"v1/{KIND}/{DEVICE}/2026/11/", hour]
                )
                # the world (moto's objects, the projection) stays alive all along: keep the
                # cyclic garbage collector from rescanning millions of its objects mid-run
                gc.collect()
                gc.freeze()
                try:
                    _measure_and_print(context, server.endpoint, table, s3, world, check)
                finally:
                    gc.unfreeze()
            backend.reset()  # closes moto's per-object buffers now, not at the next mock
    finally:
        admin.delete_table(TableName=table)


def _measure_and_print(
    context: BenchContext,
    endpoint: str,
    table: str,
    s3: Any,
    world: World,
    listing_check: tuple[int, float, float],
) -> None:
    console = context.console
    asked = Questions(ZoneInfo(ZONE), RANGES_DAY[context.quick], NONSTOP_DAY[context.quick])
    queries, meter, ddb_calls = read_model_queries(endpoint, table, s3)
    s3_calls = Calls(s3, "s3")
    tolerance = queries.gap_tolerance_ms
    answers = measure_answers(queries, meter, ddb_calls, s3, s3_calls, asked)
    check_answers(answers, world, asked, tolerance)

    # where the listing's requests go: the day itself vs following ranges across midnight
    before = s3_calls.total
    day_start, day_end = asked.day
    low = day_start - tolerance - MAX_VIDEO_MS
    high = day_end + tolerance
    list(Listing(s3, BUCKET, DEVICE).segments(low - low % HOUR_MS, high + (-high % HOUR_MS)))
    listing_window = s3_calls.total - before

    rows = _print_results(console, answers, asked)
    console.print(cost_table(rows))
    _print_notes(console, s3, world, answers, asked, listing_check, listing_window)


def _print_results(
    console: Console, answers: Answers, asked: Questions
) -> list[tuple[str, str, Measured, Measured]]:
    """The results table, the answers, and the request bounds of docs/read-model.md."""
    rows = [
        (
            f"calendar {YEAR}-{MONTH:02d}, {ZONE}",
            answer_of_calendar(answers.calendar_model.answer),
            answers.calendar_model,
            answers.calendar_listing,
        ),
        (
            f"ranges {YEAR}-{MONTH:02d}-{asked.ranges_day:02d} 00:00-24:00 UTC",
            answer_of_ranges(answers.ranges_model.answer),
            answers.ranges_model,
            answers.ranges_listing,
        ),
        (
            f"ranges {YEAR}-{MONTH:02d}-{asked.nonstop_day:02d} (no outage that day)",
            answer_of_ranges(answers.nonstop_model.answer),
            answers.nonstop_model,
            answers.nonstop_listing,
        ),
    ]
    console.print(results_table(rows))
    console.print("Answers (equal both ways; the ranges also equal to the reference projection's):")
    for question, answer, _, _ in rows:
        console.print(f"  {question}: {answer}")
    totals_model = answers.totals_model
    video = totals_model.answer["video"]
    console.print(
        f"  totals of {DEVICE} (read model only; equal to the projection's): {video.segments:,} "
        f"segments, {video.bytes:,} B, {video.duration_ms:,} ms, first "
        f"{from_ms(video.first_start_ms or 0):%m-%d %H:%M:%S}, "
        f"last {from_ms(video.last_start_ms or 0):%m-%d %H:%M:%S}: "
        f"{totals_model.requests} requests ({operations(totals_model)}), "
        f"{totals_model.read_units or 0:.1f} RCU, {wall_ms(totals_model).splitlines()[0]} ms"
    )
    nonstop_model = answers.nonstop_model
    for question, requests, detail, bound in [
        ("a month calendar", answers.calendar_model.requests, "", REQUEST_BOUND),
        ("the ranges of one day", answers.ranges_model.requests, "", REQUEST_BOUND),
        (
            "the ranges of a non-stop day",
            nonstop_model.requests,
            f" ({operations(nonstop_model)})",
            REQUEST_BOUND,
        ),
        (
            "a device's totals",
            totals_model.requests,
            f" ({operations(totals_model)})",
            TOTALS_BOUND,
        ),
    ]:
        met = requests <= bound
        console.print(
            f"docs/read-model.md bound, {question} <= {bound} DynamoDB requests: "
            f"{requests}{detail} -> " + ("[bold green]MET[/]" if met else "[bold red]NOT MET[/]")
        )
    return rows


def _print_notes(
    console: Console,
    s3: Any,
    world: World,
    answers: Answers,
    asked: Questions,
    listing_check: tuple[int, float, float],
    listing_window: int,
) -> None:
    """How the figures were made: the world, both sides, what was checked."""
    ranges_model, ranges_listing = answers.ranges_model, answers.ranges_listing
    month_starts = local_day_starts(YEAR, MONTH, asked.tz)
    local_first = from_ms(month_starts[0])
    body_sizes = [len(s.body) for s in world.segments]
    compared, slow_ms, fast_ms = listing_check
    first_hour = month_starts[0] - MAX_VIDEO_MS
    calendar_prefixes = Listing(s3, BUCKET, DEVICE).prefixes(
        first_hour - first_hour % HOUR_MS, month_starts[-1] + (-month_starts[-1] % HOUR_MS)
    )
    notes = [
        f"World: {DEVICE}, {world.days} days from {FIRST_DAY:%Y-%m-%d} 00:00 UTC of back-to-back "
        f"{SEGMENT_MS // 1000} s segments, a 5-minute outage every day at a random time "
        f"(restart at a random millisecond): {len(world.segments):,} segments; outages e.g. at "
        + ", ".join(f"{from_ms(o):%d %H:%M:%S}" for o in world.outages[:3])
        + f". Tiny object bodies ({min(body_sizes)}-{max(body_sizes)} bytes): the "
        "calendar's bytes are those sizes.",
        "Both sides run in this process on this machine: DynamoDB Local (a JVM on loopback) "
        "and moto (in-process, S3 requests serialized to XML and parsed by botocore). "
        "Compare the columns, not the absolute milliseconds: on AWS every request is a "
        "network round trip, and the pages of one S3 prefix are sequential (each needs the "
        "previous page's continuation token).",
        f"Read model: Queries from build_api_services (the API's code), clock fixed at "
        f"{NOW:%Y-%m-%d} so the freshness listing is not used (S3 requests during the "
        "read-model runs: 0, checked); the serving generation was read once before. "
        "Requests: botocore before-call hook; RCU: bench/capacity.py (Query = ceil(bytes "
        "returned / 4 KB), halved for eventually consistent reads).",
        f"Read model ranges: {ranges_model.requests} Query request(s) of the video bucket "
        "items' hour coverage, the day's hours and a day either side, followed further "
        "while a range runs on (Queries.ranges, query/ranges.py). The S3 listing reads the "
        "day, then follows the ranges that cross midnight back and forth by a day until a gap "
        f"ends them: {listing_window} of its {ranges_listing.requests} LIST requests are the "
        "day itself.",
        f"S3 listing, calendar: prefixes listed (hour prefixes of the day before the local "
        f"month, which starts {local_first:%Y-%m-%d %H:%M} UTC; then the month prefix): "
        f"{len(calendar_prefixes)} prefixes, "
        + ", ".join(p.removeprefix(f"v1/{KIND}/{DEVICE}/") for p in calendar_prefixes[:4])
        + ("..." if len(calendar_prefixes) > 4 else "")
        + "; 1,000 keys a page. Keys parsed by a regular expression of docs/keys.md (not the "
        "product's parser); answer computed in Python. Answers checked equal to the read "
        "model's, and the ranges also to worlds.reference_projection.ranges of the whole "
        "bucket.",
        f"moto's own list_objects_v2 copies and sorts all {len(world.segments):,} keys of "
        f"the bucket on every page ({slow_ms:,.0f} ms a page here, an emulator artifact S3 "
        "does not have); the listing ran with the same moto code over a sorted index of the "
        f"key names ({fast_ms:,.2f} ms a page in the backend), identical on the {compared} "
        "pages compared. Objects were put with moto's backend put_object (boto3 PutObject "
        "through moto runs ~1,000/s here); the whole bucket was checked equal to the listing "
        "the read model was projected from, and one hour prefix listed through boto3.",
        f"Wall times: median of {RUNS} runs (of {MIN_RUNS} when these took over "
        f"{RUN_BUDGET_S:.0f} s), after one unmeasured read-model run; the listing's time "
        "includes parsing the keys and computing the answer. The Python heap holding the world "
        "(moto's objects, the projection) is frozen (gc.freeze) and collected before each run, "
        "so the cyclic garbage collector does not rescan it inside a timed run. (server): from "
        "a request's before-send to its before-parse botocore event, i.e. moto's in-process "
        "S3 emulation for the listing and the loopback round trip into DynamoDB Local for the "
        "read model; the rest is the client: botocore parsing the responses (XML / JSON) and "
        "the answer's computation.",
    ]
    console.print("Notes:")
    for note in notes:
        console.print(f"  - {note}")
