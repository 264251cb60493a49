"""The ingest benchmark's tables: figures by window, where the capacity goes, the checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.table import Table

from bench.capacity import item_size
from bench.figures import ratio

if TYPE_CHECKING:
    from bench.ingest_paths import Pipeline, Run

#: The infra's batching window (marked in the figures table).
DEFAULT_WINDOW_S = 60


def figures_table(pipelines: list[Pipeline], floor: Run) -> Table:
    table = Table(
        title="Ingest: DynamoDB cost per segment, event path + stream consumer vs floor, "
        "by the consumer's batching window W",
        title_justify="left",
    )
    table.add_column("figure")
    table.add_column("floor (1 PutItem / segment, no index)", justify="right")
    for pipeline in pipelines:
        default = " (infra default)" if pipeline.window_s == DEFAULT_WINDOW_S else ""
        table.add_column(f"W = {pipeline.window_s} s{default}", justify="right")
    rows: list[tuple[str, Callable[[Run], float], str]] = [
        ("DynamoDB requests / segment", lambda r: r.per_segment(r.totals.requests), "{:.3f}"),
        ("WCU / segment", lambda r: r.per_segment(r.totals.write_units), "{:.3f}"),
        (
            "  of which secondary-index WCU",
            lambda r: r.per_segment(r.totals.index_write_units),
            "{:.3f}",
        ),
        ("RCU / segment", lambda r: r.per_segment(r.totals.read_units), "{:.3f}"),
        (
            "all-in CU / segment (WCU + RCU)",
            lambda r: r.per_segment(r.totals.capacity_units),
            "{:.3f}",
        ),
    ]
    for label, value, fmt in rows:
        base = value(floor)
        cells = [
            fmt.format(value(p.all_in)) + f" ({ratio(value(p.all_in), base)})" for p in pipelines
        ]
        table.add_row(label, fmt.format(base), *cells)
    table.add_row(
        "  of which the consumer: requests / CU per segment",
        "-",
        *(
            f"{p.consumer.per_segment(p.consumer.totals.requests):.3f} / "
            f"{p.consumer.per_segment(p.consumer.totals.capacity_units):.3f}"
            for p in pipelines
        ),
    )
    table.add_row(
        "consumer invocations (batches) / redeliveries",
        "-",
        *(f"{p.delivery.batches:,} / {p.delivery.redeliveries}" for p in pipelines),
    )
    table.add_row(
        "segments / s: event path loop | consumer",
        f"{floor.segments_per_second:,.0f}",
        *(
            f"{p.event.segments_per_second:,.0f} | {p.consumer.segments_per_second:,.0f}"
            for p in pipelines
        ),
    )
    return table


def operations_table(runs: list[Run]) -> Table:
    table = Table(
        title="Where the capacity goes (by path, DynamoDB operation and item)", title_justify="left"
    )
    for name, justify in (
        ("run", "left"),
        ("path: operation item", "left"),
        ("requests", "right"),
        ("req / segment", "right"),
        ("WCU", "right"),
        ("index WCU", "right"),
        ("RCU", "right"),
        ("CU / segment", "right"),
        ("share of CU", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for run in runs:
        everything = run.totals.capacity_units or 1.0
        for operation, figures in run.totals.by_operation.items():
            units = figures.write_units + figures.read_units
            table.add_row(
                run.name,
                operation + (f" ({figures.failed} failed)" if figures.failed else ""),
                f"{figures.requests:,}",
                f"{run.per_segment(figures.requests):.3f}",
                f"{figures.write_units:,.1f}",
                f"{figures.index_write_units:,.1f}",
                f"{figures.read_units:,.1f}",
                f"{run.per_segment(units):.3f}",
                f"{units / everything:.1%}",
            )
    return table


def checks_table(rows: list[tuple[str, str, str]], window_s: int) -> Table:
    table = Table(
        title=f"Read model check after ingest and the consumer, W = {window_s} s "
        "(every window is checked; the run fails on any mismatch)",
        title_justify="left",
    )
    table.add_column("check")
    table.add_column("expected (reference)", justify="right")
    table.add_column("read model", justify="right")
    table.add_column("", justify="center")
    for name, want, got in rows:
        table.add_row(name, want, got, "[green]ok[/]" if want == got else "[red]WRONG[/]")
    return table


def sizes(run: Run, kind: str) -> tuple[int, int]:
    sizes = [item_size(i) for i in run.items if f"#{kind}" in i["pk"]["S"]]
    return (min(sizes), max(sizes)) if sizes else (0, 0)
