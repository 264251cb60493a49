"""Calendar and ranges (docs/read-model.md): the read model vs answering from an S3 listing.

One camera, ``cam-001``, records back-to-back 10 s video segments through
November 2026, with a 5-minute outage at a random time every day. The same
objects are in a moto bucket and, as the independent projection of their
listing (``tests.reference_projection``), in a read-model table on DynamoDB
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
each kind's totals (``tests.reference_projection.with_aggregates``), so the
questions can be answered from segment items or from the stored aggregates,
whichever the query layer reads.
"""

from __future__ import annotations

import bisect
import calendar as calendar_module
import datetime as dt
import gc
import hashlib
import random
import re
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Final, TypeVar
from unittest.mock import patch
from zoneinfo import ZoneInfo

import boto3
from boto3.dynamodb.types import TypeSerializer
from botocore.config import Config
from moto import mock_aws
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.s3.models import FakeDeleteMarker, S3Backend, s3_backends
from rich.table import Table

from bench.capacity import CapacityMeter, describe_shape
from bench.context import BenchContext, BenchmarkFailed
from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
from video_index.core.keys import MAX_DURATION_MS, format_start, segment_id
from video_index.core.ranges import merge_ranges
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS, Settings
from video_index.core.table_schema import create_tables
from video_index.query.calendar import CalendarDay
from video_index.query.entries import KindTotals
from video_index.query.queries import Queries
from video_index.query.service import build_api_services
from worlds.read_model_view import stored
from worlds.reference_projection import RefModel, project, with_aggregates
from worlds.reference_projection import ranges as reference_ranges
from worlds.tables import without_stream

DEVICE: Final = "cam-001"
KIND: Final = "video"
BUCKET: Final = "video-index-bench-queries"
REGION: Final = "us-east-1"
YEAR, MONTH = 2026, 11
ZONE: Final = "Europe/Berlin"
FIRST_DAY: Final = dt.datetime(YEAR, MONTH, 1, tzinfo=dt.UTC)
SEGMENT_MS: Final = 10_000
OUTAGE_MS: Final = 5 * 60_000
HOUR_MS: Final = 3_600_000
DAY_MS: Final = 24 * HOUR_MS
#: The longest video segment a key may name (docs/keys.md): how far back a listing must look.
MAX_VIDEO_MS: Final = MAX_DURATION_MS[KIND]
FULL_DAYS: Final = 30
QUICK_DAYS: Final = 5
#: The UTC day whose ranges are asked for (day of November), full and quick run.
RANGES_DAY: Final = {False: 15, True: 2}
#: A day without an outage (its range starts the day before and ends the day after).
NONSTOP_DAY: Final = {False: 20, True: 4}
#: After the month: the API's freshness listing (last 15 minutes) never applies.
NOW: Final = dt.datetime(2026, 12, 15, tzinfo=dt.UTC)
#: docs/read-model.md: a month calendar and the ranges of one day take at most this many requests.
REQUEST_BOUND: Final = 2
#: ...and a device's totals this many (one read of the device item).
TOTALS_BOUND: Final = 1
RUNS: Final = 5
#: ...but no more than MIN_RUNS of a question whose runs already took RUN_BUDGET_S (the
#: month's listing is ~260 sequential pages: tens of seconds a run here).
MIN_RUNS: Final = 3
RUN_BUDGET_S: Final = 60.0
LOAD_THREADS: Final = 4
SEED: Final = 20261101
#: DynamoDB Local keeps one database per access key (letters and digits only): all
#: clients of this benchmark use these.
ACCESS_KEY: Final = "benchqueries"
SECRET_KEY: Final = "bench"
#: List prices assumed (us-east-1, not fetched by this run; check the AWS pricing pages).
S3_LIST_USD_PER_1000: Final = 0.005
DDB_READ_USD_PER_MILLION: Final = 0.125

_serialize = TypeSerializer().serialize
T = TypeVar("T")


# -- the world ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    key: str
    start_ms: int
    body: bytes


def epoch_ms(moment: dt.datetime) -> int:
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(milliseconds=1)


def from_ms(millis: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=millis)


def camera_days(days: int, nonstop_day: int, seed: int = SEED) -> tuple[list[Segment], list[int]]:
    """Back-to-back 10 s segments from November 1st 00:00 UTC for ``days`` days; every day
    but ``nonstop_day`` a 5-minute outage at a random instant, after which the camera
    restarts at a random millisecond. Returns the segments and the outage starts (epoch ms)."""
    rng = random.Random(seed)
    first = epoch_ms(FIRST_DAY)
    end = first + days * DAY_MS
    drawn = [first + d * DAY_MS + rng.randrange(DAY_MS - OUTAGE_MS) for d in range(days)]
    outages = [o for d, o in enumerate(drawn) if d + 1 != nonstop_day]
    pending = list(reversed(outages))
    segments: list[Segment] = []
    t = first
    while t < end:
        if pending and t >= pending[-1]:
            pending.pop()
            t += OUTAGE_MS + rng.randrange(1000)
            continue
        start = from_ms(t)
        body = f"{DEVICE}/{t}/".encode() * rng.randint(1, 4)
        name = f"{format_start(start)}_{SEGMENT_MS}_"
        name += f"{segment_id(KIND, DEVICE, start, SEGMENT_MS, body)}.mp4"
        folders = f"{start.year:04d}/{start:%m/%d/%H}"
        segments.append(Segment(f"v1/{KIND}/{DEVICE}/{folders}/{name}", t, body))
        t += SEGMENT_MS
    return segments, outages


def read_model_items(model: RefModel) -> list[dict[str, Any]]:
    """The read model of the independent projection of a listing (generation 1), in wire
    shape, aggregates included: as ``tests/query/test_api_request_bounds.py`` loads it."""
    aggregated = with_aggregates(model, DEFAULT_GAP_TOLERANCE_MS)
    return [
        {name: _serialize(value) for name, value in item.items()} for item in stored(aggregated)
    ]


def batch_write(client: Any, table: str, items: list[dict[str, Any]], threads: int) -> None:
    def write(batch: list[dict[str, Any]]) -> None:
        requests = [{"PutRequest": {"Item": item}} for item in batch]
        while requests:
            response = client.batch_write_item(RequestItems={table: requests})
            requests = response.get("UnprocessedItems", {}).get(table, [])

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(write, (items[i : i + 25] for i in range(0, len(items), 25))))


# -- moto's listing, indexed ---------------------------------------------------------------


@contextmanager
def indexed_listing(bucket: Any) -> Iterator[Callable[..., Any]]:
    """moto's ``list_objects_v2`` answered from a sorted index of the bucket's key names.

    moto copies, filters and sorts every key of the bucket on every ListObjectsV2
    request (a page of 1,000 keys costs O(all keys)), an emulator artifact that
    would make each page of a 259,200-key bucket cost far more than the page
    itself. While active, requests on ``bucket`` without a delimiter are answered
    by bisecting a sorted list of its key names, with moto's own result and
    continuation-token code; the request/response path (HTTP, XML, botocore) is
    unchanged. Yields moto's original method, to check both give the same pages.
    The bucket must not change while this is active (checked by its key count).
    """
    original = S3Backend.list_objects_v2
    names = sorted(dict.keys(bucket.keys))

    def list_objects_v2(
        backend: S3Backend,
        bucket: Any,
        prefix: str | None,
        delimiter: str | None,
        continuation_token: str | None,
        start_after: str | None,
        max_keys: int,
    ) -> Any:
        if bucket is not indexed or delimiter or len(bucket.keys) != len(names):
            return original(
                backend,
                bucket=bucket,
                prefix=prefix,
                delimiter=delimiter,
                continuation_token=continuation_token,
                start_after=start_after,
                max_keys=max_keys,
            )
        prefix = prefix or ""
        position = bisect.bisect_left(names, prefix)
        if continuation_token or start_after:
            after = (
                backend._pagination_tokens.get(continuation_token)
                if continuation_token
                else start_after
            )
            position = max(position, bisect.bisect_right(names, after))
        keys: list[Any] = []
        while position < len(names) and len(keys) <= max_keys:
            name = names[position]
            if not name.startswith(prefix):
                break
            key = bucket.keys[name]
            if not isinstance(key, FakeDeleteMarker):
                keys.append(key)
            position += 1
        return backend._truncate_result(keys, max_keys)

    indexed = bucket
    with patch.object(S3Backend, "list_objects_v2", list_objects_v2):
        yield original


def check_indexed_listing(
    backend: S3Backend, bucket: Any, original: Callable[..., Any], prefixes: list[str]
) -> tuple[int, float, float]:
    """Pages from moto's own method and the indexed one must be identical: (pages compared,
    ms per page moto's way, ms per page indexed). Raises BenchmarkFailed otherwise."""
    slow: list[float] = []
    fast: list[float] = []
    compared = 0
    for prefix in prefixes:
        token: str | None = None
        for _ in range(2):  # the first two pages of each prefix
            arguments = {
                "bucket": bucket,
                "prefix": prefix,
                "delimiter": None,
                "continuation_token": token,
                "start_after": None,
                "max_keys": 1000,
            }
            began = time.perf_counter()
            want = original(backend, **arguments)
            slow.append(time.perf_counter() - began)
            began = time.perf_counter()
            got = backend.list_objects_v2(**arguments)
            fast.append(time.perf_counter() - began)
            if [S3Backend._get_name(k) for k in want[0]] != [
                S3Backend._get_name(k) for k in got[0]
            ] or want[1:] != got[1:]:
                raise BenchmarkFailed(f"the indexed moto listing differs on prefix {prefix!r}")
            compared += 1
            token = want[2]
            if not token:
                break
    return compared, 1000 * statistics.median(slow), 1000 * statistics.median(fast)


# -- the baseline: answers from an S3 listing alone -----------------------------------------

_KEY: Final = re.compile(
    r"^v1/video/([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)/([0-9]{4})/([0-9]{2})/([0-9]{2})/"
    r"([0-9]{2})/(([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})\.([0-9]{3})Z)"
    r"_(0|[1-9][0-9]{0,8})_[a-z0-9]{1,64}\.(?:mp4|ts)$"
)


def parse_video_key(key: str) -> tuple[int, int] | None:
    """(start, end) epoch ms of a valid video key (docs/keys.md), None for anything else."""
    m = _KEY.match(key)
    if m is None:
        return None
    year, month, day, hour = m[2], m[3], m[4], m[5]
    if (year, month, day, hour) != (m[7], m[8], m[9], m[10]):
        return None  # folders disagree with the start
    duration = int(m[14])
    if not 1 <= duration <= MAX_VIDEO_MS:
        return None
    try:
        fields = (int(year), int(month), int(day), int(hour), int(m[11]), int(m[12]))
        dt.datetime(*fields)  # a real date and time
    except ValueError:
        return None
    start = calendar_module.timegm((*fields, 0, 0, 0)) * 1000 + int(m[13])
    return start, start + duration


class Listing:
    """What a client without an index does: list the key prefixes that can hold the answer.

    A span of UTC hours is covered with the coarsest prefixes the key layout
    offers: a month prefix when at least half of its hours are needed, else a
    day prefix when at least half of its hours are, else hour prefixes (a day
    of 10 s segments is 9 pages; an hour, one). Keys outside the span are dropped.
    """

    def __init__(self, s3: Any, bucket: str, device: str) -> None:
        self._paginator = s3.get_paginator("list_objects_v2")
        self._bucket = bucket
        self._base = f"v1/{KIND}/{device}/"

    def prefixes(self, first_hour_ms: int, end_hour_ms: int) -> list[str]:
        hours = [from_ms(h) for h in range(first_hour_ms, end_hour_ms, HOUR_MS)]
        out: list[str] = []
        for (year, month), in_month in groupby(hours, key=lambda h: (h.year, h.month)):
            month_hours = list(in_month)
            if 2 * len(month_hours) >= 24 * calendar_module.monthrange(year, month)[1]:
                out.append(f"{self._base}{year:04d}/{month:02d}/")
                continue
            for day, in_day in groupby(month_hours, key=lambda h: h.day):
                day_hours = list(in_day)
                if 2 * len(day_hours) >= 24:
                    out.append(f"{self._base}{year:04d}/{month:02d}/{day:02d}/")
                else:
                    out.extend(f"{self._base}{h.year:04d}/{h:%m/%d/%H}/" for h in day_hours)
        return out

    def segments(self, first_ms: int, end_ms: int) -> Iterator[tuple[int, int, int]]:
        """(start, end, size) of every video segment whose start is in ``[first_ms, end_ms)``."""
        first_hour = first_ms - first_ms % HOUR_MS
        end_hour = end_ms + (-end_ms % HOUR_MS)
        for prefix in self.prefixes(first_hour, end_hour):
            for page in self._paginator.paginate(Bucket=self._bucket, Prefix=prefix):
                for obj in page.get("Contents", ()):
                    parsed = parse_video_key(obj["Key"])
                    if parsed is not None and first_ms <= parsed[0] < end_ms:
                        yield parsed[0], parsed[1], int(obj["Size"])


def local_day_starts(year: int, month: int, tz: ZoneInfo) -> list[int]:
    """Epoch ms of local midnight of every day of the month and of the next month's first
    (the earlier instant when a midnight repeats; Europe/Berlin has neither case)."""
    days = calendar_module.monthrange(year, month)[1]
    dates = [dt.date(year, month, d) for d in range(1, days + 1)]
    dates.append(dates[-1] + dt.timedelta(days=1))
    return [epoch_ms(dt.datetime(d.year, d.month, d.day, tzinfo=tz)) for d in dates]


def calendar_by_listing(listing: Listing, year: int, month: int, tz: ZoneInfo) -> list[CalendarDay]:
    """docs/read-model.md calendar from the keys: a day has video when a segment interval intersects
    its local [00:00, 24:00); its figures count the segments that start in it."""
    starts = local_day_starts(year, month, tz)
    days = len(starts) - 1
    segments, sizes, video_ms = [0] * days, [0] * days, [0] * days
    has_video = [False] * days
    # a segment intersecting the month starts at most one (longest) segment before it
    for start, end, size in listing.segments(starts[0] - MAX_VIDEO_MS, starts[-1]):
        first = bisect.bisect_right(starts, start) - 1
        if 0 <= first < days:
            segments[first] += 1
            sizes[first] += size
            video_ms[first] += end - start
        last = bisect.bisect_right(starts, end - 1) - 1
        for day in range(max(first, 0), min(last, days - 1) + 1):
            has_video[day] = True
    return [
        CalendarDay(
            date=dt.date(year, month, i + 1),
            has_video=has_video[i],
            segments=segments[i],
            bytes=sizes[i],
            video_ms=video_ms[i],
        )
        for i in range(days)
    ]


def ranges_by_listing(
    listing: Listing, start_ms: int, end_ms: int, tolerance_ms: int
) -> list[tuple[int, int]]:
    """Whole continuous ranges intersecting ``[start_ms, end_ms)`` from the keys.

    Lists every segment that can touch the window (starts from one longest segment
    plus the tolerance before it), merges with the gap tolerance, and widens the
    listing by a UTC day on a side while a segment not yet listed could still
    extend the first or last range.
    """
    low = start_ms - tolerance_ms - MAX_VIDEO_MS
    low -= low % HOUR_MS
    high = end_ms + tolerance_ms
    high += -high % HOUR_MS
    spans = {(s, e) for s, e, _ in listing.segments(low, high)}
    while True:
        hits = [r for r in merge_ranges(spans, tolerance_ms) if r[0] < end_ms and r[1] > start_ms]
        if not hits:
            return []
        # unlisted segments start before `low` (end before low + MAX) or at/after `high`
        open_left = hits[0][0] - tolerance_ms - MAX_VIDEO_MS < low
        open_right = hits[-1][1] + tolerance_ms >= high
        if not (open_left or open_right):
            return hits
        if open_left:
            spans |= {(s, e) for s, e, _ in listing.segments(low - DAY_MS, low)}
            low -= DAY_MS
        if open_right:
            spans |= {(s, e) for s, e, _ in listing.segments(high, high + DAY_MS)}
            high += DAY_MS
        if high - low > 400 * DAY_MS:
            raise BenchmarkFailed("a range runs on for more than 400 days")


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


def _ratio(a: float, b: float) -> str:
    return f"{a / b:,.1f}x" if b else "-"


def _answer_of_calendar(days: list[CalendarDay]) -> str:
    with_video = sum(d.has_video for d in days)
    return f"{len(days)} days, {with_video} with video, {sum(d.segments for d in days):,} segments"


def _answer_of_ranges(ranges: list[tuple[int, int]]) -> str:
    shown = ", ".join(
        f"{from_ms(a):%m-%d %H:%M:%S}..{from_ms(b):%m-%d %H:%M:%S}" for a, b in ranges[:3]
    ) + (", ..." if len(ranges) > 3 else "")
    return f"{len(ranges)} ranges: {shown}"


def _operations(measured: Measured) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(measured.operations.items()))


def _ms(measured: Measured) -> str:
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
            _ms(model),
            f"{listing.requests:,}",
            _ms(listing),
            _ratio(listing.requests, model.requests),
            _ratio(listing.ms, model.ms),
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
            _ratio(listing_usd, model_usd),
        )
    return table


# -- the benchmark ---------------------------------------------------------------------------


@dataclass
class World:
    days: int
    segments: list[Segment]
    outages: list[int]
    #: what ListObjectsV2 returns for the bucket: Key, Size, ETag (checked against moto)
    listing: list[dict[str, Any]]
    model: RefModel


def build_world(days: int, nonstop_day: int) -> World:
    segments, outages = camera_days(days, nonstop_day)
    listing = [
        {"Key": s.key, "Size": len(s.body), "ETag": f'"{hashlib.md5(s.body).hexdigest()}"'}
        for s in segments
    ]
    model = with_aggregates(project(listing), DEFAULT_GAP_TOLERANCE_MS)
    return World(days, segments, outages, listing, model)


def put_into_moto(s3: Any, world: World) -> tuple[S3Backend, Any]:
    """Every object into the moto bucket with moto's own put_object (the code behind the
    PutObject API, without HTTP and XML); then the whole bucket, and one prefix listed
    through boto3, must equal the listing the read model was projected from."""
    s3.create_bucket(Bucket=BUCKET)
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    bucket = backend.get_bucket(BUCKET)
    for segment in world.segments:
        backend.put_object(BUCKET, segment.key, segment.body)
    stored = {name: (key.size, key.etag) for name, key in bucket.keys.items()}
    if stored != {o["Key"]: (o["Size"], o["ETag"]) for o in world.listing}:
        raise BenchmarkFailed("the moto bucket does not hold the objects of the read model")
    hour = world.segments[len(world.segments) // 2].key.rsplit("/", 1)[0] + "/"
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=hour).get("Contents", [])
    want = [o for o in world.listing if o["Key"].startswith(hour)]
    if [(o["Key"], o["Size"], o["ETag"]) for o in listed] != [
        (o["Key"], o["Size"], o["ETag"]) for o in want
    ]:
        raise BenchmarkFailed(f"moto lists {hour} differently from what was put")
    return backend, bucket


@contextmanager
def _no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def queries_benchmark(context: BenchContext) -> None:
    console = context.console
    days = QUICK_DAYS if context.quick else FULL_DAYS
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    console.rule(
        f"[bold]queries[/]: calendar and ranges of {DEVICE}, {days} days of "
        f"{SEGMENT_MS // 1000} s video segments, read model vs S3 listing ({label})"
    )
    server = context.dynamodb_local()
    with _no_gc():  # millions of objects that live on: no cycles to find, only rescans
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
        with _no_gc():
            batch_write(admin, table, items, LOAD_THREADS)
        item_count = len(items)
        del items
        load_s = time.perf_counter() - began
        with mock_aws():
            s3 = boto3.client("s3", region_name=REGION, config=S3_CONFIG)
            began = time.perf_counter()
            with _no_gc():
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
    ranges_day = RANGES_DAY[context.quick]
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
    s3_calls = Calls(s3, "s3")
    settings = Settings(bucket=BUCKET, table=table)
    clients = Clients(dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs", region_name=REGION))
    queries: Queries = build_api_services(settings, clients, clock=NOW.timestamp).queries
    queries.generation()  # warms the cached generation (one GetItem, not measured)
    tolerance = queries.gap_tolerance_ms
    if tolerance != DEFAULT_GAP_TOLERANCE_MS:
        raise BenchmarkFailed(f"the API's gap tolerance {tolerance} ms is not the world's")

    tz = ZoneInfo(ZONE)
    day_start = epoch_ms(dt.datetime(YEAR, MONTH, ranges_day, tzinfo=dt.UTC))
    day_end = day_start + DAY_MS
    nonstop_day = NONSTOP_DAY[context.quick]
    nonstop_start = epoch_ms(dt.datetime(YEAR, MONTH, nonstop_day, tzinfo=dt.UTC))
    nonstop_end = nonstop_start + DAY_MS

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
    calendar_listing = measure("calendar, S3 listing", listed_calendar, s3_calls)
    ranges_listing = measure("ranges, S3 listing", listed_ranges, s3_calls)
    nonstop_listing = measure("non-stop ranges, S3 listing", listed_nonstop, s3_calls)

    # honest comparison: both ways give the same answers, and the ranges are those
    # of the whole listing by the independent reference (tests.reference_projection)
    if calendar_model.answer != calendar_listing.answer:
        raise BenchmarkFailed(
            "calendars differ: "
            + "; ".join(
                f"{a} != {b}"
                for a, b in zip(calendar_model.answer, calendar_listing.answer, strict=True)
                if a != b
            )[:2000]
        )
    reference = [
        r
        for r in reference_ranges(world.model, DEVICE, tolerance)
        if r[0] < day_end and r[1] > day_start
    ]
    if not ranges_model.answer == ranges_listing.answer == reference:
        raise BenchmarkFailed(
            f"ranges differ: read model {ranges_model.answer}, listing "
            f"{ranges_listing.answer}, reference {reference}"
        )
    if not any(d.has_video for d in calendar_model.answer) or not ranges_model.answer:
        raise BenchmarkFailed("empty answers: nothing was compared")
    nonstop_reference = [
        r
        for r in reference_ranges(world.model, DEVICE, tolerance)
        if r[0] < nonstop_end and r[1] > nonstop_start
    ]
    if not nonstop_model.answer == nonstop_listing.answer == nonstop_reference:
        raise BenchmarkFailed(
            f"non-stop day's ranges differ: read model {nonstop_model.answer}, listing "
            f"{nonstop_listing.answer}, reference {nonstop_reference}"
        )
    if len(nonstop_reference) != 1 or not (
        nonstop_reference[0][0] < nonstop_start and nonstop_reference[0][1] > nonstop_end - 1000
    ):
        raise BenchmarkFailed(f"day {nonstop_day} is not one range across it: {nonstop_reference}")
    want_totals = {
        kind: KindTotals(*figures)
        for (device, kind), figures in world.model.totals.items()
        if device == DEVICE
    }
    if totals_model.answer != want_totals:
        raise BenchmarkFailed(f"totals {totals_model.answer} != the projection's {want_totals}")

    # where the listing's requests go: the day itself vs following ranges across midnight
    before = s3_calls.total
    low = day_start - tolerance - MAX_VIDEO_MS
    high = day_end + tolerance
    list(Listing(s3, BUCKET, DEVICE).segments(low - low % HOUR_MS, high + (-high % HOUR_MS)))
    listing_window = s3_calls.total - before

    month_starts = local_day_starts(YEAR, MONTH, tz)
    local_first = from_ms(month_starts[0])
    body_sizes = [len(s.body) for s in world.segments]
    rows = [
        (
            f"calendar {YEAR}-{MONTH:02d}, {ZONE}",
            _answer_of_calendar(calendar_model.answer),
            calendar_model,
            calendar_listing,
        ),
        (
            f"ranges {YEAR}-{MONTH:02d}-{ranges_day:02d} 00:00-24:00 UTC",
            _answer_of_ranges(ranges_model.answer),
            ranges_model,
            ranges_listing,
        ),
        (
            f"ranges {YEAR}-{MONTH:02d}-{nonstop_day:02d} (no outage that day)",
            _answer_of_ranges(nonstop_model.answer),
            nonstop_model,
            nonstop_listing,
        ),
    ]
    console.print(results_table(rows))
    console.print("Answers (equal both ways; the ranges also equal to the reference projection's):")
    for question, answer, _, _ in rows:
        console.print(f"  {question}: {answer}")
    video = totals_model.answer["video"]
    console.print(
        f"  totals of {DEVICE} (read model only; equal to the projection's): {video.segments:,} "
        f"segments, {video.bytes:,} B, {video.duration_ms:,} ms, first "
        f"{from_ms(video.first_start_ms or 0):%m-%d %H:%M:%S}, "
        f"last {from_ms(video.last_start_ms or 0):%m-%d %H:%M:%S}: "
        f"{totals_model.requests} requests ({_operations(totals_model)}), "
        f"{totals_model.read_units or 0:.1f} RCU, {_ms(totals_model).splitlines()[0]} ms"
    )
    bounds = [
        ("a month calendar", calendar_model.requests, ""),
        ("the ranges of one day", ranges_model.requests, ""),
        (
            "the ranges of a non-stop day",
            nonstop_model.requests,
            f" ({_operations(nonstop_model)})",
        ),
    ]
    for question, requests, detail, bound in [
        *((q, r, d, REQUEST_BOUND) for q, r, d in bounds),
        (
            "a device's totals",
            totals_model.requests,
            f" ({_operations(totals_model)})",
            TOTALS_BOUND,
        ),
    ]:
        met = requests <= bound
        console.print(
            f"docs/read-model.md bound, {question} <= {bound} DynamoDB requests: "
            f"{requests}{detail} -> " + ("[bold green]MET[/]" if met else "[bold red]NOT MET[/]")
        )
    console.print(cost_table(rows))

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
        "model's, and the ranges also to tests.reference_projection.ranges of the whole "
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
