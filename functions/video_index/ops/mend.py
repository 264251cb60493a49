"""Mending aggregates that drifted from the segment items (reconcile's last step).

The stream consumer keeps buckets and device totals exact, so drift here means a
lost stream (the consumer stopped for longer than the stream keeps records) or
damage. The segment items are the truth. Because the consumer may still be
applying changes, a mend reads the segment items, passes a barrier (every change
made before it is aggregated) and reads again: when no segment item changed in
between (``ver`` only grows), every state it read was written before the barrier,
so the buckets read after it already hold all of them and the difference is
drift. Otherwise it starts over; a change still on its way is never counted
twice (docs/read-model.md#barriers).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from aws_lambda_powertools import Logger

from video_index.aggregate.barrier import Barrier
from video_index.aggregate.store import AggregateStore
from video_index.aws.store import ConditionFailed, ReadModelStore, TransientStoreError
from video_index.core.keys import format_start, parse_key
from video_index.core.layout import (
    OVERLAPS,
    RUNS,
    VERSION,
    bucket_pk,
    bucket_sk,
    key_of_segment_item,
    segment_pk,
)
from video_index.core.projection import contribution
from video_index.core.ranges import clip_to_hours, covering
from video_index.core.timeunits import DAY_MS, HOUR_MS, from_epoch_ms
from video_index.ops.fingerprints import FIGURES, Partition

logger = Logger(child=True)

FIX_ATTEMPTS: Final = 8
#: A bucket's figures (its other attributes belong to the consumer).
_FIGURES: Final = frozenset(FIGURES) | {"h"}

#: bucket sort key -> (figure deltas, coverage and overlaps to set, or None)
Fixes = dict[str, tuple[dict[str, int], dict[str, list[int]] | None]]


class Mender:
    def __init__(
        self,
        store: ReadModelStore,
        aggregates: AggregateStore,
        barrier: Barrier,
        *,
        gap_tolerance_ms: int,
    ) -> None:
        self._store = store
        self._aggregates = aggregates
        self._barrier = barrier
        self._gap = gap_tolerance_ms

    def mend(self, generation: int, partition: Partition, *, dry_run: bool) -> int:
        """Make the partition's buckets (and its kind's totals) equal to the projection of
        its segment items; the number of buckets that differed."""
        fixes, _, before = self._differences(generation, partition)
        if dry_run or not fixes:
            return len(fixes)
        for _ in range(FIX_ATTEMPTS):
            self._barrier.pass_(generation, [(partition.device, partition.kind)])
            fixes, versions, after = self._differences(generation, partition)
            if not fixes:
                return 0
            if after != before:  # a segment changed meanwhile: its change may be on its way
                before = after
                continue
            try:
                for sk, (delta, runs) in sorted(fixes.items()):
                    self._store.mend_bucket(
                        generation, partition.device, sk, delta, runs, versions.get(sk)
                    )
            except ConditionFailed:
                continue
            self._aggregates.recount_totals(generation, partition.device, partition.kind)
            return len(fixes)
        raise TransientStoreError(f"buckets of {partition} kept changing; retry later")

    def _differences(
        self, generation: int, partition: Partition
    ) -> tuple[Fixes, dict[str, int | None], dict[str, int]]:
        """What differs, the buckets' versions and the segment items' versions as read."""
        start = partition.start_ms
        low, high = (
            bucket_sk(partition.kind, start),
            bucket_sk(partition.kind, start + DAY_MS - HOUR_MS),
        )
        seen: dict[str, dict[str, Any]] = {
            str(item["sk"]): item
            for item in self._store.query_range(bucket_pk(generation, partition.device), low, high)
        }
        expected: dict[str, dict[str, int]] = {}
        pieces: dict[str, list[tuple[int, int]]] = {}
        segment_versions: dict[str, int] = {}
        pk = segment_pk(generation, partition.device, partition.kind)
        # Video that began up to an hour before the day reaches into its first hour.
        for item in self._segments(pk, start - HOUR_MS, start + DAY_MS):
            segment_versions[str(item["sk"])] = int(item.get("ver", 0))
            if not item.get("present"):
                continue
            segment = parse_key(key_of_segment_item(pk, str(item["sk"])))
            for sk, figures in contribution(segment, int(item["size"])).items():
                if low <= sk <= high:
                    into = expected.setdefault(sk, {})
                    for name, value in figures.items():
                        into[name] = into.get(name, 0) + value
            if partition.kind == "video":
                for hour, begin, end in clip_to_hours(segment.start_ms, segment.end_ms, HOUR_MS):
                    if low <= (sk := bucket_sk(partition.kind, hour)) <= high:
                        pieces.setdefault(sk, []).append((begin, end))
        fixes: Fixes = {}
        for sk in set(seen) | set(expected) | set(pieces):
            held = seen.get(sk, {})
            figures = {n: int(v) for n, v in held.items() if n in _FIGURES}
            want = expected.get(sk, {})
            delta = {
                name: diff
                for name in set(want) | set(figures)
                if (diff := want.get(name, 0) - figures.get(name, 0))
            }
            runs = None
            if partition.kind == "video":
                want_runs, want_overlaps = covering(pieces.get(sk, []), self._gap)
                if [int(edge) for edge in held.get(RUNS, [])] != want_runs:
                    runs = {RUNS: want_runs, OVERLAPS: want_overlaps}
            if delta or runs is not None:
                fixes[sk] = (delta, runs)
        versions = {
            sk: int(item[VERSION]) if VERSION in item else None for sk, item in seen.items()
        }
        return fixes, versions, segment_versions

    def _segments(self, pk: str, start_ms: int, end_ms: int) -> Iterator[dict[str, Any]]:
        low = format_start(from_epoch_ms(start_ms))
        high = format_start(from_epoch_ms(end_ms - 1)) + "~"
        return self._store.query_range(pk, low, high)
