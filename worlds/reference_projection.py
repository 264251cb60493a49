"""An independent P(S3) for tests: computed from an S3 listing with nothing from the product.

Written from docs/keys.md, docs/read-model.md and the layout documented in
``video_index.core.layout`` only, deliberately simple (no incremental logic): the
product maintains its figures by deltas under concurrency, this module recounts
them from scratch.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import xxhash

_KEY = re.compile(
    r"^v1/(?P<kind>video|sensor|analysis)/(?P<device>[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)/"
    r"(?P<Y>[0-9]{4})/(?P<M>[0-9]{2})/(?P<D>[0-9]{2})/(?P<H>[0-9]{2})/"
    r"(?P<file>(?P<start>[0-9]{8}T[0-9]{6}\.[0-9]{3}Z)_(?P<dur>0|[1-9][0-9]*)_"
    r"(?P<id>[a-z0-9]{1,64})\.(?P<ext>mp4|ts|json))$"
)
_LIMITS = {
    "video": (1, 3_600_000, ("mp4", "ts")),
    "sensor": (0, 86_400_000, ("json",)),
    "analysis": (0, 86_400_000, ("json",)),
}
QUARTER = 900_000
HOUR = 3_600_000


@dataclass(frozen=True)
class RefSegment:
    kind: str
    device: str
    filename: str
    start: int
    end: int
    size: int
    etag: str
    id: str


@dataclass
class RefModel:
    segments: dict[tuple[str, str, str], RefSegment] = field(default_factory=dict)
    buckets: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    devices: set[str] = field(default_factory=set)
    #: (device, UTC hour label) -> video coverage of the hour, flattened [s1, e1, ...]
    runs: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    #: (device, kind) -> (segments, bytes, duration ms, first start, last start)
    totals: dict[tuple[str, str], tuple[int, int, int, int, int]] = field(default_factory=dict)


def parse(key: str) -> RefSegment | None:
    m = _KEY.match(key)
    if not m:
        return None
    kind = m["kind"]
    low, high, exts = _LIMITS[kind]
    dur = int(m["dur"])
    if not low <= dur <= high or m["ext"] not in exts:
        return None
    try:
        start_dt = datetime.strptime(m["start"], "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    if (m["Y"], m["M"], m["D"], m["H"]) != (
        f"{start_dt:%Y}",
        f"{start_dt:%m}",
        f"{start_dt:%d}",
        f"{start_dt:%H}",
    ):
        return None
    start = round(start_dt.timestamp() * 1000)
    return RefSegment(kind, m["device"], m["file"], start, start + dur, 0, "", m["id"])


def hour_label(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y%m%dT%H")


def project(listing: list[dict[str, Any]]) -> RefModel:
    """P(S3) of ``list_objects_v2`` entries (``Key``, ``Size``, ``ETag``)."""
    model = RefModel()
    buckets: dict[tuple[str, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for obj in listing:
        parsed = parse(obj["Key"])
        if parsed is None:
            continue
        seg = RefSegment(
            parsed.kind,
            parsed.device,
            parsed.filename,
            parsed.start,
            parsed.end,
            int(obj["Size"]),
            obj["ETag"].strip('"'),
            parsed.id,
        )
        model.segments[(seg.device, seg.kind, seg.filename)] = seg
        model.devices.add(seg.device)
        q = (seg.start % HOUR) // QUARTER
        home = buckets[(seg.device, seg.kind, hour_label(seg.start))]
        home[f"n{q}"] += 1
        home[f"b{q}"] += seg.size
        home[f"d{q}"] += seg.end - seg.start
        # XXH64 of the key (docs/read-model.md), by the reference xxHash binding.
        home["h"] += xxhash.xxh64_intdigest(obj["Key"].encode())
        if seg.kind == "video":
            # every quarter-hour instant t with start < t < end
            t = seg.start - seg.start % QUARTER + QUARTER
            while t < seg.end:
                buckets[(seg.device, seg.kind, hour_label(t))][f"c{(t % HOUR) // QUARTER}"] += 1
                t += QUARTER
    model.buckets = {k: {n: v for n, v in f.items() if v} for k, f in buckets.items()}
    model.buckets = {k: f for k, f in model.buckets.items() if f}
    return model


def with_aggregates(model: RefModel, tolerance: int) -> RefModel:
    """``model`` with each hour's video coverage and each kind's totals, recounted."""
    pieces: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    totals: dict[tuple[str, str], list[RefSegment]] = defaultdict(list)
    for seg in model.segments.values():
        totals[(seg.device, seg.kind)].append(seg)
        if seg.kind != "video":
            continue
        at = seg.start - seg.start % HOUR
        while at < seg.end:
            piece = (max(seg.start, at), min(seg.end, at + HOUR))
            pieces[(seg.device, hour_label(at))].append(piece)
            at += HOUR
    for (device, hour), spans in pieces.items():
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1] + tolerance:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        model.runs[(device, hour)] = [edge for run in merged for edge in run]
    for key, segs in totals.items():
        model.totals[key] = (
            len(segs),
            sum(s.size for s in segs),
            sum(s.end - s.start for s in segs),
            min(s.start for s in segs),
            max(s.start for s in segs),
        )
    return model


def ranges(model: RefModel, device: str, tolerance: int) -> list[tuple[int, int]]:
    """Maximal unions of the device's video intervals with gaps <= tolerance."""
    spans = sorted(
        (s.start, s.end)
        for s in model.segments.values()
        if s.device == device and s.kind == "video"
    )
    out: list[list[int]] = []
    for start, end in spans:
        if out and start <= out[-1][1] + tolerance:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def list_bucket(s3: Any, bucket: str) -> list[dict[str, Any]]:
    listing: list[dict[str, Any]] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        listing.extend(page.get("Contents", []))
    return listing
