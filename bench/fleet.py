"""Fleet simulation: the distributed reconcile plan over a large inventory, children as
separate processes, extrapolated to a fleet of 2.6 billion objects (docs/operations.md).

A report of N rows (10 million; ``--quick``: 500,000) of 10 s video segments of 1,000
cameras over 30 UTC days (30,000 partitions; rows shuffled, so every data file holds
every partition, the worst case for partials) is written as gzip CSV data files into S3
(moto in server mode), each the size the product's planner puts in one unit. The
product plans it (:func:`video_index.ops.planning.inventory_units`), then every unit
runs as its own process, at most ``CONCURRENCY`` at a time (like the Distributed Map's
children), doing exactly what the ``fingerprint-units`` step does; then each reduce
shard runs as its own process (``fingerprint-reduce``). Per child: seconds and peak RSS.

The read model's side is measured per item (:mod:`bench.fleet_child` ``scan``: Scan
pages parsed by botocore and fingerprinted by the product) and extrapolated with an
assumed service latency per 1 MB page. The extrapolation to 2.6 billion objects uses
the product's default sizing (:class:`~video_index.ops.planning.Sizing`) and lists its
assumptions with the figures.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Final

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from bench.reconcile_setup import ROOT, S3Server

FULL_ROWS: Final = 10_000_000
QUICK_ROWS: Final = 500_000
DEVICES: Final = 1_000
DAYS: Final = 30
FILES_FULL: Final = 40
FILES_QUICK: Final = 8
#: Children at a time here (this machine has 2 cores); the Distributed Map's are 100.
CONCURRENCY: Final = 2
SHARDS: Final = 4
SCAN_ROWS_FULL: Final = 200_000
SCAN_ROWS_QUICK: Final = 50_000
SOURCE: Final = "fleet-videos"
REPORTS: Final = "fleet-reports"
FIRST_DAY_MS: Final = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp() * 1000)
CHILD_TIMEOUT_S: Final = 1_800

# -- the extrapolation's assumptions --------------------------------------------------------
FLEET_OBJECTS: Final = 2_600_000_000
FLEET_PARTITIONS: Final = 10_000 * 30  # 10,000 cameras x 30 days, one kind
#: Bytes DynamoDB stores per object: a segment item (~190 B) + its share of an hour item.
ITEM_BYTES: Final = 200
#: DynamoDB's time to answer one 1 MB Scan page (not measured here).
PAGE_LATENCY_S: Final = 0.05
DEFAULT_CONCURRENCY: Final = 100
#: A Lambda's download rate from S3 in the same region (not measured here).
DOWNLOAD_BYTES_PER_S: Final = 100 * 2**20
LAMBDA_GB: Final = 1769 / 1024
#: us-east-1 list prices (arm64 Lambda, Standard workflows, S3 Standard, on-demand RRU).
PRICE_GB_SECOND: Final = 0.0000133334
PRICE_LAMBDA_REQUEST: Final = 0.20 / 1e6
PRICE_TRANSITION: Final = 0.025 / 1000
TRANSITIONS_PER_CHILD: Final = 3
PRICE_S3_PUT: Final = 0.005 / 1000
PRICE_S3_GET: Final = 0.0004 / 1000
PRICE_RRU: Final = 0.125 / 1e6


def _keys_table(rows: int, seed: int) -> Any:
    """``rows`` inventory rows (Bucket, Key, Size, LastModifiedDate, ETag), shuffled."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    device = rng.integers(0, DEVICES, rows)
    day = rng.integers(0, DAYS, rows)
    slot = rng.integers(0, 8_640, rows)
    start = FIRST_DAY_MS + day * 86_400_000 + slot * 10_000
    # Whole seconds: strftime's %S prints a fraction for finer units.
    stamps = pa.array((start // 1000).astype("datetime64[s]"))
    ids = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 10**15, rows)), pa.string()), 16, "0")
    devices = pc.utf8_lpad(pc.cast(pa.array(device), pa.string()), 5, "0")
    key = pc.binary_join_element_wise(
        "v1/video/cam-",
        devices,
        "/",
        pc.strftime(stamps, format="%Y/%m/%d/%H"),
        "/",
        pc.strftime(stamps, format="%Y%m%dT%H%M%S"),
        ".000Z_10000_",
        ids,
        ".mp4",
        "",
    )
    return pa.table(
        {
            "Bucket": pa.array([SOURCE] * rows),
            "Key": key,
            "Size": pa.array(rng.integers(1_000_000, 4_000_000, rows)),
            "LastModifiedDate": pc.strftime(stamps, format="%Y-%m-%dT%H:%M:%S.000Z"),
            "ETag": pc.binary_join_element_wise(ids, ids, ""),
        }
    )


def write_report(s3: Any, rows: int, files: int, log: Any) -> tuple[str, int]:
    """The report's data files (gzip CSV, no header, every field quoted) and manifest."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    entries = []
    total = 0
    per_file = rows // files
    for number in range(files):
        table = _keys_table(per_file, number)
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "gzip") as gz:
            pa_csv.write_csv(
                table,
                gz,
                write_options=pa_csv.WriteOptions(include_header=False, quoting_style="all_valid"),
            )
        body = sink.getvalue().to_pybytes()
        key = f"inventory/{SOURCE}/fleet/data/{number:04d}.csv.gz"
        s3.put_object(Bucket=REPORTS, Key=key, Body=body)
        entries.append(
            {
                "key": key,
                "size": len(body),
                "MD5checksum": hashlib.md5(body, usedforsecurity=False).hexdigest(),
            }
        )
        total += len(body)
    manifest = {
        "sourceBucket": SOURCE,
        "destinationBucket": f"arn:aws:s3:::{REPORTS}",
        "version": "2016-11-30",
        "creationTimestamp": str(FIRST_DAY_MS + DAYS * 86_400_000),
        "fileFormat": "CSV",
        "fileSchema": "Bucket, Key, Size, LastModifiedDate, ETag",
        "files": entries,
    }
    key = f"inventory/{SOURCE}/fleet/2026-12-01T01-00Z/manifest.json"
    s3.put_object(Bucket=REPORTS, Key=key, Body=json.dumps(manifest).encode())
    log(
        f"{rows:,} rows in {files} gzip CSV files, {total / 1e6:,.0f} MB ({total / rows:.1f} B/row)"
    )
    return f"s3://{REPORTS}/{key}", total


def run_child(mode: str, args: dict[str, Any]) -> dict[str, Any]:
    handle, out = tempfile.mkstemp(prefix=f"fleet-{mode}-", suffix=".json")
    os.close(handle)
    try:
        # Through a shell (see bench.reconcile.run_child): its own peak RSS.
        completed = subprocess.run(
            [
                "/bin/sh",
                "-c",
                '"$@"; exit $?',
                "sh",
                sys.executable,
                "-m",
                "bench.fleet_child",
                mode,
                json.dumps({**args, "out": out}),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
        if completed.returncode != 0:
            raise BenchmarkFailed(f"fleet {mode} child failed: {completed.stderr.strip()[-2000:]}")
        with open(out, encoding="utf-8") as result:
            loaded: dict[str, Any] = json.load(result)
            return loaded
    finally:
        os.unlink(out)


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def fleet_benchmark(context: BenchContext) -> None:
    from video_index.ops.inventory import read_manifest
    from video_index.ops.payloads import UnitBatchInput
    from video_index.ops.planning import Sizing, inventory_units

    console = context.console
    rows = QUICK_ROWS if context.quick else FULL_ROWS
    files = FILES_QUICK if context.quick else FILES_FULL
    console.rule(f"Fleet simulation: the distributed plan over {rows:,} inventory rows")

    def log(message: str) -> None:
        console.print(f"[dim]{message}[/]")

    with S3Server() as server:
        s3 = server.client()
        for bucket in (SOURCE, REPORTS):
            s3.create_bucket(Bucket=bucket)
        began = time.perf_counter()
        manifest_uri, total_bytes = write_report(s3, rows, files, log)
        log(f"report written in {time.perf_counter() - began:.0f} s")
        manifest = read_manifest(s3, manifest_uri)
        # One data file per unit, as the default sizing does for AWS-sized files.
        largest = max(f.size or 0 for f in manifest.files)
        units = inventory_units(manifest, Sizing(unit_bytes=largest))
        folder = "reconcile/fleet/"
        run = UnitBatchInput(folder=folder, manifest=manifest_uri, shard_count=SHARDS)
        common = {"s3_endpoint": server.endpoint, "bucket": SOURCE, "reports": REPORTS}
        began = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            children = list(
                pool.map(
                    lambda u: run_child("unit", {**common, "unit": u.dump(), "run": run.dump()}),
                    units,
                )
            )
        map_wall = time.perf_counter() - began
        began = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            reducers = list(
                pool.map(
                    lambda shard: run_child(
                        "reduce",
                        {**common, "folder": folder, "shard": shard, "unit_count": len(units)},
                    ),
                    range(SHARDS),
                )
            )
        reduce_wall = time.perf_counter() - began
    seen = sum(c["rows"] for c in children)
    partitions = sum(r["with_objects"] for r in reducers)
    if seen != rows or partitions != DEVICES * DAYS:
        raise BenchmarkFailed(
            f"the map saw {seen:,} rows of {rows:,}, the reduce {partitions:,} partitions "
            f"of {DEVICES * DAYS:,}"
        )
    scan = run_child("scan", {"rows": SCAN_ROWS_QUICK if context.quick else SCAN_ROWS_FULL})
    _report(console, rows, total_bytes, children, reducers, scan, map_wall, reduce_wall)


def _report(
    console: Any,
    rows: int,
    total_bytes: int,
    children: list[dict[str, Any]],
    reducers: list[dict[str, Any]],
    scan: dict[str, Any],
    map_wall: float,
    reduce_wall: float,
) -> None:
    from video_index.ops.planning import Sizing, scan_segments, shard_count

    mb = 1024.0
    table = Table(
        title="Children as separate processes (min / median / max; rows/s per CPU second)",
        title_justify="left",
    )
    for header in (
        "phase",
        "children",
        "rows each",
        "seconds",
        "CPU seconds",
        "rows/s",
        "peak RSS MB",
        "wall s",
    ):
        table.add_column(header, justify="left" if header == "phase" else "right")
    rates = [c["rows"] / c["cpu_seconds"] for c in children]
    table.add_row(
        "fingerprint map",
        str(len(children)),
        f"{children[0]['rows']:,}",
        _spread([c["seconds"] for c in children]),
        _spread([c["cpu_seconds"] for c in children]),
        _spread(rates),
        _spread([c["peak_rss_kb"] / mb for c in children]),
        f"{map_wall:.1f}",
    )
    table.add_row(
        "reduce map",
        str(len(reducers)),
        f"{len(children)} partials",
        _spread([r["seconds"] for r in reducers]),
        _spread([r["cpu_seconds"] for r in reducers]),
        "",
        _spread([r["peak_rss_kb"] / mb for r in reducers]),
        f"{reduce_wall:.1f}",
    )
    scan_rate = scan["items"] / scan["cpu_seconds"]
    table.add_row(
        "Scan segment ¹",
        "1",
        f"{scan['items']:,} items",
        f"{scan['seconds']:.1f}",
        f"{scan['cpu_seconds']:.1f}",
        f"{scan_rate:,.0f}",
        f"{scan['peak_rss_kb'] / mb:,.0f}",
        "",
    )
    console.print(table)
    console.print(
        "  ¹ the client side of one Scan child: 1 MB pages parsed by botocore, fingerprinted "
        "by the product; the service's time per page is an assumption below.\n"
        "  Child times for the extrapolation are CPU seconds: this machine is shared (its "
        "wall-clock seconds depend on the load), a Lambda child has its vCPU to itself; the "
        "GETs and PUTs of a child are in its wall time, not in its CPU time, and are small "
        "next to it in AWS (a 256 MiB data file in ~2 s at Lambda's ~150 MB/s)."
    )

    # -- extrapolation ------------------------------------------------------------------------
    sizing = Sizing()
    bytes_per_row = total_bytes / rows
    rate = statistics.median(rates)
    unit_rows = sizing.unit_bytes / bytes_per_row
    units = math.ceil(FLEET_OBJECTS / unit_rows)
    unit_seconds = unit_rows / rate + sizing.unit_bytes / DOWNLOAD_BYTES_PER_S
    segments = scan_segments(FLEET_OBJECTS * ITEM_BYTES, sizing)
    segment_items = FLEET_OBJECTS / segments
    segment_seconds = (
        segment_items / scan_rate + segment_items * ITEM_BYTES / 2**20 * PAGE_LATENCY_S
    )
    shards = shard_count(units + segments, FLEET_PARTITIONS, sizing)
    measured_reduce_rows = len(children) * DEVICES * DAYS / len(reducers)
    reduce_rows = (units + segments) * FLEET_PARTITIONS / shards
    reduce_seconds = statistics.median(r["cpu_seconds"] for r in reducers) * (
        reduce_rows / measured_reduce_rows
    )
    # Each map keeps DEFAULT_CONCURRENCY children busy; it lasts at least its longest child.
    map_seconds = units * unit_seconds + segments * segment_seconds
    wall = max(max(unit_seconds, segment_seconds), map_seconds / DEFAULT_CONCURRENCY) + max(
        reduce_seconds, shards * reduce_seconds / DEFAULT_CONCURRENCY
    )
    child_seconds = units * unit_seconds + segments * segment_seconds + shards * reduce_seconds
    gb_seconds = child_seconds * LAMBDA_GB
    invocations = units + segments + shards + 4
    lambda_cost = gb_seconds * PRICE_GB_SECOND + invocations * PRICE_LAMBDA_REQUEST
    transitions = (units + segments + shards) * TRANSITIONS_PER_CHILD + 20
    s3_puts = (units + segments) * shards
    s3_gets = units + (units + segments) * shards
    s3_cost = s3_puts * PRICE_S3_PUT + s3_gets * PRICE_S3_GET
    rru = FLEET_OBJECTS * ITEM_BYTES / 4096 * 0.5
    lines = [
        f"Measured: {rows:,} rows, {bytes_per_row:.1f} B/row gzip CSV; a map child "
        f"fingerprints {rate:,.0f} rows/s (median; GET, MD5, parse, hash, partials to S3); "
        f"peak RSS {max(c['peak_rss_kb'] for c in children) / mb:,.0f} MB on the largest "
        f"file ({max(c['rows'] for c in children):,} rows); a reducer merges "
        f"{measured_reduce_rows:,.0f} partial rows in "
        f"{statistics.median(r['cpu_seconds'] for r in reducers):.1f} CPU s; a Scan child's client "
        f"side {scan_rate:,.0f} items/s.",
        f"2.6 billion objects at the default sizing: {units:,} inventory units of "
        f"{unit_rows / 1e6:,.1f} M rows ({sizing.unit_bytes >> 20} MiB) at "
        f"{unit_seconds:,.0f} s each (with its download at {DOWNLOAD_BYTES_PER_S >> 20} MB/s "
        f"assumed); {segments:,} Scan segments of "
        f"{segment_items / 1e6:,.1f} M items at {segment_seconds:,.0f} s each (client "
        f"{segment_items / scan_rate:,.0f} s + {PAGE_LATENCY_S * 1000:.0f} ms per 1 MB page "
        f"assumed); {shards} reduce shards of {reduce_rows / 1e6:,.1f} M partial rows at "
        f"{reduce_seconds:,.0f} s each (scaled from the measured reducer). Longest child: "
        f"{max(unit_seconds, segment_seconds, reduce_seconds):,.0f} s of Lambda's 900 s.",
        f"Wall time at the default concurrency ({DEFAULT_CONCURRENCY} children at a time): "
        f"the map {map_seconds / DEFAULT_CONCURRENCY / 60:,.1f} min + the reduce = "
        f"{wall / 60:,.1f} min (plus Step Functions' start-up of each child, about a second); "
        f"the Scan is {segments * segment_seconds / map_seconds:.0%} of the map's work.",
        f"Per run: {gb_seconds:,.0f} Lambda GB-s ({LAMBDA_GB:.2f} GB, arm64) + "
        f"{invocations:,} requests = ${lambda_cost:,.2f}; {transitions:,} state transitions "
        f"= ${transitions * PRICE_TRANSITION:,.2f}; S3 {s3_puts:,} PUT + {s3_gets:,} GET "
        f"(partials, data files) = ${s3_cost:,.2f}; the Scan {rru / 1e6:,.0f} M read units "
        f"(eventually consistent, {ITEM_BYTES} B per object) = ${rru * PRICE_RRU:,.2f} "
        "on demand. (S3 Inventory itself: $0.0025 per million objects listed = "
        f"${FLEET_OBJECTS / 1e6 * 0.0025:,.2f}.)",
        f"Assumptions: {FLEET_PARTITIONS:,} partitions (10,000 cameras x 30 days); every "
        "data file holds rows of every partition (unsorted report: the largest partials); "
        "rows/s of a 1,769 MB (one vCPU) Lambda equal to one core here; data files of "
        "AWS-sized rows compress like these.",
    ]
    for line in lines:
        console.print(f"  - {line}")
