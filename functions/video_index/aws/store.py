"""Data access for the read model: segment, bucket, device and control items.

boto3 clients are passed in; every request goes through :class:`~video_index.aws.dynamodb.
DynamoTable`, which maps every failure once, so callers only see :class:`ConditionFailed`
(the item moved under us: retry with the state attached), :class:`TransientStoreError`
(throttling, transaction conflicts, 5xx: let SQS retry the record) or :class:`StoreError`
(a bug or a misconfiguration). The layout of the items is docs/read-model.md."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from video_index.aws.batch_reads import batch_get
from video_index.aws.clients import Clients
from video_index.aws.dynamodb import (
    ConditionFailed,
    DynamoTable,
    StoreError,
    TransientStoreError,
    plain,
    projection,
    wire,
    wire_value,
)
from video_index.core.keys import SegmentKey
from video_index.core.layout import (
    CONTROL_PK,
    DEFAULT_GENERATION,
    GENERATION_SK,
    MARK,
    RETIRED_SK,
    VERSION,
    bucket_pk,
    device_total,
    devices_pk,
    segment_pk,
    segment_sk,
)
from video_index.core.models import SegmentRecord, received_of
from video_index.core.projection import ObjectState
from video_index.core.settings import Settings

__all__ = ["ConditionFailed", "ReadModelStore", "StoreError", "TransientStoreError"]

#: Keys per BatchGetItem (DynamoDB's limit).
_BATCH_GET_LIMIT = 100


class ReadModelStore(DynamoTable):
    """Reads and writes segment, bucket, device and control items of one table."""

    def __init__(
        self,
        client: Any,
        table: str,
        *,
        tombstone_days: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(client, table)
        self._tombstone_seconds = tombstone_days * 86_400
        self._clock = clock

    # -- generations ---------------------------------------------------------------

    def generations(self) -> list[int]:
        """Generations ingest must write: the serving one, plus one being rebuilt."""
        control = self.get_item({"pk": CONTROL_PK, "sk": GENERATION_SK}) or {}
        current = int(control.get("current", DEFAULT_GENERATION))
        building = control.get("building")
        return [current] if building is None else [current, int(building)]

    # -- segments ------------------------------------------------------------------

    def get_segment(self, generation: int, segment: SegmentKey) -> SegmentRecord | None:
        item = self.get_item(self._segment_key(generation, segment), consistent=True)
        return SegmentRecord.from_attributes(item) if item else None

    def write_transition(
        self,
        generation: int,
        segment: SegmentKey,
        old: SegmentRecord | None,
        new: ObjectState,
        seq: str,
        *,
        observed: bool = False,
        container: str | None = None,
        init_end: int | None = None,
        decode_start_ms: int | None = None,
    ) -> None:
        """Move one key from ``old`` (as read or assumed) to ``new``: one conditional put.

        The put is conditioned on ``old`` (absent, or exactly version ``old.ver``):
        a redelivered or reordered event finds a newer ``ver`` (or an equal or
        greater ``seq``) and changes nothing; concurrent writers of one key are
        serialized by the condition; a write whose response was lost is recognized
        on retry by its ``seq``. Each successful put is one stream record carrying
        the old and the new image, from which the stream consumer derives the
        aggregates (:mod:`video_index.aggregate`): no other item is written here.
        """
        record = SegmentRecord(
            present=new.present,
            size=new.size if new.present else 0,
            etag=new.etag if new.present else "",
            seq=seq,
            ver=(old.ver if old else 0) + 1,
            start=segment.start_ms,
            end=segment.end_ms,
            id=segment.id,
            observed=observed,
            expires_at=None if new.present else int(self._clock()) + self._tombstone_seconds,
            container=container if new.present else None,
            init_end=init_end if new.present else None,
            decode_start_ms=decode_start_ms if new.present else None,
            rcv=received_of(old, new),
        )
        put: dict[str, Any] = {
            "TableName": self.table,
            "Item": wire({**self._segment_key(generation, segment), **record.to_attributes()}),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        if old is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "ver = :ver"
            put["ExpressionAttributeValues"] = {":ver": wire_value(old.ver)}
        try:
            self.conditional("put_item", **put)
        except ConditionFailed as moved:
            raise _segment_moved(moved.current) from None

    # -- barriers (video_index.aggregate.barrier) ----------------------------------

    def mark_lane(self, generation: int, device: str, kind: str, token: str) -> bool:
        """Set ``token`` on one segment item of the partition; False when it has none."""
        pk = segment_pk(generation, device, kind)
        items, _ = self.query_partition(pk, limit=1)
        if not items:
            return False
        try:
            self.conditional(
                "update_item",
                TableName=self.table,
                Key=wire({"pk": pk, "sk": items[0]["sk"]}),
                UpdateExpression="SET #mark = :token",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#mark": MARK},
                ExpressionAttributeValues=wire({":token": token}),
            )
        except ConditionFailed:  # removed by its TTL meanwhile: try the next item
            return self.mark_lane(generation, device, kind, token)
        return True

    def lane_mark(self, generation: int, device: str, kind: str) -> str | None:
        """The last token the consumer passed on this partition."""
        item = self.get_item({"pk": devices_pk(generation), "sk": device}, consistent=True)
        mark = (item or {}).get(device_total("m", kind))
        return str(mark) if mark is not None else None

    def lanes(self, generation: int) -> set[tuple[str, str]]:
        """(device, kind) of every segment partition the consumer has seen in a generation."""
        found = set()
        for item in self.query_all(devices_pk(generation)):
            for name in item:
                figure, _, kind = name.partition(":")
                if kind and figure in ("w", "m"):
                    found.add((str(item["sk"]), kind))
        return found

    # -- repairs and control -------------------------------------------------------

    def mend_bucket(
        self,
        generation: int,
        device: str,
        sk: str,
        delta: dict[str, int],
        runs: dict[str, list[int]] | None,
        version: int | None,
    ) -> None:
        """ADD ``delta`` to a bucket item (and set its coverage and overlaps, ``runs`` by
        attribute, an empty list removing one) only if it is still at ``version``: what
        reconcile does to a bucket that drifted from its segment items. Losing to the stream
        consumer (or another mend) raises :class:`ConditionFailed`; the caller re-reads."""
        names: dict[str, str] = {"#v": VERSION}
        values: dict[str, Any] = {":one": 1}
        adds = ["#v :one"]
        for i, (name, value) in enumerate(sorted(delta.items())):
            names[f"#f{i}"] = name
            values[f":d{i}"] = value
            adds.append(f"#f{i} :d{i}")
        expression = "ADD " + ", ".join(adds)
        given = sorted((runs or {}).items())
        names.update({f"#r{i}": name for i, (name, _) in enumerate(given)})
        values.update({f":r{i}": edges for i, (_, edges) in enumerate(given) if edges})
        sets = [f"#r{i} = :r{i}" for i, (_, edges) in enumerate(given) if edges]
        removes = [f"#r{i}" for i, (_, edges) in enumerate(given) if not edges]
        expression += (" SET " + ", ".join(sets)) if sets else ""
        expression += (" REMOVE " + ", ".join(removes)) if removes else ""
        if version is None:
            condition = "attribute_not_exists(#v)"
        else:
            condition = "#v = :v"
            values[":v"] = version
        self.conditional(
            "update_item",
            TableName=self.table,
            Key=wire({"pk": bucket_pk(generation, device), "sk": sk}),
            UpdateExpression=expression,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=wire(values),
        )

    def update_control(
        self,
        sk: str,
        expression: str,
        condition: str,
        values: dict[str, Any],
        names: dict[str, str] | None = None,
    ) -> None:
        """A conditional update of one control item; :class:`ConditionFailed` if it lost."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": wire({"pk": CONTROL_PK, "sk": sk}),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": wire(values),
        }
        if names:
            request["ExpressionAttributeNames"] = names
        self.conditional("update_item", **request)

    def delete_prefix(self, prefix: str, *, pause: float = 0.0) -> int:
        """Delete every item whose pk starts with ``prefix`` (a dropped generation)."""
        deleted = 0
        batch: list[dict[str, Any]] = []
        for item in self.scan_prefix(prefix, attributes=("sk",)):
            batch.append({"DeleteRequest": {"Key": wire({"pk": item["pk"], "sk": item["sk"]})}})
            if len(batch) == 25:
                deleted += self._delete_batch(batch)
                batch = []
                if pause:
                    time.sleep(pause)
        if batch:
            deleted += self._delete_batch(batch)
        return deleted

    def _delete_batch(self, requests: list[dict[str, Any]]) -> int:
        count = len(requests)
        for attempt in range(8):
            response = self.call("batch_write_item", RequestItems={self.table: requests})
            requests = response.get("UnprocessedItems", {}).get(self.table, [])
            if not requests:
                return count
            time.sleep(min(2.0, 0.05 * 2**attempt))
        raise TransientStoreError(f"{len(requests)} deletes left unprocessed; retry later")

    def put_control(self, sk: str, attributes: dict[str, Any]) -> None:
        self.call(
            "put_item",
            TableName=self.table,
            Item=wire({"pk": CONTROL_PK, "sk": sk, **attributes}),
            ReturnConsumedCapacity="TOTAL",
        )

    # -- reading -------------------------------------------------------------------

    def query_range(
        self, pk: str, low: str, high: str, *, descending: bool = False, page: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Items of one partition with ``low <= sk <= high``, in sort order, paged by 1 MB (or
        by ``page`` items: a reader that stops early reads only the pages it used)."""
        return self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=wire({":pk": pk, ":low": low, ":high": high}),
            ScanIndexForward=not descending,
            **({"Limit": page} if page else {}),
        )

    def query_all(self, pk: str) -> Iterator[dict[str, Any]]:
        """Every item of one partition, in sort order, paged by 1 MB."""
        return self.query(
            KeyConditionExpression="pk = :pk", ExpressionAttributeValues=wire({":pk": pk})
        )

    def query_partition(
        self,
        pk: str,
        *,
        after: str | None = None,
        limit: int | None = None,
        attributes: Sequence[str] = (),
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a partition, after sort key ``after``: (items, last sort key or None);
        with ``attributes``, only those of each item."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": wire({":pk": pk}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        if attributes:
            names = {f"#a{i}": name for i, name in enumerate(attributes)}
            request["ProjectionExpression"] = ", ".join(names)
            request["ExpressionAttributeNames"] = names
        if limit is not None:
            request["Limit"] = limit
        if after is not None:
            request["ExclusiveStartKey"] = wire({"pk": pk, "sk": after})
        page = self.call("query", **request)
        last = page.get("LastEvaluatedKey")
        return [plain(i) for i in page.get("Items", [])], plain(last)["sk"] if last else None

    def set_retired(self, device: str, retired: bool) -> None:
        """Add a device to the retired set (never silent) or take it out: one UpdateItem
        of the control item ``control``/``retired`` (docs/operations.md#silent-cameras)."""
        self.call(
            "update_item",
            TableName=self.table,
            Key=wire({"pk": CONTROL_PK, "sk": RETIRED_SK}),
            UpdateExpression=f"{'ADD' if retired else 'DELETE'} devices :d",
            ExpressionAttributeValues={":d": {"SS": [device]}},
        )

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        return self.get_item({"pk": pk, "sk": sk})

    def present_segments(self, generation: int, segments: list[SegmentKey]) -> set[str]:
        """The keys of ``segments`` whose segment item is present: one BatchGetItem per
        100 segments (an annotation page's segments, docs/annotations.md)."""
        wanted = {segment.key: self._segment_key(generation, segment) for segment in segments}
        keys = [wire(key) for key in {(k["pk"], k["sk"]): k for k in wanted.values()}.values()]
        present: set[tuple[str, str]] = set()
        for first in range(0, len(keys), _BATCH_GET_LIMIT):
            present |= self._present(keys[first : first + _BATCH_GET_LIMIT])
        return {key for key, k in wanted.items() if (k["pk"], k["sk"]) in present}

    def _present(self, keys: list[dict[str, Any]]) -> set[tuple[str, str]]:
        items = batch_get(self.call, self.table, keys, ("pk", "sk", "present"))
        return {key for key, item in items.items() if item.get("present")}

    def get_many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """Up to 100 items by (pk, sk) in one BatchGetItem (retried while unprocessed):
        the found ones by key."""
        keys_on_wire = [wire({"pk": pk, "sk": sk}) for pk, sk in keys]
        return batch_get(self.call, self.table, keys_on_wire, ())

    def scan_prefix(
        self, prefix: str, *, segment: int = 0, segments: int = 1, attributes: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        """Every item whose ``pk`` starts with ``prefix`` (a whole generation): one request
        per MB. With ``segments`` > 1, only segment ``segment`` of a parallel Scan (disjoint
        parts whose union is the table). With ``attributes``, only those and ``pk``: the
        same read units (the whole item's), less to parse."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": "begins_with(pk, :prefix)",
            "ExpressionAttributeValues": wire({":prefix": prefix}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        request.update(projection(("pk", *attributes)) if attributes else {})
        if segments > 1:
            request.update(Segment=segment, TotalSegments=segments)
        while True:
            page = self.call("scan", **request)
            yield from (plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def size_bytes(self) -> int:
        """The table's size as DynamoDB last reported it (refreshed about every six
        hours): what sizes a parallel Scan."""
        described = self.call("describe_table", TableName=self.table)
        return int(described.get("Table", {}).get("TableSizeBytes", 0) or 0)

    # -- plumbing ------------------------------------------------------------------

    def _segment_key(self, generation: int, segment: SegmentKey) -> dict[str, Any]:
        return {
            "pk": segment_pk(generation, segment.device, segment.kind),
            "sk": segment_sk(segment),
        }


def _segment_moved(item: dict[str, Any] | None) -> ConditionFailed:
    """A failed segment write, with the segment item DynamoDB returned (if it did)."""
    if not item:
        return ConditionFailed(None, known=False)
    return ConditionFailed(SegmentRecord.from_attributes(item), known=True)


def build_store(settings: Settings, clients: Clients) -> ReadModelStore:
    """The read-model store of a deployment (its table, its tombstone lifetime)."""
    return ReadModelStore(clients.dynamodb, settings.table, tombstone_days=settings.tombstone_days)
