"""Upload-to-API latency through the local pipeline (issue: median of 20).

A camera uploads through the uploader into ``video-index local`` (moto server,
DynamoDB Local, the Lambda-like SQS worker, the HTTP API); the clock runs until
the API lists the segment. Measured for a segment two days old (answered by the
read model: the full S3 → SQS → ingest → DynamoDB path) beside one dated now
(answered from the API's fresh S3 listing: no event pipeline at all), in the same
run. Runs in a child process: the local stack owns moto's global state.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed


def pipeline_benchmark(context: BenchContext) -> None:
    samples = 5 if context.quick else 20
    context.console.rule(
        f"[bold]upload → API latency through `video-index local` ({samples} uploads each)"
    )
    child = subprocess.run(
        [sys.executable, "-m", "bench.pipeline", str(samples)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if child.returncode != 0:
        raise BenchmarkFailed(f"pipeline child failed: {child.stderr[-2000:]}")
    result = json.loads(child.stdout.strip().splitlines()[-1])
    table = Table(title="seconds from the start of the upload until the API lists the segment")
    for column in ("path", "median", "p90", "max", "samples"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for name, label in (
        ("read_model", "read model: S3 event → SQS → worker → ingest → DynamoDB → API"),
        ("fresh_listing", "baseline: fresh window, API lists S3 directly (no pipeline)"),
    ):
        values = result[name]
        table.add_row(
            label,
            f"{statistics.median(values):.3f}",
            f"{sorted(values)[int(0.9 * (len(values) - 1))]:.3f}",
            f"{max(values):.3f}",
            str(len(values)),
        )
    context.console.print(table)
    context.console.print(
        "  Notes: the SQS worker long-polls with a 1 s batching window like Lambda's event "
        "source (batch size 10, window 1 s), which bounds the event path from below; "
        "moto's notifications carry no sequencer, so every event also HEADs the object."
    )


def _measure(samples: int) -> dict[str, list[float]]:
    from video_index.local.stack import LocalStack
    from video_index.upload import upload_segment

    out: dict[str, list[float]] = {"read_model": [], "fresh_listing": []}
    with LocalStack() as stack:
        api, bucket, s3 = stack.endpoints["api"], stack.endpoints["bucket"], stack.clients.s3
        now = datetime.now(UTC).replace(microsecond=0)
        for path, base in (
            ("read_model", now - timedelta(days=2)),
            ("fresh_listing", now - timedelta(minutes=5)),
        ):
            for i in range(samples):
                start = base + timedelta(seconds=10 * i)
                began = time.perf_counter()
                result = upload_segment(
                    s3,
                    bucket,
                    f"{path}{i}".encode() * 100,
                    kind="video",
                    device="cam-latency",
                    start=start,
                    duration_ms=10_000,
                    ext="mp4",
                )
                window = urlencode({"from": _iso(start), "to": _iso(start + timedelta(seconds=5))})
                while True:
                    body = _get(f"{api}/devices/cam-latency/segments?{window}")
                    if any(item["key"] == result.key for item in body["items"]):
                        break
                    if time.perf_counter() - began > 60:
                        raise RuntimeError(f"{result.key} never appeared")
                    time.sleep(0.005)
                out[path].append(time.perf_counter() - began)
    return out


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


if __name__ == "__main__":
    print(json.dumps(_measure(int(sys.argv[1]))))
