"""One measured run of the reconcile benchmark, in its own process (so its peak RSS is its own).

``python -m bench.reconcile_child bare|reconcile '<json arguments>'`` writes its figures
as JSON to the ``out`` path given in the arguments:

* ``bare``: each data file of the report is fetched with one GET into a temporary
  file and streamed through pyarrow (``ParquetFile.iter_batches``, or
  ``pyarrow.csv.open_csv`` over the gzip), every column, no Python per row: the floor.
* ``reconcile``: the product's reconcile on the same report, as the distributed plan
  runs it, its children one after the other in this process: ``Ops.plan`` (units over
  the data files, a Scan unit), ``run_unit`` of each inventory unit (the *inventory
  pass*: GET, verify, column-wise parse and fingerprint), then the Scan unit,
  ``reduce_shard``, ``decide``, and ``Reconciler.complete`` (the repair of every
  partition that differs). DynamoDB and S3 requests are counted with botocore
  ``before-call`` hooks on the clients the product uses; DynamoDB read units are the
  ones the responses report (``ConsumedCapacity``; for reads, sized as AWS does).

Peak RSS is ``getrusage(RUSAGE_SELF).ru_maxrss``; the import floor is the same figure
taken after the imports, before any work.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

_READS: Final = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})


def peak_rss_kb() -> int:
    """``ru_maxrss`` (KB on Linux). Started through ``sh`` by the benchmark, so it is this
    process's own peak, not the benchmark process's (see :mod:`bench.child`)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def high_water_kb() -> int:
    """``VmHWM`` of /proc/self/status: the same peak, from the kernel's memory map (0 if absent)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def bare(args: dict[str, Any]) -> dict[str, Any]:
    import boto3
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    s3 = boto3.client("s3", endpoint_url=args["s3_endpoint"])
    floor = peak_rss_kb()
    began, cpu = time.perf_counter(), time.process_time()
    bucket, _, key = args["manifest"][len("s3://") :].partition("/")
    manifest = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    destination = str(manifest["destinationBucket"]).rsplit(":", 1)[-1]
    rows = batches = 0
    download = parse = 0.0
    for entry in manifest["files"]:
        step = time.perf_counter()
        suffix = ".csv.gz" if manifest["fileFormat"] == "CSV" else ".parquet"
        handle, path = tempfile.mkstemp(suffix=suffix)
        try:
            with os.fdopen(handle, "wb") as out:
                body = s3.get_object(Bucket=destination, Key=entry["key"])["Body"]
                for chunk in body.iter_chunks(1 << 20):
                    out.write(chunk)
            parsed_at = time.perf_counter()
            download += parsed_at - step
            if manifest["fileFormat"] == "CSV":
                names = [name.strip() for name in str(manifest["fileSchema"]).split(",")]
                reader = pa_csv.open_csv(
                    path,
                    read_options=pa_csv.ReadOptions(column_names=names),
                    convert_options=pa_csv.ConvertOptions(
                        column_types={name: pa.string() for name in names if name != "Size"}
                    ),
                )
                for batch in reader:
                    rows += batch.num_rows
                    batches += 1
            else:
                with pq.ParquetFile(path) as parquet:
                    for batch in parquet.iter_batches(batch_size=65_536):
                        rows += batch.num_rows
                        batches += 1
            parse += time.perf_counter() - parsed_at
        finally:
            os.unlink(path)
    seconds = time.perf_counter() - began
    return {
        "cpu_seconds": time.process_time() - cpu,
        "rows": rows,
        "batches": batches,
        "seconds": seconds,
        "download_seconds": download,
        "parse_seconds": parse,
        "floor_rss_kb": floor,
    }


class RequestCounter:
    """Every API call a client makes (botocore ``before-call``), by operation, and the read
    capacity its responses report (``ConsumedCapacity``; one cheap look per response, so
    the count costs the measured run nothing noticeable)."""

    def __init__(self, client: Any, service: str) -> None:
        self.calls: Counter[str] = Counter()
        self.read_units = 0.0
        client.meta.events.register(f"before-call.{service}", self._count)
        client.meta.events.register(f"after-call.{service}", self._consumed)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _consumed(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        if model.name in _READS:
            consumed = parsed.get("ConsumedCapacity")
            entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
            self.read_units += sum(float(e.get("CapacityUnits", 0) or 0) for e in entries)

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)


def fresh_changes(handle: Any, since_s: float) -> Any:
    """``handle`` given only the stream records written from ``since_s`` on: the bench
    loaded the read model (its aggregates included) before this process started, so
    those records are not changes the consumer still owes."""

    def handler(event: dict[str, Any]) -> dict[str, Any]:
        records = [r for r in event["Records"] if _created_s(r["dynamodb"]) >= since_s]
        answer: dict[str, Any] = handle({"Records": records}) if records else {}
        return answer or {"batchItemFailures": []}

    return handler


def _created_s(stream: dict[str, Any]) -> float:
    created = stream.get("ApproximateCreationDateTime", 0)
    return float(created.timestamp() if hasattr(created, "timestamp") else created)


def stream_pump(args: dict[str, Any], since_s: float) -> Any:
    """What the barrier waits on: the read model's stream delivered to the consumer here
    (deployed, Lambda delivers it), from the bench's own endpoint (the replay forwards
    no stream requests)."""
    import boto3

    from video_index.local.streams import StreamEventSource
    from worlds.aggregation import Aggregation, streams_client

    dynamodb = boto3.client("dynamodb", endpoint_url=args["streams_endpoint"])
    aggregation = Aggregation(dynamodb, args["table"])
    source = StreamEventSource(
        dynamodb,
        streams_client(dynamodb),
        args["table"],
        fresh_changes(aggregation.aggregator.handle, since_s),
    )
    return source.drain


def _counted_ops(args: dict[str, Any]) -> tuple[Any, Any, RequestCounter, RequestCounter]:
    """The product's ops on the benchmark's endpoints, each client's requests counted:
    (ops, settings, DynamoDB requests, S3 requests)."""
    import boto3
    import pyarrow.parquet  # noqa: F401 - imported lazily by the product: count it in the floor

    from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
    from video_index.core.settings import Settings
    from video_index.ops.service import build_ops

    dynamodb = boto3.client(
        "dynamodb", endpoint_url=args["dynamodb_endpoint"], config=CLIENT_CONFIG
    )
    s3 = boto3.client("s3", endpoint_url=args["s3_endpoint"], config=S3_CONFIG)
    dynamodb_calls = RequestCounter(dynamodb, "dynamodb")
    s3_calls = RequestCounter(s3, "s3")
    settings = Settings(bucket=args["bucket"], table=args["table"], holds_table=args["holds_table"])
    now_s = float(args["now"])
    ops = build_ops(
        settings,
        Clients(dynamodb=dynamodb, s3=s3, sqs=None),
        pump=stream_pump(args, time.time()),
        clock=lambda: now_s,
    )
    return ops, settings, dynamodb_calls, s3_calls


def reconcile(args: dict[str, Any]) -> dict[str, Any]:
    from video_index.core.contract import reconcile_object_key
    from video_index.ops.mapreduce import (
        MemoryPartials,
        decide,
        reduce_shard,
        run_unit,
        sum_shards,
        sum_units,
    )
    from video_index.ops.payloads import UnitBatchInput
    from video_index.ops.reconcile import Plan

    ops, settings, dynamodb_calls, s3_calls = _counted_ops(args)
    floor = peak_rss_kb()

    # The distributed plan, its children run one after the other in this process (one
    # worker: the figures are one child's), inventory units first, then the Scan.
    began, cpu = time.perf_counter(), time.process_time()
    report = ops.reconciler.new_report(source="inventory")
    plan, units = ops.plan(
        run_id=report.run_id,
        folder=reconcile_object_key(report.run_id, ""),
        source="inventory",
        manifest=args["manifest"],
        generation=report.generation,
    )
    report.manifest = plan.manifest
    context = ops.map_context(MemoryPartials())
    run = UnitBatchInput(
        folder=plan.folder,
        manifest=plan.manifest,
        generation=plan.generation,
        shard_count=plan.shard_count,
    )
    inventory = [run_unit(context, unit, run) for unit in units if not unit.scan]
    inventory_done, inventory_cpu = time.perf_counter(), time.process_time() - cpu
    inventory_rss = peak_rss_kb()
    dynamodb_at_inventory, s3_at_inventory = dynamodb_calls.snapshot(), s3_calls.snapshot()
    scans = [run_unit(context, unit, run) for unit in units if unit.scan]
    reduced = [
        reduce_shard(context.partials, plan.folder, shard, len(units))
        for shard in range(plan.shard_count)
    ]
    differing = sorted(p for _, comparison in reduced for p in comparison.differing)
    decide(
        report,
        sum_units([*inventory, *scans]),
        sum_shards(counts for counts, _ in reduced),
        max_remove_share=settings.max_remove_share,
    )
    planned = time.perf_counter()
    dynamodb_at_plan, s3_at_plan = dynamodb_calls.snapshot(), s3_calls.snapshot()
    report = ops.reconciler.complete(Plan(report, differing))
    finished = time.perf_counter()
    return {
        "rows": sum(u.objects_seen for u in inventory),
        "units": len(units),
        "shards": plan.shard_count,
        "seconds": finished - began,
        "inventory_seconds": inventory_done - began,
        "inventory_cpu_seconds": inventory_cpu,
        "read_model_seconds": planned - inventory_done,
        "repair_seconds": finished - planned,
        "floor_rss_kb": floor,
        "inventory_rss_kb": inventory_rss,
        "dynamodb": dynamodb_calls.snapshot(),
        "dynamodb_at_inventory": dynamodb_at_inventory,
        "dynamodb_at_plan": dynamodb_at_plan,
        "s3": s3_calls.snapshot(),
        "s3_at_inventory": s3_at_inventory,
        "s3_at_plan": s3_at_plan,
        "read_units": dynamodb_calls.read_units,
        "differing": [p.as_dict() for p in differing],
        "report": report.as_dict(),
    }


def main(argv: Sequence[str]) -> int:
    mode, raw = argv
    args = json.loads(raw)
    result = bare(args) if mode == "bare" else reconcile(args)
    result["peak_rss_kb"] = peak_rss_kb()
    result["vm_hwm_kb"] = high_water_kb()
    with open(args["out"], "w", encoding="utf-8") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
