"""``python -m bench [--quick] [--only NAME]``: run the benchmarks and print their figures.

Add a benchmark by appending a callable taking a :class:`BenchContext` to
:data:`BENCHMARKS`; it prints its own tables and raises
:class:`BenchmarkFailed` when its correctness check fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from rich.console import Console

from bench.context import BenchContext, BenchmarkFailed, isolate_from_aws

isolate_from_aws()  # before anything builds a boto3 client or a Powertools logger

from bench.access import access_benchmark  # noqa: E402
from bench.annotations import annotations_benchmark  # noqa: E402
from bench.assets import assets_benchmark  # noqa: E402
from bench.audit import audit_benchmark  # noqa: E402
from bench.bulk import bulk_benchmark  # noqa: E402
from bench.cost import cost_benchmark  # noqa: E402
from bench.deletion import deletion_benchmark  # noqa: E402
from bench.fleet import fleet_benchmark  # noqa: E402
from bench.frames import frames_benchmark  # noqa: E402
from bench.ingest import ingest_benchmark  # noqa: E402
from bench.lag import lag_benchmark  # noqa: E402
from bench.live import live_benchmark  # noqa: E402
from bench.media import media_benchmark  # noqa: E402
from bench.pipeline import pipeline_benchmark  # noqa: E402
from bench.queries import queries_benchmark  # noqa: E402
from bench.reconcile import reconcile_benchmark  # noqa: E402
from bench.silence import silence_benchmark  # noqa: E402

Benchmark = Callable[[BenchContext], None]

#: Every benchmark ``make bench`` runs, in order.
BENCHMARKS: list[Benchmark] = [
    ingest_benchmark,
    queries_benchmark,
    pipeline_benchmark,
    lag_benchmark,
    reconcile_benchmark,
    fleet_benchmark,
    media_benchmark,
    frames_benchmark,
    live_benchmark,
    assets_benchmark,
    annotations_benchmark,
    deletion_benchmark,
    silence_benchmark,
    bulk_benchmark,
    access_benchmark,
    audit_benchmark,
    cost_benchmark,
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="a small smoke run (not the figures to quote)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this benchmark (e.g. reconcile for reconcile_benchmark); repeatable",
    )
    args = parser.parse_args(argv)
    selected = [b for b in BENCHMARKS if not args.only or _short(b) in args.only]
    if args.only and len(selected) != len(set(args.only)):
        known = ", ".join(_short(b) for b in BENCHMARKS)
        parser.error(f"--only takes one of: {known}")
    console = Console()
    if not console.is_terminal:  # piped or logged: wide enough for the tables
        console = Console(width=140)
    failures: list[str] = []
    with BenchContext(console=console, quick=args.quick) as context:
        for benchmark in selected:
            began = time.perf_counter()
            try:
                benchmark(context)
            except BenchmarkFailed as exc:
                console.print(f"[bold red]FAILED[/] {benchmark.__name__}: {exc}")
                failures.append(benchmark.__name__)
            console.print(
                f"[dim]{benchmark.__name__} took {time.perf_counter() - began:.1f} s[/]\n"
            )
    if failures:
        console.print(f"[bold red]{len(failures)} benchmark(s) failed: {', '.join(failures)}[/]")
        return 1
    return 0


def _short(benchmark: Benchmark) -> str:
    return benchmark.__name__.removesuffix("_benchmark")


if __name__ == "__main__":
    sys.exit(main())
