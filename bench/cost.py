"""The cost of a camera-month (issue 33): every request the pipeline makes, priced.

``python -m bench --only cost``. For a reference camera (2 Mbit/s, 6 s segments, all
day, 30 days' retention) and two others (10 s and 60 s segments), a sample of a few
cameras' minutes goes through the real pipeline on moto (:mod:`bench.cost_pipeline`:
the uploader, S3's events, the ingest function in Lambda's SQS batches, the stream
consumer in Lambda's stream batches, a typical day of reading through the API,
reconcile, the retention job, lifecycle's expirations, the tombstones' TTL); the daily
jobs are measured at a camera-day's size (:mod:`bench.cost_daily`). Counts are scaled
linearly to a 30-day month and priced with the dated us-east-1 table of
:mod:`bench.prices` (:mod:`bench.cost_model`). The index's cost is printed beside the S3
storage of the same footage; the goal is at most 5 % of it at the reference camera.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rich.table import Table

from bench import prices
from bench.context import BenchContext
from bench.cost_daily import (
    DailyJobs,
    retention_day,
    scan_world,
    seconds_per_item,
    seconds_per_row,
)
from bench.cost_meter import Ledger
from bench.cost_model import FOOTAGE, INDEX, CameraMonth, Memory, camera_month
from bench.cost_pipeline import SampleRun, run_sample
from bench.cost_world import Camera, Sample

REFERENCE: Final = Camera("ref", 6)
CAMERAS: Final = (REFERENCE, Camera("ten", 10), Camera("sixty", 60))
#: Cameras and minutes of each sample (full run, --quick).
FULL: Final = (3, 10)
QUICK: Final = (2, 3)
GOAL_SHARE: Final = 0.05


def stack_memory() -> Memory:
    """Each function's memory as the stack sets it (``infra``), not written here again."""
    from infra.holds import RETENTION_MEMORY_MB
    from infra.media import MEDIA_MEMORY_MB
    from infra.settings import StackSettings

    settings = StackSettings()
    return Memory(
        {
            "ingest": settings.ingest_memory_mb,
            "aggregation": settings.aggregation_memory_mb,
            "api": settings.api_memory_mb,
            "media": MEDIA_MEMORY_MB,
            "reconcile": settings.reconcile_memory_mb,
            "retention": RETENTION_MEMORY_MB,
        }
    )


def stack_windows() -> tuple[int, int, int, int]:
    """(stream batching window s, stream batch size, tombstone days, undelete days)."""
    from infra.settings import StackSettings

    s = StackSettings()
    return (
        s.aggregation_max_batching_window_seconds,
        s.aggregation_batch_size,
        s.tombstone_days,
        s.noncurrent_version_expiry_days,
    )


@dataclass(frozen=True)
class Measured:
    """One camera's sample, its daily jobs, and the camera-month they price to."""

    run: SampleRun
    daily: DailyJobs
    month: CameraMonth


def measure(context: BenchContext, cameras: tuple[Camera, ...] = CAMERAS) -> list[Measured]:
    count, minutes = QUICK if context.quick else FULL
    window_s, batch_size, tombstone_days, undelete_days = stack_windows()
    memory = stack_memory()
    months: list[Measured] = []
    rates: tuple[float, float] | None = None
    for camera in cameras:
        run = run_sample(Sample(camera, count, minutes), window_s=window_s, batch_size=batch_size)
        if rates is None:  # per row and per item: the same for every camera of one layout
            share = camera.retention_days / (camera.retention_days + tombstone_days)
            world = scan_world(
                camera, run.sizes.examples["present"], run.sizes.examples["tombstone"], share
            )
            rates = (seconds_per_row(camera), seconds_per_item(world))
        ledger = Ledger()
        daily = DailyJobs(ledger, retention_day(camera, ledger), *rates)
        month = camera_month(
            run, daily, memory, tombstone_days=tombstone_days, undelete_days=undelete_days
        )
        months.append(Measured(run, daily, month))
        context.console.print(f"[dim]{camera.segment_s} s camera: {_sample_line(run)}[/]")
    return months


def _sample_line(run: SampleRun) -> str:
    sample = run.sample
    return (
        f"sample of {sample.cameras} cameras x {sample.minutes} min = {run.uploads} segments; "
        f"S3 events {dict(run.ledger.messages)}; tombstones rewritten by lifecycle: "
        f"{run.tombstones_rewritten}"
    )


def cost_benchmark(context: BenchContext) -> None:
    console = context.console
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    console.rule(f"[bold]cost[/]: a camera-month, per component ({label})")
    measured = measure(context)
    months = [m.month for m in measured]
    console.print(summary_table(months))
    reference = months[0]
    share = reference.total() / reference.storage
    console.print(
        f"Index at the reference camera (2 Mbit/s, 6 s segments, 30 days): "
        f"${reference.total():.3f} per camera-month = [bold]{share:.1%}[/] of its S3 storage "
        f"${reference.storage:.2f} (goal: <= {GOAL_SHARE:.0%}) -> "
        + ("[bold green]goal MET[/]" if share <= GOAL_SHARE else "[bold red]goal NOT MET[/]")
    )
    ranked = sorted(reference.by_component().items(), key=lambda kv: -kv[1])
    console.print(
        "What dominates (reference): " + ", ".join(f"{c} ${v:.3f}" for c, v in ranked[:4])
    )
    console.print(detail_table(reference))
    console.print("Notes:")
    for note in [*notes(), durations(measured[0].run)]:
        console.print(f"  - {note}")


def durations(run: SampleRun) -> str:
    """How much of each function's measured time was moto answering its calls."""
    parts = []
    for function, figures in sorted(run.ledger.invocations.items()):
        if figures.count and figures.calls:
            parts.append(
                f"{function} {figures.seconds / figures.count * 1000:.0f} ms per invocation, "
                f"{figures.call_seconds / figures.count * 1000:.0f} ms of it in "
                f"{figures.calls / figures.count:.1f} AWS calls answered by moto"
            )
    return "Measured durations (reference sample): " + "; ".join(parts) + "."


def summary_table(months: list[CameraMonth]) -> Table:
    table = Table(
        title=f"$ per camera-month (us-east-1 list prices of {prices.AS_OF})", title_justify="left"
    )
    table.add_column("component")
    for month in months:
        table.add_column(f"{month.camera.segment_s} s segments", justify="right")
    components = sorted(
        {c for m in months for c in m.by_component()},
        key=lambda c: -months[0].by_component().get(c, 0),
    )
    for component in components:
        table.add_row(component, *(f"{m.by_component().get(component, 0):.4f}" for m in months))
    table.add_row("[bold]index total[/]", *(f"[bold]{m.total():.3f}[/]" for m in months))
    table.add_row("S3 storage of the footage (30 days)", *(f"{m.storage:.2f}" for m in months))
    table.add_row(
        "[bold]index ÷ storage[/]", *(f"[bold]{m.total() / m.storage:.1%}[/]" for m in months)
    )
    table.add_row(
        "footage: other (undelete window, PUTs, 1 h viewed a day)",
        *(f"{m.total(FOOTAGE) - m.storage:.2f}" for m in months),
    )
    return table


def detail_table(month: CameraMonth) -> Table:
    table = Table(
        title=f"Reference camera, every line (per camera-month; {INDEX} lines add up to the index)",
        title_justify="left",
    )
    for column in ("component", "what", "quantity", "unit", "$ per unit", "$"):
        table.add_column(
            column, justify="right" if column in ("quantity", "$ per unit", "$") else "left"
        )
    for line in month.lines:
        table.add_row(
            line.component if line.kind == INDEX else f"({line.component})",
            line.item,
            f"{line.quantity:,.1f}",
            line.unit,
            f"{line.price:.3g}",
            f"{line.cost:.4f}",
        )
    return table


def notes() -> list[str]:
    sources = ", ".join(sorted(set(prices.SOURCES.values())))
    return [
        f"Prices: us-east-1 list prices compiled {prices.AS_OF} from {sources} "
        "(bench/prices.py): no free tiers, first volume tier.",
        "Scaling: the sample's counts per segment x a camera's segments in 30 days; "
        "retention per camera-day x 30; reconcile per row and per item at the month's "
        "populations, twice a day; the typical day x 30, its playback per hour played.",
        "Batching as a fleet sees it: every SQS receive a full batch of 10 (a queue busy "
        "enough to fill the 1 s window); the stream in the stack's window and batch size, "
        "the sample's cameras sharing one shard (on AWS a shard holds dozens of cameras, so "
        "the consumer's per-invocation reads are shared wider).",
        "DynamoDB units by AWS's sizing rule on each request and answer (bench/capacity.py), "
        "not moto's ConsumedCapacity (a constant 1.0 per write); Lambda time measured around "
        "each handler here, on moto (slower to answer than AWS) on a shared machine: an upper "
        "bound, billed per ms at the stack's memory.",
        "DeleteObjects priced as a DELETE (free: 'DELETE and CANCEL requests are free'); it "
        "is a POST, and were it billed as one, each would cost $0.005/1,000.",
        "Not counted: per-stack costs shared by the fleet (Lambda's idle SQS polling, alarms, "
        "custom metrics, Step Functions transitions of reconcile runs, the retention and "
        "silence schedules): docs/scale.md.",
    ]
