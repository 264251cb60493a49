"""What one batch of changes does to each aggregated item, before any item is read.

A batch is grouped per item: each bucket and each device item gets its entries in
stream order, each tagged with the change's sequence number. The store applies
only the entries newer than the item's high-water mark, in one write per item; so
a batch delivered again, cut in two, or resumed from its middle applies every
change exactly once (docs/read-model.md#aggregation-by-stream).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from video_index.aggregate.records import Change
from video_index.core.layout import bucket_sk
from video_index.core.projection import transition_deltas
from video_index.core.ranges import clip_to_hours
from video_index.core.timeunits import HOUR_MS

BucketKey = tuple[int, str, str]  # generation, device, bucket sort key
DeviceKey = tuple[int, str]  # generation, device


@dataclass(frozen=True, slots=True)
class BucketEntry:
    """One change's effect on one bucket: figure deltas, and for video its coverage."""

    seq: str
    figures: dict[str, int]
    #: Pieces of the hour the segment now covers (it became present).
    added: tuple[tuple[int, int], ...] = ()
    #: The segment stopped being present: the hour's coverage is counted again.
    removed: bool = False
    #: Receipts of files S3 received in the bucket's hour (its arrival history).
    arrived: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceEntry:
    """One change's effect on its kind's totals on the device item."""

    seq: str
    kind: str
    count: int = 0
    size: int = 0
    duration: int = 0
    added_start: int | None = None
    removed_start: int | None = None
    mark: str | None = None
    #: A file that became present, with its receipt: ``(received_ms, received − end)``.
    arrival: tuple[int, int] | None = None


@dataclass
class BatchPlan:
    buckets: dict[BucketKey, list[BucketEntry]] = field(default_factory=lambda: defaultdict(list))
    devices: dict[DeviceKey, list[DeviceEntry]] = field(default_factory=lambda: defaultdict(list))


def plan_batch(changes: Iterable[Change]) -> BatchPlan:
    plan = BatchPlan()
    for change in changes:
        segment, old, new = change.segment, change.old, change.new
        became = new.present and not old.present
        ceased = old.present and not new.present
        hours: dict[str, list[tuple[int, int]]] = defaultdict(list)
        if segment.kind == "video" and became:
            for hour, start, end in clip_to_hours(segment.start_ms, segment.end_ms, HOUR_MS):
                hours[bucket_sk(segment.kind, hour)].append((start, end))
        if segment.kind == "video" and ceased:
            for hour, _, _ in clip_to_hours(segment.start_ms, segment.end_ms, HOUR_MS):
                hours[bucket_sk(segment.kind, hour)] = []
        deltas = transition_deltas(segment, old, new)
        received = change.received_ms if became else None
        arrived = {} if received is None else {bucket_sk(segment.kind, hour_of(received)): received}
        for sk in sorted(set(deltas) | set(hours) | set(arrived)):
            plan.buckets[(change.generation, segment.device, sk)].append(
                BucketEntry(
                    change.seq,
                    deltas.get(sk, {}),
                    tuple(hours.get(sk, ())),
                    ceased and sk in hours,
                    (arrived[sk],) if sk in arrived else (),
                )
            )
        sign = int(new.present) - int(old.present)
        size = (new.size if new.present else 0) - (old.size if old.present else 0)
        arrival = None if received is None else (received, received - segment.end_ms)
        if sign or size or change.mark is not None or arrival is not None:
            plan.devices[(change.generation, segment.device)].append(
                DeviceEntry(
                    change.seq,
                    segment.kind,
                    count=sign,
                    size=size,
                    duration=sign * segment.duration_ms,
                    added_start=segment.start_ms if became else None,
                    removed_start=segment.start_ms if ceased else None,
                    mark=change.mark,
                    arrival=arrival,
                )
            )
    return plan


def hour_of(epoch_ms: int) -> int:
    return epoch_ms - epoch_ms % HOUR_MS
