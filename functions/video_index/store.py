"""Data access for the read model: the only module that talks to DynamoDB.

boto3 clients are passed in; every ``ClientError`` is mapped to a domain error
in :func:`_domain_error`, so callers only see :class:`ConditionFailed` (the item
moved under us: retry with the state attached), :class:`TransientStoreError`
(throttling, transaction conflicts, 5xx: let SQS retry the record) or
:class:`StoreError` (a bug or a misconfiguration).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from video_index.keys import SegmentKey
from video_index.layout import (
    CONTROL_PK,
    DEFAULT_GENERATION,
    GENERATION_SK,
    bucket_pk,
    devices_pk,
    segment_pk,
    segment_sk,
)
from video_index.models import SegmentRecord
from video_index.projection import ObjectState, transition_deltas
from video_index.table_schema import ID_ATTRIBUTE, ID_INDEX

TRANSIENT_CODES: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "TransactionConflictException",
        "TransactionInProgressException",
        "LimitExceededException",
    }
)
TRANSIENT_REASONS: Final = frozenset(
    {
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
        "InternalServerError",
    }
)

_READ_OPERATIONS: Final = frozenset({"get_item", "query", "scan", "batch_get_item"})

_serialize = TypeSerializer().serialize
_deserialize = TypeDeserializer().deserialize


class StoreError(RuntimeError):
    """DynamoDB refused a request for a reason retrying will not fix."""


class TransientStoreError(StoreError):
    """Throttling, a transaction conflict or a server error: retry later."""


class ConditionFailed(Exception):
    """The segment item was not in the state the write was computed from."""

    def __init__(self, current: SegmentRecord | None, known: bool) -> None:
        super().__init__("segment item changed concurrently")
        self.current = current
        #: False when DynamoDB did not return the item and it must be read again.
        self.known = known


@dataclass
class Consumption:
    """Capacity units DynamoDB reported as consumed (for metrics and the benchmark)."""

    read_units: float = 0.0
    write_units: float = 0.0
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, operation: str, response: dict[str, Any]) -> None:
        consumed = response.get("ConsumedCapacity")
        entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
        units = sum(float(entry.get("CapacityUnits", 0) or 0) for entry in entries)
        with self._lock:
            self.requests += 1
            if operation in _READ_OPERATIONS:
                self.read_units += units
            else:
                self.write_units += units


def _item(attributes: dict[str, Any]) -> dict[str, Any]:
    return {name: _serialize(value) for name, value in attributes.items()}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _deserialize(value) for name, value in item.items()}


def _domain_error(exc: ClientError | BotoCoreError) -> StoreError:
    if isinstance(exc, BotoCoreError):  # timeouts, connection resets
        return TransientStoreError(f"DynamoDB unreachable: {exc}")
    error = exc.response.get("Error", {})
    code = error.get("Code", "")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    message = f"DynamoDB {code}: {error.get('Message', '')}"
    if code in TRANSIENT_CODES or status >= 500:
        return TransientStoreError(message)
    if code == "TransactionCanceledException":
        reasons = {r.get("Code") for r in exc.response.get("CancellationReasons", [])}
        if reasons & TRANSIENT_REASONS:
            return TransientStoreError(f"{message} ({', '.join(sorted(map(str, reasons)))})")
    return StoreError(message)


class ReadModelStore:
    """Reads and writes segment, bucket, device and control items of one table."""

    def __init__(
        self,
        client: Any,
        table: str,
        *,
        tombstone_days: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._table = table
        self._tombstone_seconds = tombstone_days * 86_400
        self._clock = clock
        self._known_devices: set[tuple[int, str]] = set()
        self.consumption = Consumption()

    # -- generations ---------------------------------------------------------------

    def generations(self) -> list[int]:
        """Generations ingest must write: the serving one, plus one being rebuilt."""
        response = self._call(
            "get_item",
            TableName=self._table,
            Key=_item({"pk": CONTROL_PK, "sk": GENERATION_SK}),
            ReturnConsumedCapacity="TOTAL",
        )
        control = _plain(response.get("Item", {}))
        current = int(control.get("current", DEFAULT_GENERATION))
        building = control.get("building")
        return [current] if building is None else [current, int(building)]

    # -- segments ------------------------------------------------------------------

    def get_segment(self, generation: int, segment: SegmentKey) -> SegmentRecord | None:
        response = self._call(
            "get_item",
            TableName=self._table,
            Key=self._segment_key(generation, segment),
            ConsistentRead=True,
            ReturnConsumedCapacity="TOTAL",
        )
        item = response.get("Item")
        return SegmentRecord.from_attributes(_plain(item)) if item else None

    def write_transition(
        self,
        generation: int,
        segment: SegmentKey,
        old: SegmentRecord | None,
        new: ObjectState,
        seq: str,
        *,
        observed: bool = False,
    ) -> None:
        """Move one key from ``old`` (as read or assumed) to ``new``, aggregates included.

        The segment put is conditioned on ``old`` (absent, or exactly version
        ``old.ver``) and the bucket deltas are ``contribution(new) -
        contribution(old)``, written in the same transaction. So a delta is
        applied exactly when the state it was computed from is replaced: a
        redelivered or reordered event finds a newer ``ver`` (or an equal or
        greater ``seq``) and changes nothing; concurrent writers of one key are
        serialized by the condition; and a write whose response was lost is
        recognized on retry by its ``seq``.
        """
        old_state = old.state if old else ObjectState(present=False)
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
        )
        if new.present:
            self._ensure_device(generation, segment.device)
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": {**self._segment_key(generation, segment), **_item(record.to_attributes())},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        if old is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "ver = :ver"
            put["ExpressionAttributeValues"] = {":ver": _serialize(old.ver)}
        deltas = transition_deltas(segment, old_state, new)
        if not deltas:
            self._put_segment(put)
            return
        updates = [
            {"Update": self._bucket_update(generation, segment.device, sk, figures)}
            for sk, figures in sorted(deltas.items())
        ]
        self._transact([{"Put": put}, *updates])

    def _put_segment(self, put: dict[str, Any]) -> None:
        try:
            self._call("put_item", **put, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise _condition_failed(exc.response.get("Item")) from None
            raise _domain_error(exc) from exc

    def _transact(self, items: list[dict[str, Any]]) -> None:
        try:
            self._call("transact_write_items", TransactItems=items, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                reasons = exc.response.get("CancellationReasons", [])
                if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
                    raise _condition_failed(reasons[0].get("Item")) from None
            raise _domain_error(exc) from exc

    def _bucket_update(
        self, generation: int, device: str, sk: str, figures: dict[str, int]
    ) -> dict[str, Any]:
        names = sorted(figures)
        return {
            "TableName": self._table,
            "Key": _item({"pk": bucket_pk(generation, device), "sk": sk}),
            "UpdateExpression": "ADD " + ", ".join(f"#f{i} :f{i}" for i in range(len(names))),
            "ExpressionAttributeNames": {f"#f{i}": name for i, name in enumerate(names)},
            "ExpressionAttributeValues": {
                f":f{i}": _serialize(figures[name]) for i, name in enumerate(names)
            },
        }

    def _ensure_device(self, generation: int, device: str) -> None:
        """Register the device in the devices list once per container (cheap, idempotent)."""
        if (generation, device) in self._known_devices:
            return
        try:
            self._call(
                "put_item",
                TableName=self._table,
                Item=_item({"pk": devices_pk(generation), "sk": device}),
                ConditionExpression="attribute_not_exists(pk)",
                ReturnConsumedCapacity="TOTAL",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise _domain_error(exc) from exc
        self._known_devices.add((generation, device))

    # -- repairs and control -------------------------------------------------------

    def adjust_bucket(
        self,
        generation: int,
        device: str,
        sk: str,
        delta: dict[str, int],
        seen: dict[str, int],
    ) -> None:
        """ADD ``delta`` to a bucket item only if its figures are still ``seen``.

        Used to mend aggregates that drifted from the segment items: the
        condition makes the fix lose to any ingest transition that touched the
        bucket since it was read (the caller re-reads and recomputes).
        """
        names = sorted(set(delta) | set(seen))
        values: dict[str, Any] = {":zero": _serialize(0)}
        conditions = []
        adds = []
        for i, name in enumerate(names):
            if seen.get(name, 0):
                values[f":s{i}"] = _serialize(seen[name])
                conditions.append(f"#f{i} = :s{i}")
            else:
                conditions.append(f"(attribute_not_exists(#f{i}) OR #f{i} = :zero)")
            if delta.get(name):
                values[f":d{i}"] = _serialize(delta[name])
                adds.append(f"#f{i} :d{i}")
        if not adds:
            return
        if not any("zero" in condition for condition in conditions):
            del values[":zero"]
        try:
            self._call(
                "update_item",
                TableName=self._table,
                Key=_item({"pk": bucket_pk(generation, device), "sk": sk}),
                UpdateExpression="ADD " + ", ".join(adds),
                ConditionExpression=" AND ".join(conditions),
                ExpressionAttributeNames={f"#f{i}": name for i, name in enumerate(names)},
                ExpressionAttributeValues=values,
                ReturnConsumedCapacity="TOTAL",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise ConditionFailed(None, known=False) from None
            raise _domain_error(exc) from exc

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
            "TableName": self._table,
            "Key": _item({"pk": CONTROL_PK, "sk": sk}),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": _item(values),
            "ReturnConsumedCapacity": "TOTAL",
        }
        if names:
            request["ExpressionAttributeNames"] = names
        try:
            self._call("update_item", **request)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise ConditionFailed(None, known=False) from None
            raise _domain_error(exc) from exc

    def delete_prefix(self, prefix: str, *, pause: float = 0.0) -> int:
        """Delete every item whose pk starts with ``prefix`` (a dropped generation)."""
        deleted = 0
        batch: list[dict[str, Any]] = []
        for item in self.scan_prefix(prefix):
            batch.append({"DeleteRequest": {"Key": _item({"pk": item["pk"], "sk": item["sk"]})}})
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
            response = self._call("batch_write_item", RequestItems={self._table: requests})
            requests = response.get("UnprocessedItems", {}).get(self._table, [])
            if not requests:
                return count
            time.sleep(min(2.0, 0.05 * 2**attempt))
        raise TransientStoreError(f"{len(requests)} deletes left unprocessed; retry later")

    def put_control(self, sk: str, attributes: dict[str, Any]) -> None:
        self._call(
            "put_item",
            TableName=self._table,
            Item=_item({"pk": CONTROL_PK, "sk": sk, **attributes}),
            ReturnConsumedCapacity="TOTAL",
        )

    # -- reading -------------------------------------------------------------------

    def query_range(
        self, pk: str, low: str, high: str, *, descending: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Items of one partition with ``low <= sk <= high``, in sort order, paged by 1 MB."""
        return self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=_item({":pk": pk, ":low": low, ":high": high}),
            ScanIndexForward=not descending,
        )

    def query_all(self, pk: str) -> Iterator[dict[str, Any]]:
        """Every item of one partition, in sort order, paged by 1 MB."""
        return self.query(
            KeyConditionExpression="pk = :pk", ExpressionAttributeValues=_item({":pk": pk})
        )

    def query_partition(
        self, pk: str, *, after: str | None = None, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a partition, after sort key ``after``: (items, last sort key or None)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": _item({":pk": pk}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        if limit is not None:
            request["Limit"] = limit
        if after is not None:
            request["ExclusiveStartKey"] = _item({"pk": pk, "sk": after})
        page = self._call("query", **request)
        last = page.get("LastEvaluatedKey")
        return [_plain(i) for i in page.get("Items", [])], _plain(last)["sk"] if last else None

    def keys_with_id(self, segment_id: str) -> list[tuple[str, str]]:
        """(pk, sk) of every segment item, of any device and generation, with this id."""
        found = self.query(
            IndexName=ID_INDEX,
            KeyConditionExpression="#id = :id",
            ExpressionAttributeNames={"#id": ID_ATTRIBUTE},
            ExpressionAttributeValues=_item({":id": segment_id}),
        )
        return [(item["pk"], item["sk"]) for item in found]

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        response = self._call(
            "get_item",
            TableName=self._table,
            Key=_item({"pk": pk, "sk": sk}),
            ReturnConsumedCapacity="TOTAL",
        )
        item = response.get("Item")
        return _plain(item) if item else None

    def scan_prefix(self, prefix: str) -> Iterator[dict[str, Any]]:
        """Every item whose ``pk`` starts with ``prefix`` (a whole generation): one
        request per MB, far below one per item."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "begins_with(pk, :prefix)",
            "ExpressionAttributeValues": _item({":prefix": prefix}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        while True:
            page = self._call("scan", **request)
            yield from (_plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def ensure_device(self, generation: int, device: str) -> None:
        self._ensure_device(generation, device)

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a Query, page by page, as plain Python values."""
        request = {"TableName": self._table, **kwargs}
        while True:
            page = self._call("query", **request, ReturnConsumedCapacity="TOTAL")
            yield from (_plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # -- plumbing ------------------------------------------------------------------

    def _segment_key(self, generation: int, segment: SegmentKey) -> dict[str, Any]:
        return _item(
            {"pk": segment_pk(generation, segment.device, segment.kind), "sk": segment_sk(segment)}
        )

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response: dict[str, Any] = getattr(self._client, operation)(**kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("ConditionalCheckFailedException", "TransactionCanceledException"):
                raise  # interpreted by the caller, which knows what it asked for
            raise _domain_error(exc) from exc
        except BotoCoreError as exc:
            raise _domain_error(exc) from exc
        self.consumption.add(operation, response)
        return response


def _condition_failed(item: Any) -> ConditionFailed:
    if not item:
        return ConditionFailed(None, known=False)
    return ConditionFailed(SegmentRecord.from_attributes(_plain(item)), known=True)
