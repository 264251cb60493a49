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
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Final

from bench import child
from bench.context import BenchContext, BenchmarkFailed
from bench.fleet_report import report
from bench.reconcile_setup import S3Server

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
    return child.run_child("bench.fleet_child", mode, args, timeout_s=CHILD_TIMEOUT_S)


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
    report(
        console, rows, DEVICES * DAYS, total_bytes, children, reducers, scan, map_wall, reduce_wall
    )
