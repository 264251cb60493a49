"""Data access of the stream consumer: bucket and device items, written versioned.

Each aggregated item is read (or taken from this container's cache), the batch's
entries newer than its high-water mark are applied, and the whole item is put back
conditioned on the version it was computed from. A lost race (another consumer,
or reconcile mending the item) returns the item as it now is, and the entries are
applied to that instead; so no write is ever lost or doubled
(docs/read-model.md#aggregation-by-stream).

Coverage (``r``) only grows by union; when a segment stops being present the
hour's coverage is counted again from the segment items, and a kind's first/last
start the same way when the segment removed was at an edge. Those reads see the
segment items as they are now, possibly ahead of the stream; that is safe because
every later change of those items is still on its way and applied in turn.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from video_index.aggregate.plan import BucketEntry, BucketKey, DeviceEntry, DeviceKey
from video_index.aws.dynamodb import ConditionFailed, DynamoTable, TransientStoreError, wire
from video_index.core.clock import add_arrivals
from video_index.core.keys import MAX_DURATION_MS, format_start
from video_index.core.layout import (
    AGGREGATE_SK,
    ARRIVAL_JOIN_MS,
    ARRIVALS,
    CONTROL_PK,
    HIGH_WATER,
    OVERLAPS,
    RUNS,
    VERSION,
    bucket_hour_ms,
    bucket_pk,
    device_total,
    devices_pk,
    segment_pk,
)
from video_index.core.ranges import add_covering, add_runs, clip_to_hours, covering
from video_index.core.timeunits import HOUR_MS, from_epoch_ms

#: Attempts at one item before the batch is failed (and retried by Lambda).
_ATTEMPTS = 8
#: Items remembered per container: a shard's consumer mostly writes the same items.
_CACHE_ITEMS = 4096

Item = dict[str, Any]


class AggregateStore(DynamoTable):
    """Versioned read-modify-write of bucket and device items, with a cache."""

    def __init__(self, client: Any, table: str, *, gap_tolerance_ms: int) -> None:
        super().__init__(client, table)
        self._gap = gap_tolerance_ms
        self._cache: OrderedDict[tuple[str, str], Item | None] = OrderedDict()

    # -- buckets -------------------------------------------------------------------

    def apply_bucket(self, key: BucketKey, entries: Sequence[BucketEntry]) -> None:
        generation, device, sk = key

        def apply(item: Item) -> Item | None:
            pending = [entry for entry in entries if entry.seq > str(item.get(HIGH_WATER, ""))]
            if not pending:
                return None
            new = dict(item)
            for entry in pending:
                for name, value in entry.figures.items():
                    new[name] = int(new.get(name, 0)) + value
            if any(entry.removed for entry in pending):
                new[RUNS], new[OVERLAPS] = self._count_runs(generation, device, sk)
            elif any(entry.added for entry in pending):
                added = [piece for entry in pending for piece in entry.added]
                new[RUNS], new[OVERLAPS] = add_covering(
                    item.get(RUNS, []), item.get(OVERLAPS, []), added, self._gap
                )
            arrived = [(t, t) for entry in pending for t in entry.arrived]
            if arrived:
                new[ARRIVALS] = add_runs(item.get(ARRIVALS, []), arrived, ARRIVAL_JOIN_MS)
            for name in (RUNS, OVERLAPS):
                if not new.get(name):
                    new.pop(name, None)
            new[HIGH_WATER] = max(entry.seq for entry in pending)
            return new

        self._update(bucket_pk(generation, device), sk, apply)

    def _count_runs(self, generation: int, device: str, sk: str) -> tuple[list[int], list[int]]:
        """The hour's coverage and overlaps from the present video segment items that reach
        into it."""
        kind, hour = bucket_hour_ms(sk)
        pieces = []
        for item in self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            FilterExpression="present = :yes",
            ProjectionExpression="#start, #end",
            ExpressionAttributeNames={"#start": "start", "#end": "end"},
            ExpressionAttributeValues=wire(
                {
                    ":pk": segment_pk(generation, device, kind),
                    ":low": format_start(from_epoch_ms(hour - MAX_DURATION_MS["video"])),
                    ":high": format_start(from_epoch_ms(hour + HOUR_MS)),
                    ":yes": True,
                }
            ),
        ):
            for piece_hour, start, end in clip_to_hours(
                int(item["start"]), int(item["end"]), HOUR_MS
            ):
                if piece_hour == hour:
                    pieces.append((start, end))
        return covering(pieces, self._gap)

    # -- devices -------------------------------------------------------------------

    def apply_device(self, key: DeviceKey, entries: Sequence[DeviceEntry]) -> None:
        generation, device = key

        def apply(item: Item) -> Item | None:
            new = dict(item)
            changed = False
            for kind in sorted({entry.kind for entry in entries}):
                water = str(item.get(device_total("w", kind), ""))
                pending = [e for e in entries if e.kind == kind and e.seq > water]
                if pending:
                    self._apply_kind(new, generation, device, kind, pending)
                    changed = True
            return new if changed else None

        self._update(devices_pk(generation), device, apply)

    def _apply_kind(
        self, item: Item, generation: int, device: str, kind: str, pending: list[DeviceEntry]
    ) -> None:
        n, b, d, f, last = (device_total(name, kind) for name in "nbdfl")
        arrivals = [entry.arrival for entry in pending if entry.arrival is not None]
        if arrivals:
            clock = device_total("k", kind)
            item[clock] = add_arrivals(item.get(clock, []), arrivals)
        for entry in pending:
            item[n] = int(item.get(n, 0)) + entry.count
            item[b] = int(item.get(b, 0)) + entry.size
            item[d] = int(item.get(d, 0)) + entry.duration
            if entry.mark is not None:
                item[device_total("m", kind)] = entry.mark
        added = [e.added_start for e in pending if e.added_start is not None]
        removed = {e.removed_start for e in pending if e.removed_start is not None}
        for name, pick, descending in ((f, min, False), (last, max, True)):
            held = [int(item[name])] if name in item else []
            edge = pick([*added, *held], default=None) if item[n] > 0 else None
            if edge is not None and edge in removed:  # that edge went: look for the next one
                edge = self._edge(generation, device, kind, descending=descending, beyond=edge)
            if edge is None:  # no segment (or every one gone again: those changes are coming)
                item.pop(name, None)
            else:
                item[name] = edge
        item[device_total("w", kind)] = max(entry.seq for entry in pending)

    def _edge(
        self,
        generation: int,
        device: str,
        kind: str,
        *,
        descending: bool,
        beyond: int | None = None,
    ) -> int | None:
        """The first (or last) start of a present segment of the kind, read from its items;
        from ``beyond`` on (the edge just removed), so the tombstones of segments that went
        before it (retention deletes the oldest first) are not read again."""
        values: dict[str, Any] = {":pk": segment_pk(generation, device, kind), ":yes": True}
        condition = "pk = :pk"
        if beyond is not None:
            condition += " AND sk < :bound" if descending else " AND sk >= :bound"
            values[":bound"] = format_start(from_epoch_ms(beyond + (1 if descending else 0)))
        for item in self.query(
            KeyConditionExpression=condition,
            FilterExpression="present = :yes",
            ProjectionExpression="#start",
            ExpressionAttributeNames={"#start": "start"},
            ExpressionAttributeValues=wire(values),
            ScanIndexForward=not descending,
        ):
            return int(item["start"])
        return None

    def recount_totals(self, generation: int, device: str, kind: str) -> None:
        """A kind's totals recounted from its buckets and its segment items' edges (reconcile
        mends them after mending the buckets; the stream consumer never needs this)."""
        count = size = duration = 0
        for bucket in self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :kind)",
            ExpressionAttributeValues=wire(
                {":pk": bucket_pk(generation, device), ":kind": f"{kind}#"}
            ),
        ):
            for q in range(4):
                count += int(bucket.get(f"n{q}", 0))
                size += int(bucket.get(f"b{q}", 0))
                duration += int(bucket.get(f"d{q}", 0))

        def recount(item: Item) -> Item:
            new = dict(item)
            new[device_total("n", kind)] = count
            new[device_total("b", kind)] = size
            new[device_total("d", kind)] = duration
            for figure, descending in (("f", False), ("l", True)):
                edge = (
                    self._edge(generation, device, kind, descending=descending) if count else None
                )
                if edge is None:
                    new.pop(device_total(figure, kind), None)
                else:
                    new[device_total(figure, kind)] = edge
            return new

        self._update(devices_pk(generation), device, recount, fresh=True)

    # -- control -------------------------------------------------------------------

    def record_batch(self, applied_ms: int, created_ms: int) -> None:
        """When a batch was applied and how old its newest record was (the lag)."""
        self.call(
            "put_item",
            TableName=self.table,
            Item=wire(
                {
                    "pk": CONTROL_PK,
                    "sk": AGGREGATE_SK,
                    "t": applied_ms,
                    "a": created_ms,
                    "lag_ms": max(0, applied_ms - created_ms),
                }
            ),
            ReturnConsumedCapacity="TOTAL",
        )

    # -- plumbing ------------------------------------------------------------------

    def _update(
        self, pk: str, sk: str, change: Callable[[Item], Item | None], *, fresh: bool = False
    ) -> None:
        """Put ``change(item)`` back conditioned on the version it was computed from; on a
        lost race compute again from the item as it now is. None from ``change``: nothing
        to write. ``fresh`` reads the item instead of trusting the cache."""
        item = self._read(pk, sk) if fresh else self._item(pk, sk)
        for _ in range(_ATTEMPTS):
            new = change(item)
            if new is None:
                return
            try:
                self._put(pk, sk, item, new)
                return
            except ConditionFailed as moved:
                item = self._moved(pk, sk, moved)
        raise TransientStoreError(f"aggregate item {pk}/{sk} kept changing; retrying the batch")

    def _item(self, pk: str, sk: str) -> Item:
        if (pk, sk) in self._cache:
            self._cache.move_to_end((pk, sk))
            return dict(self._cache[(pk, sk)] or {"pk": pk, "sk": sk})
        return self._read(pk, sk)

    def _read(self, pk: str, sk: str) -> Item:
        item = self.get_item({"pk": pk, "sk": sk}, consistent=True)
        self._remember(pk, sk, item)
        return _ints(item) if item else {"pk": pk, "sk": sk}

    def _moved(self, pk: str, sk: str, moved: ConditionFailed) -> Item:
        if moved.known and moved.current:
            self._remember(pk, sk, moved.current)
            return _ints(moved.current)
        return self._read(pk, sk)

    def _put(self, pk: str, sk: str, old: Item, new: Item) -> None:
        """Put ``new`` if the item is still at ``old``'s version (or still absent)."""
        version = old.get(VERSION)
        new = {**new, "pk": pk, "sk": sk, VERSION: int(version or 0) + 1}
        request: dict[str, Any] = {
            "TableName": self.table,
            "Item": wire(new),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        if version is None:
            request["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            request["ConditionExpression"] = "#v = :v"
            request["ExpressionAttributeNames"] = {"#v": VERSION}
            request["ExpressionAttributeValues"] = wire({":v": int(version)})
        try:
            self.conditional("put_item", **request)
        except ConditionFailed:
            self._cache.pop((pk, sk), None)
            raise
        self._remember(pk, sk, new)

    def _remember(self, pk: str, sk: str, item: Item | None) -> None:
        self._cache[(pk, sk)] = _ints(item) if item else None
        self._cache.move_to_end((pk, sk))
        while len(self._cache) > _CACHE_ITEMS:
            self._cache.popitem(last=False)


def _ints(item: Item) -> Item:
    """Numbers as ints (DynamoDB returns Decimals); lists of numbers likewise."""

    def value(v: Any) -> Any:
        if isinstance(v, Decimal):
            return int(v)
        if isinstance(v, list):
            return [value(x) for x in v]
        return v

    return {name: value(v) for name, v in item.items()}
