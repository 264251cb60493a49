"""One child of the fleet simulation, in its own process (so its peak RSS is its own).

``python -m bench.fleet_child unit|reduce|scan '<json arguments>'`` writes its figures
as JSON to the ``out`` path in the arguments:

* ``unit`` — the product's map child: :func:`video_index.ops.mapreduce.run_unit` of one
  unit (inventory slices) against the bench's S3 (moto server), partials written to the
  reports bucket, exactly as the ``fingerprint-units`` step does;
* ``reduce`` — the product's reduce child: :func:`~video_index.ops.mapreduce.reduce_shard`
  of one shard, reading every unit's partial of it from the reports bucket;
* ``scan`` — the read model's side of one Scan segment, without a DynamoDB server:
  the wire pages of N items (1 MB each, as DynamoDB cuts them) are parsed by botocore's
  own JSON parser and handed to the product's ``read_model_partial`` through its
  ``ReadModelStore`` — the client-side cost per item of a Scan child (the service's
  latency per page is an assumption of the extrapolation, not measured here).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.reconcile_child import high_water_kb, peak_rss_kb


def _context(args: dict[str, Any]) -> Any:
    import boto3

    from video_index.aws.clients import S3_CONFIG
    from video_index.aws.objects import ObjectStore
    from video_index.ops.inventory import read_manifest
    from video_index.ops.mapreduce import MapContext, S3Partials

    s3 = boto3.client("s3", endpoint_url=args["s3_endpoint"], config=S3_CONFIG)
    return MapContext(
        s3=s3,
        segments=ObjectStore(s3, args["bucket"]),
        store=None,  # type: ignore[arg-type]  # inventory units never read the table
        partials=S3Partials(ObjectStore(s3, args["reports"])),
        manifest=lambda uri: read_manifest(s3, uri),
    )


def unit(args: dict[str, Any]) -> dict[str, Any]:
    from video_index.ops.mapreduce import run_unit
    from video_index.ops.payloads import FingerprintUnit, UnitBatchInput

    context = _context(args)
    floor = peak_rss_kb()
    began, cpu = time.perf_counter(), time.process_time()
    counts = run_unit(
        context, FingerprintUnit.parse(args["unit"]), UnitBatchInput.parse(args["run"])
    )
    return {
        "seconds": time.perf_counter() - began,
        "cpu_seconds": time.process_time() - cpu,
        "rows": counts.objects_seen,
        "floor": floor,
    }


def reduce(args: dict[str, Any]) -> dict[str, Any]:
    from video_index.ops.mapreduce import reduce_shard

    context = _context(args)
    floor = peak_rss_kb()
    began, cpu = time.perf_counter(), time.process_time()
    counts, comparison = reduce_shard(
        context.partials, args["folder"], args["shard"], args["unit_count"]
    )
    return {
        "seconds": time.perf_counter() - began,
        "cpu_seconds": time.process_time() - cpu,
        "partitions": counts.partitions_checked,
        "with_objects": len(comparison.with_objects),
        "floor": floor,
    }


class _PagedScan:
    """A DynamoDB client whose Scan answers pages of wire items, parsed by botocore."""

    def __init__(self, pages: list[bytes]) -> None:
        import botocore.session
        from botocore.parsers import create_parser

        model = botocore.session.get_session().get_service_model("dynamodb")
        self._shape: Any = model.operation_model("Scan").output_shape
        self._parser = create_parser("json")
        self._pages = pages
        self.requests = 0

    def scan(self, **request: Any) -> dict[str, Any]:
        at = int(request.get("ExclusiveStartKey", {}).get("page", {}).get("N", 0))
        self.requests += 1
        response = {"body": self._pages[at], "headers": {}, "status_code": 200}
        parsed: dict[str, Any] = self._parser.parse(response, self._shape)
        if at + 1 < len(self._pages):
            parsed["LastEvaluatedKey"] = {"page": {"N": str(at + 1)}}
        return parsed


def scan(args: dict[str, Any]) -> dict[str, Any]:
    from bench.capacity import item_size
    from bench.reconcile_replay import PAGE_BYTES
    from bench.reconcile_world import World
    from video_index.aws.store import ReadModelStore
    from video_index.ops.mapreduce import read_model_partial

    pages: list[bytes] = []
    page: list[Any] = []
    size = 0
    for item in World(args["rows"]).read_model_items():
        page.append(item)
        size += item_size(item)
        if size >= PAGE_BYTES:
            pages.append(json.dumps({"Items": page, "Count": len(page)}).encode())
            page, size = [], 0
    pages.append(json.dumps({"Items": page, "Count": len(page)}).encode())
    client = _PagedScan(pages)
    store = ReadModelStore(client, "bench", tombstone_days=35)
    floor = peak_rss_kb()
    began, cpu = time.perf_counter(), time.process_time()
    _, scanned = read_model_partial(store, 1)
    return {
        "seconds": time.perf_counter() - began,
        "cpu_seconds": time.process_time() - cpu,
        "items": scanned,
        "pages": client.requests,
        "floor": floor,
    }


def main(argv: Sequence[str]) -> int:
    mode, raw = argv
    args = json.loads(raw)
    result = {"unit": unit, "reduce": reduce, "scan": scan}[mode](args)
    result["peak_rss_kb"] = peak_rss_kb()
    result["vm_hwm_kb"] = high_water_kb()
    with open(args["out"], "w", encoding="utf-8") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
