"""Restore at fleet size: the plan's units and one unit's work (docs/bulk.md).

A unit is what one map child restores: slices of the replica's S3 Inventory report
(data files, or parts of a large one: the units reconcile's fingerprint pass reads,
:func:`~video_index.ops.planning.inventory_units`), or, without a report, a batch of
the replica's device prefixes (``v1/<kind>/<device>/``).

A unit applies the single-process restore's rules (:mod:`video_index.deletion.restore`):

* an object a deletion window in force covers, and no hold, is **withheld** (the
  manifest is filtered by deletion windows and holds);
* an object the bucket holds with the same size is **identical** and skipped (segment
  keys carry a content id, so same key and size is the same segment; an inventory
  has no ETags to compare): a second run copies nothing;
* everything else is copied with CopyObject (part by part above 5 GiB), a bounded
  number in flight.

What the bucket holds is read with one LIST per day folder the unit's keys fall in
(1,000 keys a page), not a HEAD per key. Inventory rows come in no promised order, so
a unit sorts its keys first. A unit is idempotent: a retry after a failure finds what
it copied identical.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Final

from video_index.aws.objects import ObjectStore
from video_index.bulk.payloads import RestoreBatchInput, RestoreCounts
from video_index.core.keys import ValidKey, classify_key
from video_index.deletion.enforcement import Enforcer, Verdict
from video_index.deletion.restore import DEFAULT_WORKERS, Restorer
from video_index.ops.inventory import Manifest, ManifestFile
from video_index.ops.inventory.columns import slice_columns
from video_index.ops.payloads import FingerprintUnit
from video_index.ops.planning import Sizing, inventory_units, listing_units

#: ``v1/<kind>/<device>/YYYY/MM/DD/`` — the day folder a key's target listing reads.
_DAY_FOLDERS: Final = 7


@dataclass
class UnitContext:
    """What a restore unit needs: the bucket, the windows in force, the holds."""

    s3: Any
    target: ObjectStore
    #: The windows in force and the holds: held footage is restored even inside a
    #: deletion window (docs/holds.md).
    enforcer: Callable[[], Enforcer | None]
    manifest: Callable[[str], Manifest] | None = None
    workers: int = DEFAULT_WORKERS


def plan_units(
    replica: ObjectStore, manifest: Manifest | None, sizing: Sizing | None = None
) -> list[FingerprintUnit]:
    """The run's units: over the report's data files, or over the replica's device
    prefixes (a LIST per kind and per 1,000 devices)."""
    if manifest is not None:
        if manifest.source_bucket != replica.bucket:
            raise ValueError(
                f"the inventory report is of {manifest.source_bucket}, not of {replica.bucket}"
            )
        return inventory_units(manifest, sizing or Sizing())
    return listing_units(replica, sizing or Sizing())


def restore_unit(
    context: UnitContext, unit: FingerprintUnit, run: RestoreBatchInput
) -> RestoreCounts:
    """Restore one unit; raises on the first copy that fails (the map retries the unit)."""
    began = time.perf_counter()
    counts = RestoreCounts(units=1)
    enforcer = context.enforcer()
    # ``unit.shallow`` (keys right under v1/ and v1/<kind>/) holds no segment: skipped.
    for prefix in unit.prefixes:
        restorer = Restorer(context.target, enforcer)
        report = restorer.run(
            run.source_bucket, prefix=prefix, dry_run=run.dry_run, workers=context.workers
        )
        counts = counts.plus(
            RestoreCounts(
                compared=report.compared,
                copied=report.copied,
                bytes_copied=report.bytes_copied,
                identical=report.identical,
                withheld=report.withheld,
                held=report.held,
            )
        )
    if unit.slices:
        if run.manifest is None or context.manifest is None:
            raise ValueError("a unit with inventory slices needs the run's manifest")
        rows = sorted(_inventory_rows(context, context.manifest(run.manifest), unit))
        counts = counts.plus(_restore_rows(context, enforcer, rows, run))
    return counts.model_copy(update={"seconds": time.perf_counter() - began})


def _inventory_rows(
    context: UnitContext, manifest: Manifest, unit: FingerprintUnit
) -> Iterator[tuple[str, int]]:
    for piece in unit.slices:
        data_file = ManifestFile(key=piece.key, size=piece.size, md5=piece.md5)
        for batch in slice_columns(
            context.s3, manifest, data_file, part=piece.part, parts=piece.parts
        ):
            sizes = batch.sizes.to_pylist()
            for key, size in zip(batch.keys.to_pylist(), sizes, strict=True):
                yield str(key), int(size or 0)


def _restore_rows(
    context: UnitContext,
    enforcer: Enforcer | None,
    rows: Sequence[tuple[str, int]],
    run: RestoreBatchInput,
) -> RestoreCounts:
    """Filter, compare with the bucket a day folder at a time, copy what is missing."""
    copied = bytes_copied = identical = withheld = held = 0
    wanted: list[tuple[str, int]] = []
    for key, size in rows:
        classified = classify_key(key)
        if not isinstance(classified, ValidKey):
            continue  # restore brings back segments only (v1/), like the listing path
        segment = classified.segment
        verdict = enforcer.judge(segment) if enforcer is not None else Verdict.FREE
        if verdict is Verdict.ENFORCED:
            withheld += 1
            continue
        held += verdict is Verdict.HELD
        wanted.append((key, size))
    missing: list[tuple[str, int]] = []
    for folder, group in groupby(wanted, key=lambda row: _day_folder(row[0])):
        present = {obj.key: obj.size for obj in context.target.list(folder)}
        for key, size in group:
            if present.get(key) == size:
                identical += 1
            else:
                missing.append((key, size))
    if not run.dry_run and missing:
        with ThreadPoolExecutor(max_workers=context.workers) as pool:
            list(
                pool.map(
                    lambda row: context.target.copy_in(run.source_bucket, row[0], row[1]),
                    missing,
                )
            )
    copied = len(missing)
    bytes_copied = sum(size for _, size in missing)
    return RestoreCounts(
        compared=len(rows),
        copied=copied,
        bytes_copied=bytes_copied,
        identical=identical,
        withheld=withheld,
        held=held,
    )


def _day_folder(key: str) -> str:
    return "/".join(key.split("/")[:_DAY_FOLDERS]) + "/"
