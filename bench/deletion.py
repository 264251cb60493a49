"""Deletion and restore (docs/deletion.md): objects per second and S3 requests per 1,000
objects, each beside a plain loop measured in the same run.

* **delete**: a deletion job over a window of N segments (counting, then DeleteObjects
  of 1,000 keys, a checkpoint per batch), with delete markers and erased, against an
  ``aws s3 rm --recursive``-style loop: list, then DeleteObject key by key.
* **restore**: ``video-index restore`` of N objects from a replica into an empty bucket
  (two listings side by side, CopyObject of what is missing, 32 in flight), and a second
  run that finds everything identical, against a plain loop: list the replica,
  CopyObject each. Twice: at moto's own speed (0 ms: both bounded by this machine's
  CPU, moto included) and with a modelled round trip of :data:`LATENCY_MS` injected
  before every request of both (N/10 objects, at least 200), which is what a real S3
  endpoint adds and what parallel copies overlap.

S3 is moto's server on a loopback port (real HTTP, one request per call; compare
columns, not absolute times), DynamoDB is moto too (only the job's checkpoints).
Runs in a child process: the moto server owns moto's global state.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed

DEVICE = "cam-bench"
FIRST = datetime(2026, 11, 20, tzinfo=UTC)
#: The modelled round trip of the second restore measurement (S3 in-region is ~10-30 ms
#: for a small CopyObject; moto on loopback answers in well under 1 ms).
LATENCY_MS: Final = 30


def deletion_benchmark(context: BenchContext) -> None:
    objects = 2_000 if context.quick else 10_000
    context.console.rule(f"[bold]deletion and restore ({objects:,} objects)")
    child = subprocess.run(
        [sys.executable, "-m", "bench.deletion", str(objects)],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if child.returncode != 0:
        raise BenchmarkFailed(f"deletion child failed: {child.stderr[-3000:]}")
    results = json.loads(child.stdout.strip().splitlines()[-1])
    for title, rows in (
        ("delete a window", results["delete"]),
        ("restore from a replica into an empty bucket", results["restore"]),
    ):
        table = Table(title=f"{title}: {objects:,} objects", title_justify="left")
        for column in ("how", "objects/s", "S3 requests / 1,000", "requests by kind", "seconds"):
            table.add_column(
                column, justify="left" if column in ("how", "requests by kind") else "right"
            )
        for row in rows:
            per_thousand = 1000 * sum(row["requests"].values()) / max(row["objects"], 1)
            table.add_row(
                row["how"],
                f"{row['objects'] / row['seconds']:,.0f}" if row["objects"] else "—",
                f"{per_thousand:,.1f}" if row["objects"] else f"{sum(row['requests'].values())}",
                ", ".join(f"{k} {v:,}" for k, v in sorted(row["requests"].items())),
                f"{row['seconds']:.2f}",
            )
        context.console.print(table)
    for latency_ms in sorted({r["latency_ms"] for r in results["restore"]}):
        rows = [r for r in results["restore"] if r["latency_ms"] == latency_ms]
        ours, plain = (r["objects"] / r["seconds"] for r in (rows[0], rows[-1]))
        context.console.print(
            f"  restore at {latency_ms} ms per request ({rows[0]['objects']:,} objects): "
            f"{ours / plain:.1f}x the plain copy loop ({ours:,.0f} vs {plain:,.0f} objects/s; "
            "goal 3x)"
        )
    context.console.print(
        "  Notes: a job also writes 1 DynamoDB checkpoint per batch of 1,000 (plus 4 per job); "
        "the second restore lists both buckets and copies nothing, so its row shows requests "
        "in total, not per 1,000 copied."
    )


# --- the child process ----------------------------------------------------------------------


class Meter:
    """S3 requests of one client, by operation."""

    def __init__(self, client: Any) -> None:
        self.counts: Counter[str] = Counter()
        client.meta.events.register("before-call.s3", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.counts[model.name] += 1

    def take(self) -> dict[str, int]:
        taken = dict(self.counts)
        self.counts.clear()
        return taken


def _fill(s3: Any, bucket: str, keys: list[str]) -> None:
    def put(key: str) -> None:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode() * 8)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, keys))


def _keys(count: int, device: str = DEVICE) -> list[str]:
    from video_index.core.keys import SegmentKey, format_key

    return [
        format_key(
            SegmentKey(
                kind="video",
                device=device,
                start=FIRST + timedelta(seconds=10 * i),
                duration_ms=10_000,
                id=f"{i:016x}",
                ext="mp4",
            )
        )
        for i in range(count)
    ]


class Latency:
    """A modelled network round trip: every request of ``client`` waits ``ms`` before it
    is sent (in the calling thread, as a real round trip does)."""

    def __init__(self, client: Any, ms: float) -> None:
        self.seconds = ms / 1000
        self.client = client
        if self.seconds:
            client.meta.events.register("before-send.s3", self._wait)

    def _wait(self, **_: Any) -> None:
        time.sleep(self.seconds)

    def remove(self) -> None:
        if self.seconds:
            self.client.meta.events.unregister("before-send.s3", self._wait)


def _restore_rows(
    s3: Any, bucket: Callable[[str], str], meter: Meter, count: int, latency_ms: int
) -> list[dict[str, Any]]:
    """Restore into an empty bucket, a second run, and the plain loop, all at one
    modelled latency."""
    from video_index.aws.objects import ObjectStore
    from video_index.deletion.restore import Restorer

    tag = f"{latency_ms}ms"
    at = f" ({latency_ms} ms per request)" if latency_ms else " (0 ms: CPU-bound)"
    replica = bucket(f"bench-replica-{tag}")
    _fill(s3, replica, _keys(count, "cam-restore"))
    target = bucket(f"bench-restored-{tag}")
    restorer = Restorer(ObjectStore(s3, target))
    rows: list[dict[str, Any]] = []
    latency = Latency(s3, latency_ms)
    try:
        for how in ("video-index restore, empty bucket", "video-index restore, second run"):
            meter.take()
            began = time.perf_counter()
            report = restorer.run(replica)
            seconds = time.perf_counter() - began
            rows.append(
                {
                    "how": how + at,
                    "objects": report.copied,
                    "seconds": seconds,
                    "requests": meter.take(),
                    "latency_ms": latency_ms,
                }
            )
        if rows[0]["objects"] != count or rows[1]["objects"] != 0:
            raise RuntimeError(f"restore copied {[r['objects'] for r in rows]}")
        plain = bucket(f"bench-plain-copy-{tag}")
        meter.take()
        began = time.perf_counter()
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=replica, Prefix="v1/"):
            for obj in page.get("Contents", []):
                source = {"Bucket": replica, "Key": obj["Key"]}
                s3.copy_object(Bucket=plain, Key=obj["Key"], CopySource=source)
        rows.append(
            {
                "how": "baseline: list, then CopyObject one by one" + at,
                "objects": count,
                "seconds": time.perf_counter() - began,
                "requests": meter.take(),
                "latency_ms": latency_ms,
            }
        )
    finally:
        latency.remove()
    return rows


def _measure(count: int) -> dict[str, Any]:
    from video_index.core.table_schema import create_tables
    from video_index.local import s3_fidelity
    from video_index.local.aws import client, isolated_session
    from video_index.local.stack import MotoServer

    undo = s3_fidelity.install()
    moto = MotoServer().start()
    try:
        session = isolated_session()
        s3 = client(session, "s3", moto.endpoint)
        dynamodb = client(session, "dynamodb", moto.endpoint)
        create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
        meter = Meter(s3)
        restores: list[dict[str, Any]] = []
        for latency_ms in (0, LATENCY_MS):
            restored = count if latency_ms == 0 else max(count // 10, 200)
            restores += _restore_rows(
                s3, lambda name: _versioned_bucket(s3, name), meter, restored, latency_ms
            )
        return {"delete": _measure_deletes(s3, dynamodb, meter, count), "restore": restores}
    finally:
        moto.stop()
        undo()


def _versioned_bucket(s3: Any, name: str) -> str:
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def _measure_deletes(s3: Any, dynamodb: Any, meter: Meter, count: int) -> list[dict[str, Any]]:
    """A deletion job (markers, then erase) against the baseline of one DeleteObject a key."""
    from video_index.aws.deletions import DeletionTable
    from video_index.aws.holds import HoldStore
    from video_index.aws.objects import ObjectStore
    from video_index.core.timeunits import to_epoch_ms
    from video_index.deletion.jobs import DeletionJobs
    from video_index.holds.service import Holds, HoldsHeldWindows

    out: list[dict[str, Any]] = []
    low, high = to_epoch_ms(FIRST), to_epoch_ms(FIRST + timedelta(days=3))
    for erase in (False, True):
        name = _versioned_bucket(s3, f"bench-job-{'erase' if erase else 'markers'}")
        _fill(s3, name, _keys(count))
        jobs = DeletionJobs(
            DeletionTable(dynamodb, "deletions"),
            ObjectStore(s3, name),
            enqueue=lambda _: None,
            holds=HoldsHeldWindows(Holds(HoldStore(dynamodb, "holds"))),  # read every batch
        )
        request = jobs.create(DEVICE, low, high, kind="video", erase=erase, created_by="bench")
        meter.take()
        began = time.perf_counter()
        job = jobs.run(request.deletion_id).request
        seconds = time.perf_counter() - began
        left = s3.list_objects_v2(Bucket=name, Prefix="v1/").get("KeyCount", 0)
        if job.deleted != count or left:
            raise RuntimeError(f"job deleted {job.deleted} of {count}, {left} left")
        how = "deletion job, erase (every version)" if erase else "deletion job, delete markers"
        out.append({"how": how, "objects": count, "seconds": seconds, "requests": meter.take()})

    name = _versioned_bucket(s3, "bench-loop")
    _fill(s3, name, _keys(count))
    meter.take()
    began = time.perf_counter()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix="v1/"):
        for obj in page.get("Contents", []):
            s3.delete_object(Bucket=name, Key=obj["Key"])
    seconds = time.perf_counter() - began
    out.append(
        {
            "how": "baseline: list, then DeleteObject one by one (aws s3 rm --recursive)",
            "objects": count,
            "seconds": seconds,
            "requests": meter.take(),
        }
    )
    return out


if __name__ == "__main__":
    from bench.context import isolate_from_aws

    isolate_from_aws()
    print(json.dumps(_measure(int(sys.argv[1]))))
