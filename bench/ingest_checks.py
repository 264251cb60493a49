"""The read model after ingest and the stream consumer, against an independent reference.

The reference is ``worlds.reference_projection`` (the projection the tests
compare the product with): the workload's objects as a listing, projected to
bucket figures, each hour's video coverage and each device's totals. Every bucket
and device item the consumer wrote must equal it, figure by figure.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from bench.context import BenchmarkFailed
from bench.stream_consumer import Delivery
from bench.workload import SEGMENT_MS, Upload, Workload
from video_index.core.layout import RUNS, device_total
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from video_index.ingest.ingestor import Outcome
from worlds.reference_projection import project, with_aggregates

_deserialize = TypeDeserializer().deserialize
_FIGURE = re.compile(r"^(?:[nbdc][0-3]|h)$")
_H = 2**64


def check_read_model(
    items: list[dict[str, Any]],
    uploads: list[Upload],
    etags: dict[str, str],
    outcomes: Counter[Outcome],
    failed: int,
    delivery: Delivery,
    workload: Workload,
    generation: int,
) -> list[tuple[str, str, str]]:
    """(check, expected, found) rows; raises :class:`BenchmarkFailed` on any mismatch."""
    plain = [{k: _deserialize(v) for k, v in item.items()} for item in items]
    prefix = f"g{generation}#"
    segments = [i for i in plain if i["pk"].startswith(prefix + "seg#") and i["present"]]
    buckets = {
        (i["pk"].removeprefix(prefix + "bkt#"), *i["sk"].split("#", 1)): i
        for i in plain
        if i["pk"].startswith(prefix + "bkt#")
    }
    devices = {i["sk"]: i for i in plain if i["pk"] == prefix + "devices"}

    listing = [{"Key": u.key, "Size": u.size, "ETag": f'"{etags[u.key]}"'} for u in uploads]
    reference = with_aggregates(project(listing), DEFAULT_GAP_TOLERANCE_MS)
    want_figures = {key: _figures(f) for key, f in reference.buckets.items()}
    got_figures = {key: _figures(item) for key, item in buckets.items()}
    want_runs = {(d, "video", h): runs for (d, h), runs in reference.runs.items()}
    got_runs = {key: [int(x) for x in item.get(RUNS, [])] for key, item in buckets.items()}
    want_totals = {d: t for (d, kind), t in reference.totals.items() if kind == "video"}
    got_totals = {
        device: tuple(int(item.get(device_total(name, "video"), -1)) for name in "nbdfl")
        for device, item in devices.items()
    }

    n = len(uploads)
    total_bytes = sum(u.size for u in uploads)

    def total(letter: str) -> int:
        return sum(int(i.get(f"{letter}{q}", 0)) for i in buckets.values() for q in range(4))

    rows = [
        ("records applied (event path)", f"{n:,}", f"{outcomes.get(Outcome.APPLIED, 0):,}"),
        (
            "other outcomes / batch item failures (event path)",
            "0 / 0",
            f"{sum(outcomes.values()) - outcomes.get(Outcome.APPLIED, 0)} / {failed}",
        ),
        ("segment items present", f"{n:,}", f"{len(segments):,}"),
        ("stream records the consumer took in", f"{n:,}", f"{delivery.records:,}"),
        (
            "bucket items equal to the reference (n, b, d, c by quarter; h)",
            f"{len(want_figures)} of {len(want_figures)}",
            f"{_matching(want_figures, got_figures)} of {len(got_figures)}",
        ),
        (
            "bucket coverage r equal to the reference (each hour's video runs)",
            f"{len(want_runs)} of {len(want_runs)}",
            f"{_matching(want_runs, got_runs)} of {len(got_runs)}",
        ),
        (
            "device items: n, b, d, first, last start equal to the reference",
            f"{len(want_totals)} of {len(want_totals)}",
            f"{_matching(want_totals, got_totals)} of {len(got_totals)}",
        ),
        ("segments summed from bucket items (n)", f"{n:,}", f"{total('n'):,}"),
        ("bytes summed from bucket items (b)", f"{total_bytes:,}", f"{total('b'):,}"),
        ("video ms summed from bucket items (d)", f"{n * SEGMENT_MS:,}", f"{total('d'):,}"),
        ("devices listed (device items)", f"{workload.devices}", f"{len(devices)}"),
    ]
    wrong = [row for row in rows if row[1] != row[2]]
    if wrong:
        raise BenchmarkFailed(
            "the read model is wrong after ingest and the consumer: "
            + "; ".join(f"{name}: expected {want}, found {got}" for name, want, got in wrong)
        )
    return rows


def _figures(item: dict[str, Any]) -> dict[str, int]:
    out = {name: int(value) for name, value in item.items() if _FIGURE.match(name) and value}
    if "h" in out:
        out["h"] %= _H
    return out


def _matching(want: dict[Any, Any], got: dict[Any, Any]) -> int:
    """How many keys of ``want`` ``got`` holds with an equal value."""
    return sum(got.get(key) == value for key, value in want.items())
