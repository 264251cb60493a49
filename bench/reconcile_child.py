"""One measured run of the reconcile benchmark, in its own process (so its peak RSS is its own).

``python -m bench.reconcile_child bare|reconcile '<json arguments>'`` writes its figures
as JSON to the ``out`` path given in the arguments:

* ``bare``: each data file of the report is fetched with one GET into a temporary
  file and streamed through pyarrow (``ParquetFile.iter_batches``, or
  ``pyarrow.csv.open_csv`` over the gzip), every column, no Python per row: the floor.
* ``reconcile``: the product's reconcile on the same report: ``Ops.objects("inventory",
  manifest)`` into ``Reconciler.plan``, then ``Reconciler.repair`` of every partition
  that differs. DynamoDB and S3 requests are counted with botocore ``before-call``
  hooks on the clients the product uses; DynamoDB read units are the ones the
  responses report (``ConsumedCapacity``; for reads, sized as AWS does).

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
from collections.abc import Iterator, Sequence
from typing import Any, Final

_READS: Final = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})


def peak_rss_kb() -> int:
    """``ru_maxrss`` (KB on Linux). Started through ``sh`` by the benchmark, so it is this
    process's own peak, not the benchmark process's (see ``bench.reconcile.run_child``)."""
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
    began = time.perf_counter()
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


def reconcile(args: dict[str, Any]) -> dict[str, Any]:
    import boto3
    import pyarrow.parquet  # noqa: F401 - imported lazily by the product: count it in the floor

    from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
    from video_index.aws.objects import ListedObject
    from video_index.core.settings import Settings
    from video_index.ops.service import build_ops

    dynamodb = boto3.client(
        "dynamodb", endpoint_url=args["dynamodb_endpoint"], config=CLIENT_CONFIG
    )
    s3 = boto3.client("s3", endpoint_url=args["s3_endpoint"], config=S3_CONFIG)
    dynamodb_calls = RequestCounter(dynamodb, "dynamodb")
    s3_calls = RequestCounter(s3, "s3")
    settings = Settings(bucket=args["bucket"], table=args["table"])
    ops = build_ops(settings, Clients(dynamodb=dynamodb, s3=s3, sqs=None))
    floor = peak_rss_kb()

    marks: dict[str, Any] = {}

    def timed(objects: Iterator[ListedObject]) -> Iterator[ListedObject]:
        count = 0
        for obj in objects:
            count += 1
            yield obj
        marks["inventory_done"] = time.perf_counter()
        marks["rows"] = count
        marks["inventory_rss_kb"] = peak_rss_kb()
        marks["dynamodb_at_inventory"] = dynamodb_calls.snapshot()
        marks["s3_at_inventory"] = s3_calls.snapshot()

    began = time.perf_counter()
    objects, manifest = ops.objects("inventory", args["manifest"])
    plan = ops.reconciler.plan(
        timed(objects),
        source="inventory",
        manifest=manifest,
        max_remove_share=settings.max_remove_share,
    )
    planned = time.perf_counter()
    dynamodb_at_plan, s3_at_plan = dynamodb_calls.snapshot(), s3_calls.snapshot()
    report = plan.report
    if report.refusal is None:
        for partition in plan.differing:
            report.add(ops.reconciler.repair(report.generation, partition, dry_run=False))
    finished = time.perf_counter()
    return {
        "rows": marks.get("rows", 0),
        "seconds": finished - began,
        "inventory_seconds": marks["inventory_done"] - began,
        "read_model_seconds": planned - marks["inventory_done"],
        "repair_seconds": finished - planned,
        "floor_rss_kb": floor,
        "inventory_rss_kb": marks["inventory_rss_kb"],
        "dynamodb": dynamodb_calls.snapshot(),
        "dynamodb_at_inventory": marks["dynamodb_at_inventory"],
        "dynamodb_at_plan": dynamodb_at_plan,
        "s3": s3_calls.snapshot(),
        "s3_at_inventory": marks["s3_at_inventory"],
        "s3_at_plan": s3_at_plan,
        "read_units": dynamodb_calls.read_units,
        "differing": [p.as_dict() for p in plan.differing],
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
