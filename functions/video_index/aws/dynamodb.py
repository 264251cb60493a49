"""DynamoDB plumbing shared by every table adapter: one call path, errors mapped once.

Every request goes through :meth:`DynamoTable.call`, which counts consumed
capacity and turns every ``ClientError``/``BotoCoreError`` into a domain error:
:class:`TransientStoreError` (throttling, transaction conflicts, 5xx, timeouts:
retry later) or :class:`StoreError` (a bug or a misconfiguration). A failed
condition is the one answer callers interpret themselves, because only they
know what they asked for; :meth:`DynamoTable.conditional` turns it into
:class:`ConditionFailed`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.errors import error_code
from video_index.core.errors import ServiceError, TransientError

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
CONDITION_CODES: Final = frozenset(
    {"ConditionalCheckFailedException", "TransactionCanceledException"}
)

_READ_OPERATIONS: Final = frozenset({"get_item", "query", "scan", "batch_get_item"})

_serialize = TypeSerializer().serialize
_deserialize = TypeDeserializer().deserialize


class StoreError(ServiceError):
    """DynamoDB refused a request for a reason retrying will not fix."""


class TransientStoreError(StoreError, TransientError):
    """Throttling, a transaction conflict or a server error: retry later."""


class ConditionFailed(Exception):
    """The item was not in the state the write was computed from.

    ``current`` is the item as DynamoDB returned it (already converted by the
    adapter that asked), ``known`` False when it was not returned and must be read.
    """

    def __init__(self, current: Any = None, known: bool = False) -> None:
        super().__init__("item changed concurrently")
        self.current = current
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


def wire(attributes: dict[str, Any]) -> dict[str, Any]:
    """Plain Python values -> DynamoDB's typed wire format."""
    return {name: _serialize(value) for name, value in attributes.items()}


def wire_value(value: Any) -> Any:
    return _serialize(value)


def projection(attributes: Iterable[str]) -> dict[str, Any]:
    """``ProjectionExpression`` and its names for these top-level attributes (each once)."""
    names = {f"#a{i}": name for i, name in enumerate(dict.fromkeys(attributes))}
    return {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}


def plain(item: dict[str, Any]) -> dict[str, Any]:
    """DynamoDB's typed wire format -> plain Python values."""
    return {name: _deserialize(value) for name, value in item.items()}


def domain_error(exc: ClientError | BotoCoreError) -> StoreError:
    """The one mapping of DynamoDB failures to the product's errors."""
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


class DynamoTable:
    """One table behind one client: every request, its capacity and its errors."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table
        self.consumption = Consumption()

    def call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """``operation`` with capacity counted; a failed condition is re-raised as is."""
        try:
            response: dict[str, Any] = getattr(self._client, operation)(**kwargs)
        except ClientError as exc:
            if error_code(exc) in CONDITION_CODES:
                raise  # interpreted by the caller, which knows what it asked for
            raise domain_error(exc) from exc
        except BotoCoreError as exc:
            raise domain_error(exc) from exc
        self.consumption.add(operation, response)
        return response

    def conditional(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """A single-item conditional write; :class:`ConditionFailed` (with the item
        DynamoDB returned, as plain values) when the condition did not hold."""
        try:
            return self.call(operation, **kwargs, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                item: dict[str, Any] | None = exc.response.get("Item")  # type: ignore[assignment]
                raise ConditionFailed(plain(item) if item else None, known=bool(item)) from None
            raise domain_error(exc) from exc

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a Query, page by page, as plain Python values."""
        request = {"TableName": self.table, **kwargs}
        while True:
            page = self.call("query", **request, ReturnConsumedCapacity="TOTAL")
            yield from (plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def get_item(self, key: dict[str, Any], *, consistent: bool = False) -> dict[str, Any] | None:
        """One item by its key (plain values), or None."""
        response = self.call(
            "get_item",
            TableName=self.table,
            Key=wire(key),
            ConsistentRead=consistent,
            ReturnConsumedCapacity="TOTAL",
        )
        item = response.get("Item")
        return plain(item) if item else None
