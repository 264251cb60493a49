"""The Lambda assets (docs/deployment.md): their sizes, and how long a cold import takes.

For every function of :data:`infra.dependencies.FUNCTIONS`:

* **size** — the asset as deployed (arm64), built by :func:`infra.assets.build_asset`
  exactly as synthesis builds it: files, bytes unpacked, bytes zipped (deflate, level 9,
  the deployment package CDK uploads);
* **cold import** — the handler module imported in a fresh process of the Lambda-like
  environment (:mod:`worlds.lambda_env`: the runtime's Python 3.13, required; the
  runtime's SDK and the pinned Powertools layer's packages, no bytecode written, as in
  ``/var/task``): Lambda's init phase, before the first invocation. Wall and CPU time
  (the CPU time does not grow when other work shares the machine), the median of several
  processes. Native assets run as built for this machine (same code, other wheels).
* **PyAV import** — what the first rendition or export adds: ``import av`` from the asset
  (CPU time).

The baseline, measured in the same run and environment, is a handler that imports only
what every function does anyway: boto3, pydantic and the Powertools logger, metrics and
tracer. The API function's goal is at most 1.5 times it (docs/architecture.md).
"""

from __future__ import annotations

import platform
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Final

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from infra.assets import LAMBDA_TARGET, WheelTarget, build_asset
from infra.dependencies import FUNCTIONS, LAMBDA_GLIBC, FunctionPackaging
from infra.settings import StackSettings
from worlds.lambda_env import (
    LambdaEnvironment,
    folder_bytes,
    invoke,
    lambda_environ,
    lambda_environment,
    zip_folder,
)

FULL_RUNS: Final = 7
QUICK_RUNS: Final = 2
BASELINE_HANDLER: Final = """
import boto3
import pydantic
from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger(service="baseline")
metrics = Metrics(namespace="Baseline", service="baseline")
tracer = Tracer(service="baseline")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event, context):
    return {}
"""


def assets_benchmark(context: BenchContext) -> None:
    runs = QUICK_RUNS if context.quick else FULL_RUNS
    environment = lambda_environment(StackSettings().powertools_layer_version)
    here = WheelTarget(
        python_version=environment.interpreter.minor,
        machine=platform.machine(),
        glibc=LAMBDA_GLIBC,
    )
    with tempfile.TemporaryDirectory(prefix="bench-assets-") as scratch:
        root = Path(scratch)
        baseline_asset = root / "baseline"
        baseline_asset.mkdir()
        (baseline_asset / "baseline.py").write_text(BASELINE_HANDLER)
        baseline = _cold_import(environment, baseline_asset, "baseline.handler", runs)
        table = Table(
            title=(
                f"Lambda assets (arm64) and cold imports (Python "
                f"{environment.interpreter.version}, Powertools {environment.layer.release}, "
                f"median of {runs} processes)"
            )
        )
        table.add_column("function")
        table.add_column("carries")
        for column in ("files", "unpacked MB", "zipped MB"):
            table.add_column(column, justify="right")
        table.add_column("cold import ms wall / CPU", justify="right")
        table.add_column("baseline ms wall / CPU (same run)", justify="right")
        table.add_column("+ PyAV import ms CPU", justify="right")
        for function in FUNCTIONS:
            deployed = root / function.name
            build_asset(function, deployed)  # LAMBDA_TARGET: what synthesis deploys
            zipped = zip_folder(deployed, root / f"{function.name}.zip").stat().st_size
            runnable = deployed
            if function.native:
                runnable = root / f"{function.name}-{here.machine}"
                build_asset(function, runnable, target=here)
            imported = _cold_import(environment, runnable, function.handler, runs)
            pyav = _pyav_import(environment, runnable, runs) if _has_pyav(function) else None
            table.add_row(
                function.name,
                ", ".join(p.requirement for p in function.packages) or "video_index only",
                f"{sum(1 for p in deployed.rglob('*') if p.is_file()):,}",
                f"{folder_bytes(deployed) / 1e6:.1f}",
                f"{zipped / 1e6:.1f}",
                f"{imported[0] * 1000:.0f} / {imported[1] * 1000:.0f}",
                f"{baseline[0] * 1000:.0f} / {baseline[1] * 1000:.0f}",
                "-" if pyav is None else f"{pyav * 1000:.0f}",
            )
    context.console.print(table)
    context.console.print(
        f"[dim]sizes: the {LAMBDA_TARGET.key} asset; imports: the asset as built for "
        f"{here.key} where it holds native wheels; baseline: boto3 + pydantic + Powertools "
        "Logger/Metrics/Tracer only[/]"
    )


def _has_pyav(function: FunctionPackaging) -> bool:
    return any(p.module == "av" for p in function.packages)


def _cold_import(
    environment: LambdaEnvironment, asset: Path, handler: str, runs: int
) -> tuple[float, float]:
    """Median wall and CPU seconds of importing ``handler``'s module in a fresh process."""
    wall, cpu = [], []
    for _ in range(runs):
        imported = invoke(environment, asset, handler, None, origins=[handler.split(".")[0]])
        origin = next(iter(imported.origins.values()))
        if not origin or not origin.startswith(str(asset)):
            raise BenchmarkFailed(f"{handler} was not imported from its asset ({origin})")
        wall.append(imported.import_seconds)
        cpu.append(imported.import_cpu_seconds)
    return statistics.median(wall), statistics.median(cpu)


def _pyav_import(environment: LambdaEnvironment, asset: Path, runs: int) -> float:
    """CPU seconds of ``import av`` in a fresh process of the environment, from the asset."""
    probe = "import time; t = time.process_time(); import av; print(time.process_time() - t)"
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        env = lambda_environ(asset, Path(scratch), "pyav")
        for _ in range(runs):
            out = subprocess.run(
                [str(environment.python), "-c", probe],
                env=env,
                cwd=asset,
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(out.stdout.strip()))
    return statistics.median(times)
