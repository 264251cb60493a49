"""Planning a distributed fingerprint pass: which units the map runs, how many shards
the reduce has (docs/operations.md, "At fleet scale").

A *unit* is what one map child reads: inventory data files (a large one split into
parts by byte range or row group; small ones grouped), or a batch of listing
prefixes (``v1/<kind>/<device>/``), or one segment of a parallel Scan of the read
model. Sizes are bounded so that every child finishes far inside Lambda's 15
minutes (the figures are in docs/operations.md and ``python -m bench --only fleet``).
A *shard* is one reducer's share of the partitions (by a hash of the partition).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from video_index.aws.objects import ObjectStore
from video_index.core.keys import KEY_PREFIX, KINDS
from video_index.ops.inventory import Manifest
from video_index.ops.payloads import FingerprintUnit, InventorySlice, ScanSegment

MIB: Final = 1 << 20
#: A unit's slices as JSON, at most: a unit is one child execution's input (with
#: ``BatchInput``), and Step Functions refuses a state payload over 256 KiB
#: (``core.service_limits.STATE_PAYLOAD_BYTES``). Half of it leaves room for the batch
#: input's manifest key; a report of many small data files fills units by this, not bytes.
UNIT_PAYLOAD_BYTES: Final = 128 * 1024


@dataclass(frozen=True)
class Sizing:
    """How big units and shards are; the defaults are the deployed ones."""

    #: Inventory bytes (compressed, as the manifest gives them) per unit: a child reads
    #: them in about a minute (docs/operations.md); a larger file is split into parts.
    unit_bytes: int = 256 * MIB
    #: Listing prefixes (one device and kind each) per unit.
    prefixes_per_unit: int = 16
    #: Read-model bytes per Scan segment, and at most this many segments.
    scan_segment_bytes: int = 512 * MIB
    max_scan_segments: int = 1_000
    #: Partial rows one reducer merges (rows of all units for its partitions).
    reduce_rows: int = 4_000_000
    max_shards: int = 256
    #: Fixed counts instead of estimates (tests, benchmarks).
    scan_segments: int | None = None
    shards: int | None = None


def inventory_units(manifest: Manifest, sizing: Sizing, *, first: int = 0) -> list[FingerprintUnit]:
    """Units over the report's data files, in file order: a file larger than
    ``unit_bytes`` becomes parts of its own units; smaller ones share units, as many as
    fit ``unit_bytes`` of data and :data:`UNIT_PAYLOAD_BYTES` of JSON."""
    units: list[FingerprintUnit] = []
    pending: list[InventorySlice] = []
    pending_bytes = pending_json = 0

    def flush() -> None:
        nonlocal pending, pending_bytes, pending_json
        if pending:
            units.append(FingerprintUnit(unit=first + len(units), slices=pending))
        pending, pending_bytes, pending_json = [], 0, 0

    for data_file in manifest.files:
        size = data_file.size or 0
        parts = max(1, math.ceil(size / sizing.unit_bytes))
        if parts > 1:
            flush()
            for part in range(parts):
                piece = InventorySlice(
                    key=data_file.key,
                    size=data_file.size,
                    md5=data_file.md5,
                    part=part,
                    parts=parts,
                )
                units.append(FingerprintUnit(unit=first + len(units), slices=[piece]))
            continue
        piece = InventorySlice(key=data_file.key, size=data_file.size, md5=data_file.md5)
        piece_json = len(json.dumps(piece.dump()).encode()) + 1  # and its comma
        if pending and (
            pending_bytes + size > sizing.unit_bytes
            or pending_json + piece_json > UNIT_PAYLOAD_BYTES
        ):
            flush()
        pending.append(piece)
        pending_bytes += size
        pending_json += piece_json
    flush()
    return units


def listing_units(objects: ObjectStore, sizing: Sizing, *, first: int = 0) -> list[FingerprintUnit]:
    """Units covering every key under ``v1/``: one prefix per device and kind (found
    with delimited LISTs), every other folder under ``v1/`` whole, and the keys right
    under ``v1/`` and ``v1/<kind>/`` (invalid ones, but they are counted)."""
    prefixes: list[str] = []
    shallow = [KEY_PREFIX]
    for folder in sorted(objects.folders(KEY_PREFIX)):
        if folder in KINDS:
            kind_prefix = f"{KEY_PREFIX}{folder}/"
            shallow.append(kind_prefix)
            prefixes.extend(
                f"{kind_prefix}{device}/" for device in sorted(objects.folders(kind_prefix))
            )
        else:
            prefixes.append(f"{KEY_PREFIX}{folder}/")
    units = [FingerprintUnit(unit=first, shallow=shallow)]
    step = sizing.prefixes_per_unit
    for at in range(0, len(prefixes), step):
        if at == 0:
            units[0] = FingerprintUnit(unit=first, shallow=shallow, prefixes=prefixes[:step])
        else:
            units.append(
                FingerprintUnit(unit=first + len(units), prefixes=prefixes[at : at + step])
            )
    return units


def scan_segments(table_bytes: int, sizing: Sizing) -> int:
    if sizing.scan_segments is not None:
        return max(1, sizing.scan_segments)
    wanted = math.ceil(table_bytes / sizing.scan_segment_bytes)
    return min(max(1, wanted), sizing.max_scan_segments)


def scan_units(segments: int, *, first: int = 0) -> list[FingerprintUnit]:
    return [
        FingerprintUnit(unit=first + s, scan=ScanSegment(segment=s, segments=segments))
        for s in range(segments)
    ]


def shard_count(unit_count: int, partitions: int, sizing: Sizing) -> int:
    """Shards such that one reducer merges about ``reduce_rows`` partial rows: every unit
    may hold a row for every partition (inventory rows are in no particular order)."""
    if sizing.shards is not None:
        return max(1, sizing.shards)
    rows = unit_count * max(1, partitions)
    return min(max(1, math.ceil(rows / sizing.reduce_rows)), sizing.max_shards)


def numbered(units: Iterable[FingerprintUnit]) -> list[FingerprintUnit]:
    """The units numbered 0, 1, ... in order."""
    return [unit.model_copy(update={"unit": number}) for number, unit in enumerate(units)]
