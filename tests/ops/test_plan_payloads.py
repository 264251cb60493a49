"""The distributed reconcile's state payloads stay under Step Functions' 256 KiB
(:data:`STATE_PAYLOAD_BYTES`), for the largest plan the fleet bench stands for.

What crosses a state: the plan (its unit and shard lists are S3 objects the maps read,
so its size does not grow with the fleet), one child's batch (``{"Items": [unit],
"BatchInput"}``, one unit per child) and the decision's input (the plan and the maps'
``ResultWriterDetails``). Each is measured as the JSON Step Functions carries.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from bench.fleet_report import FLEET_OBJECTS
from video_index.core.service_limits import STATE_PAYLOAD_BYTES
from video_index.ops.inventory.model import Manifest, ManifestFile
from video_index.ops.payloads import (
    DecideInput,
    FingerprintPlan,
    FingerprintUnit,
    S3Location,
    UnitBatch,
    UnitBatchInput,
)
from video_index.ops.planning import (
    MIB,
    UNIT_PAYLOAD_BYTES,
    Sizing,
    inventory_units,
    numbered,
    scan_segments,
    scan_units,
    shard_count,
)

#: The longest S3 key (1,024 bytes): report data files and the manifest at their longest.
LONGEST_KEY = 1024
#: Bytes of gzip CSV per inventory row (the fleet bench measures about 40).
ROW_BYTES = 64
FLEET_PARTITIONS = 10_000 * 30 * 3  # 10,000 cameras x 30 days x every kind


def json_bytes(payload: Any) -> int:
    return len(json.dumps(payload).encode())


def manifest(files: list[ManifestFile]) -> Manifest:
    return Manifest(
        uri="s3://reports/" + "m" * (LONGEST_KEY - 14) + "/manifest.json",
        source_bucket="videos",
        destination_bucket="reports",
        file_format="CSV",
        file_schema=["Bucket", "Key", "Size", "ETag", "IsLatest"],
        files=files,
        creation=datetime(2026, 12, 1, tzinfo=UTC),
    )


def data_file(number: int, size: int) -> ManifestFile:
    stem = f"inventory/videos/fleet/data/{number:08d}-"
    key = stem + "k" * (LONGEST_KEY - len(stem) - len(".csv.gz")) + ".csv.gz"
    return ManifestFile(key=key, size=size, md5=f"{number:032x}")


def plan_of(report: Manifest, units: list[FingerprintUnit], shards: int) -> FingerprintPlan:
    folder = "reconcile/20261201T010000Z-0123456789abcdef/"
    return FingerprintPlan(
        run_id=folder.split("/")[1],
        folder=folder,
        source="inventory",
        manifest=report.uri,
        generation=1,
        units=S3Location(Bucket="reports", Key=folder + "units.json"),
        unit_count=len(units),
        shards=S3Location(Bucket="reports", Key=folder + "shards.json"),
        shard_count=shards,
        started_at="2026-12-01T01:00:00.000Z",
    )


def largest_batch(plan: FingerprintPlan, units: list[FingerprintUnit]) -> int:
    batch_input = UnitBatchInput(
        folder=plan.folder,
        manifest=plan.manifest,
        generation=plan.generation,
        shard_count=plan.shard_count,
    )
    return max(json_bytes(UnitBatch(Items=[unit], BatchInput=batch_input).dump()) for unit in units)


def decide_input(plan: FingerprintPlan) -> int:
    results = {"Bucket": "reports", "Key": plan.folder + "results/" + "r" * 36 + "/manifest.json"}
    return json_bytes(DecideInput(plan=plan, unit_results=results, shard_results=results).dump())


def test_the_fleet_plan_fits_every_state() -> None:
    # Given the fleet the bench extrapolates to (2.6 billion objects), reported as data
    # files of 256 MiB with the longest keys, planned with the deployed sizing
    sizing = Sizing()
    inventory_bytes = FLEET_OBJECTS * ROW_BYTES
    files = [data_file(n, 256 * MIB) for n in range(math.ceil(inventory_bytes / (256 * MIB)))]
    report = manifest(files)
    segments = scan_segments(FLEET_OBJECTS * 200, sizing)
    units = numbered([*inventory_units(report, sizing), *scan_units(segments)])
    shards = shard_count(len(units), FLEET_PARTITIONS, sizing)
    plan = plan_of(report, units, shards)
    # Then the plan, the largest child's batch and the decision's input each fit a state
    assert len(units) > 1_500  # 620 inventory units and 969 Scan segments
    for size in (json_bytes(plan.dump()), largest_batch(plan, units), decide_input(plan)):
        assert size <= STATE_PAYLOAD_BYTES, size


def test_a_report_of_many_small_files_fills_units_by_payload_not_bytes() -> None:
    # Given a report of 20,000 tiny data files with the longest keys (a unit's 256 MiB of
    # data would group them all: 20 MB of JSON in one child's input)
    files = [data_file(n, 1_000) for n in range(20_000)]
    report = manifest(files)
    units = numbered(inventory_units(report, Sizing()))
    plan = plan_of(report, units, 1)
    # Then every file is in exactly one unit, in order
    assert [s.key for u in units for s in u.slices] == [f.key for f in files]
    # and no unit's slices outgrow their share, so every child's batch fits a state
    assert max(json_bytes([s.dump() for s in u.slices]) for u in units) <= UNIT_PAYLOAD_BYTES
    assert largest_batch(plan, units) <= STATE_PAYLOAD_BYTES
