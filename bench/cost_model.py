"""From measured counts to a camera-month and its price (bench/cost.py).

A camera-month is 30 days. What a sample measured per segment is scaled linearly to the
camera's segments of a month (``segments_per_day × 30`` over the sample's segments per
camera); the daily jobs are counted per camera-day (retention) or priced per row and per
item (reconcile) at the month's populations; the typical day of reading is counted
once a day, its playback per hour played. Each line says which.

Populations of the steady state (what storage and the reconcile's reads see):

* present segment items: ``segments_per_day × retention`` (the retention job deletes
  daily what ended ``retention`` days ago);
* tombstones: ``segments_per_day × tombstone_days``, plus the undelete window when
  lifecycle's version expiry rewrites them (their TTL starts again): measured, not
  assumed (:attr:`bench.cost_pipeline.SampleRun.tombstones_rewritten`);
* hour items: 24 a day for the retention; one device item.

DynamoDB bills each item's bytes plus 100 bytes of overhead for storage; reconcile's
Scan reads every item of the generation, eventually consistent (half a unit per 4 KB),
:data:`RECONCILE_RUNS_PER_DAY` times a day.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from bench import prices as p
from bench.cost_api import API, MEDIA, PLAYBACK
from bench.cost_daily import DailyJobs
from bench.cost_lines import (
    FOOTAGE,
    INDEX,
    Line,
    Memory,
    capacity_lines,
    lambda_lines,
    request_lines,
)
from bench.cost_pipeline import SampleRun
from bench.cost_world import Camera

MONTH_DAYS: Final = 30
#: Reconcile runs on its daily schedule and again when each daily inventory report lands
#: (infra/ops/triggers.py): two runs a day.
RECONCILE_RUNS_PER_DAY: Final = 2
#: DynamoDB's per-item storage overhead, bytes.
ITEM_OVERHEAD: Final = 100
#: Bytes of Lambda's own START, END and REPORT log lines per invocation (their format is
#: fixed; ~340 bytes with request id, durations and memory).
PLATFORM_LOG_BYTES: Final = 340
#: The footage read back on a typical day: one hour.
PLAYED_SECONDS_A_DAY: Final = 3600
_MILLION: Final = 1e6

__all__ = ["FOOTAGE", "INDEX", "CameraMonth", "Line", "Memory", "camera_month"]


@dataclass
class CameraMonth:
    camera: Camera
    lines: list[Line] = field(default_factory=list)

    def total(self, kind: str = INDEX) -> float:
        return sum(line.cost for line in self.lines if line.kind == kind)

    def by_component(self, kind: str = INDEX) -> dict[str, float]:
        out: dict[str, float] = {}
        for line in self.lines:
            if line.kind == kind:
                out[line.component] = out.get(line.component, 0.0) + line.cost
        return out

    @property
    def storage(self) -> float:
        """S3 Standard for ``retention`` days of footage (the reference of the goal)."""
        return next(x.cost for x in self.lines if x.item == STORAGE)


STORAGE: Final = "S3 Standard storage, retention"


def footage_gib(camera: Camera, days: float) -> float:
    return camera.bitrate_bps / 8 * 86_400 * days / p.GIB


def camera_month(
    run: SampleRun, daily: DailyJobs, memory: Memory, *, tombstone_days: int, undelete_days: int
) -> CameraMonth:
    """The camera-month of ``run.sample.camera`` (see the module documentation)."""
    camera = run.sample.camera
    month = CameraMonth(camera)
    # a month of one camera over the sample's segments (of every camera)
    per_segment = camera.segments_per_day * MONTH_DAYS / run.uploads
    ledger = run.ledger
    add = month.lines.extend
    add(_footage(run, camera, per_segment, undelete_days))
    messages = sum(ledger.messages.values()) * per_segment
    add([Line("S3 → SQS", "event messages", messages, "requests", p.SQS_PER_MILLION / _MILLION)])
    for component in ("ingest", "aggregation"):
        add(request_lines(ledger.requests, component, per_segment))
        add(capacity_lines(component, ledger.capacity_totals(component, {}), per_segment))
        add(
            lambda_lines(
                component, component, ledger.invocations.get(component), memory, per_segment
            )
        )
    add(_retention(daily, memory))
    add(_reconcile(run, daily, memory, populations(run, camera, tombstone_days, undelete_days)))
    add(_api(run, memory))
    add(_logs(run, per_segment))
    return month


def _footage(run: SampleRun, camera: Camera, per_segment: float, undelete_days: int) -> list[Line]:
    played = PLAYED_SECONDS_A_DAY * MONTH_DAYS
    gets = run.api.player_gets * played / run.api.played_seconds
    puts = run.ledger.count("camera", "s3", "PutObject") * per_segment
    gib = footage_gib
    return [
        Line(
            "footage",
            STORAGE,
            gib(camera, camera.retention_days),
            "GB-month",
            p.STANDARD.gb_month,
            FOOTAGE,
        ),
        Line(
            "footage",
            "S3 Standard storage, undelete window",
            gib(camera, undelete_days),
            "GB-month",
            p.STANDARD.gb_month,
            FOOTAGE,
        ),
        Line("footage", "camera PUTs", puts, "requests", p.S3_PUT_PER_1000 / 1000, FOOTAGE),
        Line(
            "footage", "viewing: player GETs", gets, "requests", p.S3_GET_PER_1000 / 1000, FOOTAGE
        ),
        Line(
            "footage",
            "viewing: transfer out",
            camera.bitrate_bps / 8 * played / p.GIB,
            "GB",
            p.TRANSFER_OUT_PER_GB,
            FOOTAGE,
        ),
    ]


def _retention(daily: DailyJobs, memory: Memory) -> list[Line]:
    """The job over one camera-day, 30 days a month (the invocation is the fleet's: its
    request is a per-stack cost; its duration is per camera)."""
    ledger = daily.ledger
    lines = request_lines(ledger.requests, "retention", MONTH_DAYS)
    lines += capacity_lines("retention", ledger.capacity_totals("retention", {}), MONTH_DAYS)
    duration = lambda_lines(
        "retention", "retention", ledger.invocations["retention"], memory, MONTH_DAYS
    )
    return lines + duration[1:]


def populations(
    run: SampleRun, camera: Camera, tombstone_days: int, undelete_days: int
) -> dict[str, tuple[float, float]]:
    """Items of one camera in the steady state by kind: (count, mean billed bytes)."""
    tombstone_life = tombstone_days + (undelete_days if run.tombstones_rewritten else 0)
    sizes = run.sizes

    def mean(values: list[int]) -> float:
        return sum(values) / len(values)

    return {
        "present": (camera.segments_per_day * camera.retention_days, mean(sizes.present)),
        "tombstone": (camera.segments_per_day * tombstone_life, mean(sizes.tombstones)),
        "bucket": (24 * camera.retention_days, mean(sizes.buckets)),
        "device": (1, mean(sizes.devices)),
    }


def _reconcile(
    run: SampleRun, daily: DailyJobs, memory: Memory, items: dict[str, tuple[float, float]]
) -> list[Line]:
    """S3 Inventory daily; each run reads every row and scans every item; and the items'
    storage (DynamoDB adds 100 bytes to each, PITR bills the same bytes again)."""
    runs = RECONCILE_RUNS_PER_DAY * MONTH_DAYS
    rows = items["present"][0]
    count = sum(n for n, _ in items.values())
    scanned = sum(n * size for n, size in items.values())
    stored = sum(n * (size + ITEM_OVERHEAD) for n, size in items.values()) / p.GIB
    seconds = rows * daily.reconcile_s_per_row + count * daily.reconcile_s_per_item
    read = p.DYNAMODB_READ_PER_MILLION / _MILLION
    return [
        Line(
            "reconcile",
            "S3 Inventory objects listed",
            rows * MONTH_DAYS,
            "objects",
            p.S3_INVENTORY_PER_MILLION / _MILLION,
        ),
        Line(
            "reconcile", "Scan of the read model", math.ceil(scanned / 4096) / 2 * runs, "RRU", read
        ),
        Line(
            "reconcile",
            "Lambda reconcile duration",
            seconds * memory.mb["reconcile"] / 1024 * runs,
            "GB-s",
            p.LAMBDA_GB_SECOND,
        ),
        Line("read model", "DynamoDB storage", stored, "GB-month", p.DYNAMODB_STORAGE_GB_MONTH),
        Line(
            "read model",
            "DynamoDB continuous backups (PITR)",
            stored,
            "GB-month",
            p.DYNAMODB_PITR_GB_MONTH,
        ),
    ]


def _api(run: SampleRun, memory: Memory) -> list[Line]:
    """The typical day, 30 times; its playback scaled to an hour played a day."""
    day = run.api
    per_hour = PLAYED_SECONDS_A_DAY / day.played_seconds
    lines: list[Line] = []
    for part, factor in ((API, MONTH_DAYS), (PLAYBACK, MONTH_DAYS * per_hour)):
        requests = day.gateway[part] * factor
        lines.append(
            Line(
                part,
                "API Gateway requests",
                requests,
                "requests",
                p.HTTP_API_PER_MILLION / _MILLION,
            )
        )
        lines += request_lines(run.ledger.requests, part, factor)
        lines += capacity_lines(part, run.ledger.capacity_totals(part, {}), factor)
        for function in (API, MEDIA):
            lines += lambda_lines(
                part, function, day.invocations.get((part, function)), memory, factor
            )
    return lines


def _logs(run: SampleRun, per_segment: float) -> list[Line]:
    """CloudWatch Logs: the event path's functions' metric lines (measured) and Lambda's own
    three lines per invocation."""
    total = sum(
        (run.log_bytes[f] + run.ledger.invocations[f].count * PLATFORM_LOG_BYTES) * per_segment
        for f in ("ingest", "aggregation")
    )
    return [
        Line(
            "logs",
            "CloudWatch Logs ingested (ingest, aggregation)",
            total / p.GIB,
            "GB",
            p.LOGS_INGEST_PER_GB,
        )
    ]
