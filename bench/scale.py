"""``python -m bench.scale [--quick] [--cameras N]``: the fleet of docs/scale.md, computed.

Measures the reference camera as ``python -m bench --only cost`` does
(:func:`bench.cost.measure`: its per-segment counts, item sizes, the daily jobs' time)
and multiplies by a fleet of N cameras (100,000 by default) against AWS's published
quotas (:data:`QUOTAS`, each with where it is published). For every component: its load,
the quota it meets, and the fleet size at which it meets it; the smallest is the first
limit. Every figure of docs/scale.md comes from this command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from rich.console import Console
from rich.table import Table

from bench.context import BenchContext, isolate_from_aws

isolate_from_aws()  # before anything builds a boto3 client

from bench import prices  # noqa: E402
from bench.cost import REFERENCE, Measured, measure, stack_windows  # noqa: E402
from bench.cost_model import RECONCILE_RUNS_PER_DAY, populations  # noqa: E402

FLEET: Final = 100_000
#: What a request to S3 or DynamoDB takes from Lambda, as docs/bulk.md models it.
MODELLED_LATENCY_S: Final = 0.030
#: Objects a second of 1,000 bulk units at once (docs/bulk.md, "Figures": one unit copies
#: 78 objects/s, deletes 213 objects/s at 30 ms a request; ``--only bulk``).
BULK_RESTORE: Final = 78 * 1_000
BULK_DELETE: Final = 213 * 1_000
DAY_S: Final = 86_400


@dataclass(frozen=True)
class Quota:
    value: float
    what: str
    source: str


QUOTAS: Final = {
    "s3_prefix_put": Quota(
        3_500,
        "PUT/COPY/POST/DELETE per s per partitioned prefix",
        "S3 User Guide, Optimizing Amazon S3 performance",
    ),
    "sqs_batches": Quota(
        1_000,
        "concurrent batches of an SQS event source mapping",
        "Lambda Developer Guide, Configuring scaling behavior for SQS event source mappings",
    ),
    "lambda_concurrency": Quota(
        1_000,
        "concurrent executions per Region (default, adjustable)",
        "Lambda Developer Guide, Lambda quotas",
    ),
    "table_wru": Quota(
        40_000,
        "write request units per s per on-demand table (default, adjustable)",
        "DynamoDB Developer Guide, Quotas: Read/write throughput",
    ),
    "table_rru": Quota(
        40_000,
        "read request units per s per on-demand table (default, adjustable)",
        "DynamoDB Developer Guide, Quotas: Read/write throughput",
    ),
    "partition_wcu": Quota(
        1_000,
        "write units per s per partition",
        "DynamoDB Developer Guide, warm throughput scenarios",
    ),
    "lambda_timeout": Quota(
        900, "seconds one Lambda invocation may run", "Lambda Developer Guide, Lambda quotas"
    ),
}


@dataclass(frozen=True)
class Row:
    component: str
    load: str
    quota: str
    #: Cameras at which the quota is met (None: not met by any fleet).
    reached_at: float | None


@dataclass(frozen=True)
class Fleet:
    """A fleet of the measured camera: its rates, from the sample's counts."""

    m: Measured
    cameras: int

    @property
    def per_s(self) -> float:
        """What multiplies a count of the sample into a rate of the fleet (per second)."""
        camera = self.m.month.camera
        return self.cameras * camera.segments_per_day / DAY_S / self.m.run.uploads

    def reached(self, quota: str, load: float) -> float:
        """Cameras at which ``load`` (of this fleet) meets ``quota``."""
        return QUOTAS[quota].value * self.cameras / load

    def table_bytes(self) -> float:
        _, _, tombstone_days, undelete_days = stack_windows()
        items = populations(self.m.run, self.m.month.camera, tombstone_days, undelete_days)
        return sum(n * size for n, size in items.values()) * self.cameras


def rows(fleet: Fleet) -> list[Row]:
    return [*_event_path(fleet), *_read_model(fleet), *_daily_jobs(fleet)]


def _event_path(fleet: Fleet) -> list[Row]:
    ledger, per_s = fleet.m.run.ledger, fleet.per_s
    puts = ledger.count("camera", "s3", "PutObject") * per_s
    messages = sum(ledger.messages.values()) * per_s
    ingest = ledger.invocations["ingest"]
    calls, seconds = ingest.count * per_s, ingest.seconds / ingest.count
    busy = calls * seconds
    return [
        Row(
            "camera uploads (S3 PUT)",
            f"{puts:,.0f}/s; {puts / fleet.cameras:.2f}/s under each device's prefix",
            _q("s3_prefix_put") + " (S3 partitions by prefix as load grows)",
            None,
        ),
        Row("S3 → SQS messages", f"{messages:,.0f}/s", "standard queue: nearly unlimited", None),
        Row(
            "ingest Lambda",
            f"{calls:,.0f}/s x {seconds * 1000:.0f} ms = {busy:,.0f} concurrent",
            _q("sqs_batches"),
            fleet.reached("sqs_batches", busy),
        ),
    ]


def _read_model(fleet: Fleet) -> list[Row]:
    per_s = fleet.per_s
    window_s = stack_windows()[0]
    write = sum(_units(fleet.m, c, "write") for c in ("ingest", "aggregation")) * per_s
    read = sum(_units(fleet.m, c, "read") for c in ("ingest", "aggregation")) * per_s
    table_bytes = fleet.table_bytes()
    scans = table_bytes / 8192 * RECONCILE_RUNS_PER_DAY / DAY_S
    devices = _device_writes(fleet.m) * per_s
    partitions = max(table_bytes / (10 * 1024**3), write / 1000 + read / 3000)
    return [
        Row(
            "DynamoDB writes",
            f"{write:,.0f} WRU/s",
            _q("table_wru"),
            fleet.reached("table_wru", write),
        ),
        Row(
            "DynamoDB reads",
            f"{read:,.0f} RRU/s events + {scans:,.0f} RRU/s reconcile's Scans (daily mean)",
            _q("table_rru"),
            fleet.reached("table_rru", read + scans),
        ),
        Row(
            "device items (one partition key)",
            f"{devices:,.0f} writes/s (each device's, once per {window_s} s batch)",
            _q("partition_wcu") + ", unless split by sort key",
            fleet.reached("partition_wcu", devices),
        ),
        Row(
            "table partitions = stream shards",
            f"{partitions:,.0f} ({table_bytes / 1024**4:,.1f} TiB, 10 GB a partition)",
            "-",
            None,
        ),
    ]


def _daily_jobs(fleet: Fleet) -> list[Row]:
    daily, camera = fleet.m.daily, fleet.m.month.camera
    table_bytes = fleet.table_bytes()
    scan_h = table_bytes / 8192 / QUOTAS["table_rru"].value / 3600
    gap_h = 24 / RECONCILE_RUNS_PER_DAY
    rows_day = present = camera.segments_per_day * camera.retention_days * fleet.cameras
    pass_h = rows_day * daily.reconcile_s_per_row / 100 / 3600
    measured = daily.ledger.invocations["retention"].seconds
    requests = sum(daily.ledger.requests.values())
    # moto answers in-process; S3 and DynamoDB over the network take tens of ms a request
    # (docs/bulk.md models 30 ms): the job's time is the larger of the two
    retention = max(measured, requests * MODELLED_LATENCY_S)
    return [
        Row(
            "reconcile's Scan",
            f"{table_bytes / 1024**4:,.1f} TiB a run: {scan_h:,.1f} h at the read quota",
            f"{gap_h:g} h between runs",
            fleet.cameras * gap_h / scan_h,
        ),
        Row(
            "S3 Inventory, inventory pass",
            f"{rows_day / 1e9:,.1f} billion rows a day: {pass_h:,.1f} h at 100 children",
            "-",
            None,
        ),
        Row(
            "bulk restore / bulk deletion of everything",
            f"{present / 1e9:,.1f} billion objects: {present / BULK_RESTORE / 3600:,.0f} h / "
            f"{present / BULK_DELETE / 3600:,.0f} h at 1,000 units",
            "-",
            None,
        ),
        Row(
            "retention job (one invocation a day)",
            f"{requests} requests, {measured:.1f} s on moto, {retention:.1f} s at 30 ms a "
            f"request per camera-day: {retention * fleet.cameras / 3600:,.0f} h a day",
            _q("lambda_timeout"),
            QUOTAS["lambda_timeout"].value / retention,
        ),
    ]


def _q(name: str) -> str:
    quota = QUOTAS[name]
    return f"{quota.value:,.0f} {quota.what}"


def _units(m: Measured, component: str, kind: str) -> float:
    totals = m.run.ledger.capacity_totals(component, {})
    if totals is None:
        return 0.0
    return float(totals.write_units if kind == "write" else totals.read_units)


def _device_writes(m: Measured) -> float:
    """The consumer's writes of device items in the sample (every kind of write)."""
    totals = m.run.ledger.capacity_totals("aggregation", {})
    assert totals is not None
    return float(
        sum(f.requests for name, f in totals.by_operation.items() if name == "PutItem device")
    )


def table(found: list[Row], fleet: int) -> Table:
    out = Table(
        title=f"{fleet:,} reference cameras (2 Mbit/s, 6 s segments, 30 days)", title_justify="left"
    )
    for column in ("component", "load", "quota", "met at (cameras)"):
        out.add_column(column, justify="right" if column.startswith("met") else "left")
    for row in sorted(
        found, key=lambda r: r.reached_at if r.reached_at is not None else float("inf")
    ):
        out.add_row(
            row.component,
            row.load,
            row.quota,
            "-" if row.reached_at is None else f"{row.reached_at:,.0f}",
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="a small sample (not the figures to quote)"
    )
    parser.add_argument("--cameras", type=int, default=FLEET)
    args = parser.parse_args(argv)
    console = Console(width=160)
    with BenchContext(console=console, quick=args.quick) as context:
        (measured,) = measure(context, (REFERENCE,))
    found = rows(Fleet(measured, args.cameras))
    console.print(table(found, args.cameras))
    first = min((r for r in found if r.reached_at is not None), key=lambda r: r.reached_at or 0)
    console.print(
        f"First limit: {first.component} at {first.reached_at:,.0f} cameras ({first.quota})."
    )
    month = measured.month
    console.print(
        f"Monthly at {args.cameras:,} cameras ({prices.AS_OF} list prices): index "
        f"${month.total() * args.cameras:,.0f}, storage ${month.storage * args.cameras:,.0f}."
    )
    for quota in QUOTAS.values():
        console.print(f"  - {quota.value:,.0f} {quota.what}: {quota.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
