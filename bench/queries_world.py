"""The world of the queries benchmark (bench/queries.py): one camera's month of 10 s video
segments with a daily outage, its objects in a moto bucket and the independent projection
of their listing as read-model items.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from boto3.dynamodb.types import TypeSerializer
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.s3.models import S3Backend, s3_backends

from bench.context import BenchmarkFailed
from video_index.core.keys import MAX_DURATION_MS, format_start, segment_id
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from worlds.read_model_view import stored
from worlds.reference_projection import RefModel, project, with_aggregates

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
