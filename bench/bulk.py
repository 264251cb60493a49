"""Restore and deletion at fleet size (docs/bulk.md): measured per unit, extrapolated to a
fleet with the engine's documented concurrency and S3's documented request rates.

Measured (moto's S3 server on loopback, in a child process; at 0 ms and with a modelled
round trip of :data:`bench.deletion.LATENCY_MS` before every request):

* **restore unit**: one unit of the restore map (a device prefix of N objects copied
  from a replica into an empty bucket, 32 copies in flight);
* **deletion unit**: one unit of the bulk-deletion map (one deletion job over N objects:
  counting, then DeleteObjects of 1,000 with a checkpoint each).

Extrapolated: a fleet of 10,000 cameras with 10 s segments kept 30 days (2.59 billion
objects) and erasing one camera's year (3.15 million objects), at the per-unit rate
with the latency modelled, with the cost of a run from the prices in :data:`PRICES`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any, Final

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed

#: us-east-1 list prices (checked 2025): S3 Standard "PUT, COPY, POST, LIST requests"
#: $0.005 per 1,000, DELETE free (aws.amazon.com/s3/pricing); Step Functions Standard
#: $0.025 per 1,000 state transitions (aws.amazon.com/step-functions/pricing); Lambda
#: x86 $0.0000166667 per GB-s and $0.20 per million requests (aws.amazon.com/lambda/
#: pricing); S3 Batch Operations $0.25 per job + $1.00 per million objects (S3 pricing,
#: "Management & insights"); DynamoDB on-demand $0.625 per million writes (2024 price).
PRICES: Final = {
    "s3_copy_put_list_per_1000": 0.005,
    "sfn_transition_per_1000": 0.025,
    "lambda_gb_second": 0.0000166667,
    "lambda_request_per_million": 0.20,
    "batch_ops_per_million_objects": 1.00,
    "dynamodb_write_per_million": 0.625,
}
#: Distributed Map: up to 10,000 parallel child executions (Step Functions Developer
#: Guide, "Using Map state in Distributed mode"); Lambda's default regional concurrency
#: quota is 1,000 (raisable), which the deployed map's MaxConcurrency matches.
MAP_CHILDREN_MAX: Final = 10_000
DEPLOYED_CONCURRENCY: Final = 1_000
#: S3: at least 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per second per
#: partitioned prefix (S3 User Guide, "Best practices design patterns: optimizing
#: Amazon S3 performance"); keys are spread by device (v1/<kind>/<device>/...).
S3_PUT_PER_PREFIX: Final = 3_500
FLEET_OBJECTS: Final = 10_000 * 8_640 * 30
CAMERA_YEAR_OBJECTS: Final = 8_640 * 365
#: One deletion unit per device and 31-day slice: a year is 12 units.
YEAR_UNITS: Final = 12
LAMBDA_GB: Final = 1.0


def bulk_benchmark(context: BenchContext) -> None:
    objects = 1_000 if context.quick else 4_000
    context.console.rule(f"[bold]restore and deletion at fleet size ({objects:,} per unit)")
    child = subprocess.run(
        [sys.executable, "-m", "bench.bulk", str(objects)],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if child.returncode != 0:
        raise BenchmarkFailed(f"bulk child failed: {child.stderr[-3000:]}")
    rows = json.loads(child.stdout.strip().splitlines()[-1])
    table = Table(title="one unit, measured", title_justify="left")
    for column in ("unit", "latency", "objects", "seconds", "objects/s"):
        table.add_column(column, justify="left" if column == "unit" else "right")
    for row in rows:
        table.add_row(
            row["unit"],
            f"{row['latency_ms']} ms",
            f"{row['objects']:,}",
            f"{row['seconds']:.2f}",
            f"{row['objects'] / row['seconds']:,.0f}",
        )
    context.console.print(table)
    modelled = {r["unit"]: r["objects"] / r["seconds"] for r in rows if r["latency_ms"]}
    for line in extrapolate(modelled["restore"], modelled["deletion"]):
        context.console.print("  " + line)


def extrapolate(restore_rate: float, delete_rate: float) -> list[str]:
    """The fleet figures from the per-unit rates (objects/s at the modelled latency)."""
    lines = []
    for concurrency in (DEPLOYED_CONCURRENCY, MAP_CHILDREN_MAX):
        rate = concurrency * restore_rate
        seconds = FLEET_OBJECTS / rate
        lines.append(
            f"restore {FLEET_OBJECTS / 1e9:.2f} billion objects at {concurrency:,} units at once: "
            f"{rate:,.0f} copies/s = {rate / S3_PUT_PER_PREFIX:,.0f} prefixes at S3's 3,500 "
            f"PUT/s (10,000 device prefixes exist), {seconds / 3600:.1f} h (goal < 24 h)"
        )
    lambda_seconds = FLEET_OBJECTS / restore_rate
    copies = FLEET_OBJECTS * PRICES["s3_copy_put_list_per_1000"] / 1000
    lists = FLEET_OBJECTS / 1000 * PRICES["s3_copy_put_list_per_1000"] / 1000
    compute = lambda_seconds * LAMBDA_GB * PRICES["lambda_gb_second"]
    units = FLEET_OBJECTS / (restore_rate * 600)  # units sized to ~10 minutes each
    steps = units * 6 * PRICES["sfn_transition_per_1000"] / 1000
    batch_ops = FLEET_OBJECTS / 1e6 * PRICES["batch_ops_per_million_objects"]
    lines.append(
        f"restore cost: COPY ${copies:,.0f} + LIST ${lists:,.0f} + Lambda "
        f"{lambda_seconds / 1e6:,.1f} M GB-s ${compute:,.0f} + Step Functions "
        f"{units:,.0f} units ${steps:,.0f} = ${copies + lists + compute + steps:,.0f} "
        f"(S3 Batch Operations would add ${batch_ops:,.0f} per run in object fees)"
    )
    seconds = CAMERA_YEAR_OBJECTS / (YEAR_UNITS * delete_rate)
    year_lists = 2 * CAMERA_YEAR_OBJECTS / 1000 * PRICES["s3_copy_put_list_per_1000"] / 1000
    year_lambda = CAMERA_YEAR_OBJECTS / delete_rate * LAMBDA_GB * PRICES["lambda_gb_second"]
    lines.append(
        f"erase one camera's year ({CAMERA_YEAR_OBJECTS / 1e6:.2f} M objects) as "
        f"{YEAR_UNITS} units: {seconds / 60:.1f} min (one worker: "
        f"{CAMERA_YEAR_OBJECTS / delete_rate / 3600:.1f} h); cost: DELETE free, LIST "
        f"${year_lists:.2f}, Lambda ${year_lambda:.2f}"
    )
    return lines


# --- the child process ----------------------------------------------------------------------


def _measure(count: int) -> list[dict[str, Any]]:
    from bench.deletion import FIRST, LATENCY_MS, Latency, _fill, _keys
    from video_index.aws.deletions import DeletionTable
    from video_index.aws.holds import HoldStore
    from video_index.aws.objects import ObjectStore
    from video_index.bulk import deletion_units, restore_units
    from video_index.bulk.payloads import DeleteInput, RestoreBatchInput
    from video_index.core.table_schema import create_tables
    from video_index.core.timeunits import to_epoch_ms
    from video_index.deletion.jobs import DeletionJobs
    from video_index.holds.service import Holds, HoldsHeldWindows
    from video_index.local import s3_fidelity
    from video_index.local.aws import client, isolated_session
    from video_index.local.stack import MotoServer
    from video_index.ops.payloads import FingerprintUnit

    undo = s3_fidelity.install()
    moto = MotoServer().start()
    rows: list[dict[str, Any]] = []
    try:
        session = isolated_session()
        s3 = client(session, "s3", moto.endpoint)
        dynamodb = client(session, "dynamodb", moto.endpoint)
        create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
        for latency_ms in (0, LATENCY_MS):
            replica, target, doomed = (f"bulk-{n}-{latency_ms}" for n in ("r", "t", "d"))
            for name in (replica, target, doomed):
                s3.create_bucket(Bucket=name)
                s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
            _fill(s3, replica, _keys(count, "cam-unit"))
            _fill(s3, doomed, _keys(count, "cam-unit"))
            latency = Latency(s3, latency_ms)
            try:
                unit = FingerprintUnit(unit=0, prefixes=["v1/video/cam-unit/"])
                context = restore_units.UnitContext(
                    s3=s3, target=ObjectStore(s3, target), enforcer=lambda: None
                )
                began = time.perf_counter()
                counts = restore_units.restore_unit(
                    context, unit, RestoreBatchInput(run_id="b", source_bucket=replica)
                )
                seconds = time.perf_counter() - began
                if counts.copied != count:
                    raise RuntimeError(f"restore unit copied {counts.copied} of {count}")
                rows.append(_row("restore", latency_ms, count, seconds))
                jobs = DeletionJobs(
                    DeletionTable(dynamodb, "deletions"),
                    ObjectStore(s3, doomed),
                    enqueue=lambda _: None,
                    holds=HoldsHeldWindows(Holds(HoldStore(dynamodb, "holds"))),
                )
                window = DeleteInput(
                    devices=["cam-unit"],
                    from_ms=to_epoch_ms(FIRST),
                    to_ms=to_epoch_ms(FIRST) + 3 * 86_400_000,
                    created_by="bench",
                )
                (planned,) = deletion_units.plan_units(jobs, window)
                began = time.perf_counter()
                done = deletion_units.run_unit(jobs, planned)
                seconds = time.perf_counter() - began
                if done.deleted != count:
                    raise RuntimeError(f"deletion unit deleted {done.deleted} of {count}")
                rows.append(_row("deletion", latency_ms, count, seconds))
            finally:
                latency.remove()
        return rows
    finally:
        moto.stop()
        undo()


def _row(unit: str, latency_ms: int, objects: int, seconds: float) -> dict[str, Any]:
    return {"unit": unit, "latency_ms": latency_ms, "objects": objects, "seconds": seconds}


if __name__ == "__main__":
    from bench.context import isolate_from_aws

    isolate_from_aws()
    print(json.dumps(_measure(int(sys.argv[1]))))
