"""What the fleet benchmark prints (bench/fleet.py): the measured children, and the fleet
(2.6 billion objects) extrapolated from them at the default sizing, with its assumptions.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Final

from rich.table import Table

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


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def report(
    console: Any,
    rows: int,
    partitions: int,
    total_bytes: int,
    children: list[dict[str, Any]],
    reducers: list[dict[str, Any]],
    scan: dict[str, Any],
    map_wall: float,
    reduce_wall: float,
) -> None:
    rates = [c["rows"] / c["cpu_seconds"] for c in children]
    scan_rate = scan["items"] / scan["cpu_seconds"]
    _print_children(console, children, reducers, scan, map_wall, reduce_wall)
    _print_extrapolation(
        console,
        rows,
        partitions,
        total_bytes,
        children,
        reducers,
        statistics.median(rates),
        scan_rate,
    )


def _print_children(
    console: Any,
    children: list[dict[str, Any]],
    reducers: list[dict[str, Any]],
    scan: dict[str, Any],
    map_wall: float,
    reduce_wall: float,
) -> None:
    """The measured children: fingerprint map, reduce map and one Scan segment."""
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


def _print_extrapolation(
    console: Any,
    rows: int,
    partitions: int,
    total_bytes: int,
    children: list[dict[str, Any]],
    reducers: list[dict[str, Any]],
    rate: float,
    scan_rate: float,
) -> None:
    """The fleet (2.6 billion objects) at the default sizing, from the measured rates."""
    from video_index.ops.planning import Sizing, scan_segments, shard_count

    mb = 1024.0
    sizing = Sizing()
    bytes_per_row = total_bytes / rows
    unit_rows = sizing.unit_bytes / bytes_per_row
    units = math.ceil(FLEET_OBJECTS / unit_rows)
    unit_seconds = unit_rows / rate + sizing.unit_bytes / DOWNLOAD_BYTES_PER_S
    segments = scan_segments(FLEET_OBJECTS * ITEM_BYTES, sizing)
    segment_items = FLEET_OBJECTS / segments
    segment_seconds = (
        segment_items / scan_rate + segment_items * ITEM_BYTES / 2**20 * PAGE_LATENCY_S
    )
    shards = shard_count(units + segments, FLEET_PARTITIONS, sizing)
    measured_reduce_rows = len(children) * partitions / len(reducers)
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
