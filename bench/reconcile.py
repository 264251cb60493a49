"""Reconcile (docs/operations.md): rows/s, peak memory vs a bare pyarrow read, requests per object.

A world of N 10 s video segments over 200 devices × 30 UTC days (6,000 partitions,
N/6,000 each; :mod:`bench.reconcile_world`) is written as S3 Inventory reports, CSV
(gzip) and Parquet, five data files each, in the real layout
(``worlds.inventory_fixtures.write_inventory_stream``, streamed from a generator). The
read model of the same world is loaded directly with ``BatchWriteItem`` into a table
on DynamoDB Local, with 0.1 % of the partitions (6) drifted: lost events, a ghost
entry, deleted items with a bent bucket figure.

Each measured run is a separate process (:mod:`bench.reconcile_child`) so that its
peak RSS is its own: a bare pyarrow read of the report's data files, then the
product's reconcile on the same report (``Ops.objects`` → ``Reconciler.plan`` →
``Reconciler.repair`` of the partitions that differ), with every DynamoDB and S3
request counted on the clients. After each reconcile the drifted partitions must be
exactly the projection of S3 again, and nothing else may have differed; otherwise
the benchmark fails.

S3 is moto, run as a server inside this process (``ThreadedMotoServer``) so that the
measured processes reach the same bucket. DynamoDB is moto's server (the bench's shared
endpoint), but the read model's Scan is answered by
:class:`bench.reconcile_replay.ScanReplay` from the same items at every size (moto loads
and scans only a few thousand items/s, and a 1 MB Scan page of 20,000 rows outlasts the
client's read timeout); every other request still goes to moto, which holds the
partitions reconcile reads and repairs. Set ``BENCH_RECONCILE_REAL_DYNAMODB=1`` to load
every size whole and scan it there.

Reconcile runs as deployed: with a holds table (the retention census of
:mod:`bench.reconcile_census`, judged at a fixed instant) and with the table's stream
delivered to the consumer whenever its barrier waits (the mend of a drifted bucket).
"""

from __future__ import annotations

import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import boto3

from bench.context import BenchContext, BenchmarkFailed
from bench.reconcile_census import NOW, expected_census, write_holds
from bench.reconcile_replay import ScanReplay, page_count
from bench.reconcile_report import report_results
from bench.reconcile_setup import (
    CREATED,
    DEST_BUCKET,
    ENV_REAL_DYNAMODB,
    FORMATS,
    FULL_SIZES,
    QUICK_SIZES,
    REAL_DYNAMODB_MAX,
    REGION,
    ROWS_PER_FILE,
    Run,
    S3Server,
    load_items,
    repaired_problems,
    restore_drift,
    run_child,
)
from bench.reconcile_world import (
    World,
    partition_of,
)
from video_index.core.table_schema import create_tables
from worlds.inventory_fixtures import write_inventory_stream

# -- one world ----------------------------------------------------------------------------


def real_dynamodb(rows: int) -> bool:
    return rows <= REAL_DYNAMODB_MAX or os.environ.get(ENV_REAL_DYNAMODB, "") not in ("", "0")


def put_resident_objects(s3: Any, bucket: str, world: World) -> int:
    segments = [seg for number in world.resident for seg in world.segments(number)]
    with ThreadPoolExecutor(8) as pool:
        puts = [pool.submit(s3.put_object, Bucket=bucket, Key=s.key, Body=s.body) for s in segments]
        for put in puts:
            put.result()
    return len(segments)


def check_run(world: World, result: dict[str, Any], census: tuple[int, int]) -> list[str]:
    report = result["report"]
    expected = world.expected_repairs()
    differing = {tuple(sorted(p.items())) for p in result["differing"]}
    drifted = {tuple(sorted(partition_of(n).as_dict().items())) for n in world.drifted}
    checks = [
        ("rows read", result["rows"], world.rows),
        ("objects seen", report["objects_seen"], world.rows),
        ("invalid keys", report["invalid_keys"], 0),
        ("refusal", report["refusal"], None),
        ("partitions differing are the drifted ones", differing == drifted, True),
        ("partitions repaired", report["partitions_repaired"], len(world.drifted)),
        ("entries added", report["entries_added"], expected["added"]),
        ("entries removed", report["entries_removed"], expected["removed"]),
        ("entries fixed", report["entries_fixed"], 0),
        (
            "past retention: held, overdue",
            (report["past_retention_held"], report["past_retention_overdue"]),
            census,
        ),
    ]
    return [
        f"{name}: {found!r}, expected {want!r}" for name, found, want in checks if found != want
    ]


def _bucket_and_reports(s3: Any, bucket: str, world: World, rows: int, log: Any) -> dict[str, str]:
    """The world's resident objects in ``bucket`` and its inventory report in every format:
    format -> manifest URI."""
    s3.create_bucket(Bucket=bucket)
    began = time.perf_counter()
    objects = put_resident_objects(s3, bucket, world)
    manifests: dict[str, str] = {}
    for fmt in FORMATS:
        manifests[fmt] = write_inventory_stream(
            s3,
            dest_bucket=DEST_BUCKET,
            prefix=f"inventory-{rows}",
            source_bucket=bucket,
            config_id=f"all-objects-{fmt.lower()}",
            objects=world.inventory_rows(),
            fmt=fmt,
            created=CREATED,
            rows_per_file=ROWS_PER_FILE,
        )
    log(
        f"{rows:,} rows: {objects:,} real objects in the bucket, reports written "
        f"({time.perf_counter() - began:.0f} s)"
    )
    return manifests


def measure_world(
    context: BenchContext, s3_server: S3Server, rows: int, log: Any
) -> tuple[list[Run], dict[str, Any]]:
    world = World(rows)
    problems = world.self_check()
    if problems:
        raise BenchmarkFailed("; ".join(problems))
    bucket = f"bench-videos-{rows}"
    manifests = _bucket_and_reports(s3_server.client(), bucket, world, rows, log)

    dynamodb = context.dynamodb_server()
    admin = boto3.client("dynamodb", endpoint_url=dynamodb.endpoint, region_name=REGION)
    table = f"bench-reconcile-{rows}-{uuid.uuid4().hex[:6]}"
    create_tables(admin, table)
    holds_table = f"{table}-holds"
    write_holds(admin, holds_table)
    census = expected_census(world)
    real = real_dynamodb(rows)
    began = time.perf_counter()
    if real:
        loaded = load_items(dynamodb.endpoint, table, world.read_model_items())
    else:
        loaded = load_items(dynamodb.endpoint, table, world.read_model_items(world.resident))
    load_seconds = time.perf_counter() - began
    log(
        f"{rows:,} rows: {loaded:,} read-model items loaded into DynamoDB Local "
        f"({load_seconds:.0f} s, {loaded / load_seconds:,.0f} items/s)"
    )
    pages, table_bytes = page_count(world.read_model_items())
    info = {
        "rows": rows,
        "loaded": loaded,
        "load_seconds": load_seconds,
        "real": real,
        "table_bytes": table_bytes,
        "modelled_pages": pages,
    }

    runs: list[Run] = []
    with ExitStack() as stack:
        stack.callback(admin.delete_table, TableName=table)
        stack.callback(admin.delete_table, TableName=holds_table)
        endpoint = dynamodb.endpoint
        if not real:
            replay = ScanReplay(dynamodb.endpoint, table, world.read_model_items)
            endpoint = stack.enter_context(replay).endpoint
        for fmt in FORMATS:
            common = {"s3_endpoint": s3_server.endpoint, "manifest": manifests[fmt]}
            bare = run_child("bare", common)
            restore_drift(admin, dynamodb.endpoint, table, world)
            result = run_child(
                "reconcile",
                {
                    **common,
                    "dynamodb_endpoint": endpoint,
                    "streams_endpoint": dynamodb.endpoint,
                    "table": table,
                    "holds_table": holds_table,
                    "now": NOW.timestamp(),
                    "bucket": bucket,
                },
            )
            failures = check_run(world, result, census) + repaired_problems(admin, table, world)
            if failures:
                raise BenchmarkFailed(f"{fmt}, {rows:,} rows: " + "; ".join(failures))
            scans = result["dynamodb"].get("Scan", 0)
            if not real and scans != pages:
                raise BenchmarkFailed(f"{fmt}, {rows:,} rows: {scans} Scan pages, not {pages}")
            runs.append(Run(fmt, rows, "DDB Local" if real else "replayed", bare, result))
            log(
                f"{rows:,} rows, {fmt}: bare {bare['seconds']:.1f} s, reconcile "
                f"{result['seconds']:.1f} s (inventory {result['inventory_seconds']:.1f} s)"
            )
    return runs, info


def reconcile_benchmark(context: BenchContext) -> None:
    console = context.console
    sizes = QUICK_SIZES if context.quick else FULL_SIZES
    console.rule("Reconcile: inventory pass vs bare pyarrow, requests per object")

    def log(message: str) -> None:
        console.print(f"[dim]{message}[/]")

    runs: list[Run] = []
    worlds: list[dict[str, Any]] = []
    with S3Server() as s3_server:
        s3_server.client().create_bucket(Bucket=DEST_BUCKET)
        for rows in sizes:
            world_runs, info = measure_world(context, s3_server, rows, log)
            runs.extend(world_runs)
            worlds.append(info)
    report_results(context, runs, worlds)
