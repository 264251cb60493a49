"""The reconcile benchmark's sizes, goals and runs, and what it stands on: a moto S3 server,
the read model loaded into DynamoDB, the drift restored between runs, the measured child
processes (bench/reconcile.py).
"""

from __future__ import annotations

import logging
import queue
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import boto3
from moto.server import ThreadedMotoServer

from bench import child
from bench.context import BenchmarkFailed
from bench.reconcile_world import (
    GENERATION,
    KIND,
    WireItem,
    World,
    partition_of,
)
from video_index.local.moto_process import free_port

FULL_SIZES: Final = (100_000, 1_000_000)
QUICK_SIZES: Final = (20_000, 100_000)
#: Largest world whose read model is loaded whole and scanned by the DynamoDB engine by
#: default: none (moto's Scan of a 20,000-row world outlasts the client's read timeout).
REAL_DYNAMODB_MAX: Final = 0
ENV_REAL_DYNAMODB: Final = "BENCH_RECONCILE_REAL_DYNAMODB"
FORMATS: Final = ("CSV", "Parquet")
#: Rows per data file: bounded as AWS bounds its files, so a bigger report has more
#: files, not bigger ones, and the reader's memory is compared at equal file sizes.
ROWS_PER_FILE: Final = 50_000
REGION: Final = "us-east-1"
DEST_BUCKET: Final = "bench-inventory-reports"
CREATED: Final = datetime(2026, 12, 1, 3, 17, tzinfo=UTC)
#: "Far below one request per object": at least a hundred times below.
GOAL_REQUESTS_PER_OBJECT: Final = 0.01
#: The inventory pass at least at half the rows/s of a bare pyarrow read of the same files.
GOAL_INVENTORY_SHARE: Final = 0.5
#: "Memory stays flat": peak RSS at 10x the rows within this factor.
GOAL_RSS_GROWTH: Final = 1.25
LOAD_THREADS: Final = 4
#: The attributes of a bucket item that are figures (docs/read-model.md); the others
#: (version, high-water mark, coverage) are the consumer's bookkeeping.
FIGURE: Final = re.compile(r"[nbdc][0-3]|h")
CHILD_TIMEOUT_S: Final = 3_600


@dataclass
class Run:
    fmt: str
    rows: int
    dynamodb_mode: str
    bare: dict[str, Any]
    reconcile: dict[str, Any]

    @property
    def bare_rows_per_s(self) -> float:
        return float(self.bare["rows"]) / float(self.bare["seconds"])

    @property
    def inventory_rows_per_s(self) -> float:
        return float(self.reconcile["rows"]) / float(self.reconcile["inventory_seconds"])

    @property
    def cpu_share(self) -> float:
        """Inventory pass ÷ bare read in rows per CPU second (this process's threads)."""
        bare = float(self.bare["rows"]) / float(self.bare["cpu_seconds"])
        return float(self.reconcile["rows"]) / float(self.reconcile["inventory_cpu_seconds"]) / bare

    @property
    def whole_rows_per_s(self) -> float:
        return float(self.reconcile["rows"]) / float(self.reconcile["seconds"])

    def dynamodb_requests(self) -> int:
        return sum(self.reconcile["dynamodb"].values())

    def s3_requests(self) -> int:
        return sum(self.reconcile["s3"].values())

    def per_object(self, requests: int) -> float:
        return requests / self.rows


# -- infrastructure ---------------------------------------------------------------------


class S3Server:
    """moto's S3 as a local server: the parent writes the bucket, the children read it."""

    def __init__(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> S3Server:
        self._server.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.stop()

    def client(self) -> Any:
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION)


def load_items(endpoint: str, table: str, items: Iterable[WireItem]) -> int:
    """``BatchWriteItem`` of a stream of items, from a few threads, holding only the
    batches in flight."""
    batches: queue.Queue[list[dict[str, Any]] | None] = queue.Queue(maxsize=LOAD_THREADS * 4)
    errors: list[BaseException] = []

    def writer() -> None:
        client: Any = boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION)
        while (batch := batches.get()) is not None:
            try:
                requests = batch
                while requests:
                    response = client.batch_write_item(RequestItems={table: requests})
                    requests = response.get("UnprocessedItems", {}).get(table, [])
            except BaseException as exc:  # reported after the join
                errors.append(exc)

    threads = [threading.Thread(target=writer, daemon=True) for _ in range(LOAD_THREADS)]
    for thread in threads:
        thread.start()
    count = 0
    batch: list[dict[str, Any]] = []
    for item in items:
        batch.append({"PutRequest": {"Item": item}})
        count += 1
        if len(batch) == 25:
            batches.put(batch)
            batch = []
    if batch:
        batches.put(batch)
    for _ in threads:
        batches.put(None)
    for thread in threads:
        thread.join()
    if errors:
        raise BenchmarkFailed(f"loading the read model failed: {errors[0]!r}")
    return count


def _query(client: Any, table: str, pk: str, low: str, high: str) -> Iterator[WireItem]:
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":low": {"S": low}, ":high": {"S": high}},
        "ConsistentRead": True,
    }
    while True:
        page = client.query(**request)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _partition_items(client: Any, table: str, number: int) -> tuple[list[WireItem], list[WireItem]]:
    """(segment items, bucket items) DynamoDB holds for one partition's UTC day."""
    partition = partition_of(number)
    day = f"{partition.day:%Y%m%d}"
    segments = list(
        _query(client, table, f"g{GENERATION}#seg#{partition.device}#{KIND}", f"{day}T", f"{day}T~")
    )
    buckets = list(
        _query(
            client,
            table,
            f"g{GENERATION}#bkt#{partition.device}",
            f"{KIND}#{day}T00",
            f"{KIND}#{day}T23",
        )
    )
    return segments, buckets


def restore_drift(client: Any, endpoint: str, table: str, world: World) -> None:
    """Put the drifted partitions back in their drifted state (a reconcile repaired them)."""
    for number in world.drifted:
        segments, buckets = _partition_items(client, table, number)
        for item in (*segments, *buckets):
            client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})
        load_items(endpoint, table, world.believed(number).items(partition_of(number).device))


def repaired_problems(client: Any, table: str, world: World) -> list[str]:
    """How the drifted partitions differ from the projection of S3 (nothing, after reconcile)."""
    problems: list[str] = []
    for number in world.drifted:
        truth = world.truth(number)
        segments, buckets = _partition_items(client, table, number)
        held = {
            item["sk"]["S"]: (int(item["size"]["N"]), item["etag"]["S"])
            for item in segments
            if item.get("present", {}).get("BOOL")
        }
        want = {seg.filename: (seg.size, seg.etag) for seg in truth.segments}
        if held != want:
            missing, extra = sorted(set(want) - set(held))[:3], sorted(set(held) - set(want))[:3]
            problems.append(
                f"partition {partition_of(number).as_dict()}: segments differ "
                f"(missing {missing}, extra {extra}, or sizes/ETags)"
            )
        figures = {
            item["sk"]["S"]: {
                name: int(value["N"])
                for name, value in item.items()
                if FIGURE.fullmatch(name) and int(value["N"])
            }
            for item in buckets
        }
        figures = {sk: f for sk, f in figures.items() if f}
        if figures != truth.buckets:
            every = set(figures) | set(truth.buckets)
            wrong = sorted(sk for sk in every if figures.get(sk) != truth.buckets.get(sk))
            problems.append(
                f"partition {partition_of(number).as_dict()}: bucket figures differ in {wrong[:3]}"
            )
    return problems


def run_child(mode: str, args: dict[str, Any]) -> dict[str, Any]:
    return child.run_child("bench.reconcile_child", mode, args, timeout_s=CHILD_TIMEOUT_S)
