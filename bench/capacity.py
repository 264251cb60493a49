"""DynamoDB requests and capacity units, counted on the client and sized by AWS's rules.

DynamoDB Local's ``ConsumedCapacity`` is not trusted (it does not double
transactions, among other things), so :class:`CapacityMeter` hooks a boto3
client and prices every call itself from the request and the response:

* item size = sum over attributes of (UTF-8 length of the name + size of the value):
  string = UTF-8 bytes, number = (significant digits + 1) // 2 + 1, binary = length,
  bool/null = 1, map/list = 3 + contents + 1 per element, set = sum of its elements;
* PutItem = ceil(size / 1 KB) WCU, the larger of the old and new item when the old
  one is known (returned, or written earlier through the meter); UpdateItem /
  DeleteItem = ceil(max(before, after) / 1 KB), where the size of an updated item
  is only known at the end (see :meth:`CapacityMeter.settle`);
  TransactWriteItems = 2 x the sum over its items; a write whose condition fails
  costs the size of the existing item (at least 1 WCU);
* secondary indexes (read from ``DescribeTable``): a write that puts an item into
  an index costs one standard write of the index entry (table keys + index keys +
  projected attributes), one that moves it to another index key two, one that
  removes it one, one that changes neither its index keys nor projected attributes
  nothing. Index writes are not doubled for transactions (DynamoDB propagates a
  transaction's changes to GSIs after it commits);
* GetItem = ceil(size / 4 KB) RCU when strongly consistent, half of it when
  eventually consistent, at least one unit even when no item comes back; Query and
  Scan the same over the total size of the items returned; TransactGetItems 2 x.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from bench.item_sizes import (
    ItemId,
    TableShape,
    WireItem,
    describe_shape,
    item_id,
    item_size,
    item_sizes,
    read_units,
    scan_items,
    write_units,
)

#: The sizing helpers the benchmarks use beside the meter (defined in bench.item_sizes).
__all__ = [
    "CapacityMeter",
    "OperationFigures",
    "TableShape",
    "Totals",
    "describe_shape",
    "item_size",
    "item_sizes",
    "scan_items",
]

_PARAMS: Final = "bench.capacity.params"
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


# -- the meter ---------------------------------------------------------------------------


@dataclass
class OperationFigures:
    requests: int = 0
    failed: int = 0
    retries: int = 0
    #: all write units, index writes included
    write_units: float = 0.0
    #: of which secondary-index writes
    index_write_units: float = 0.0
    read_units: float = 0.0
    #: items the calls asked to write (a transaction counts each of its items)
    items: int = 0
    #: writes whose price waits for the item's final size (updates): multiplier per item
    deferred: list[tuple[ItemId, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Totals:
    requests: int
    failed: int
    retries: int
    write_units: float
    index_write_units: float
    read_units: float
    by_operation: dict[str, OperationFigures]
    #: caveats: operations or effects the meter could not price
    unpriced: frozenset[str]

    @property
    def capacity_units(self) -> float:
        return self.write_units + self.read_units


class CapacityMeter:
    """Counts every DynamoDB API call a client makes and prices it by AWS's sizing rules.

    ``attach`` registers botocore event hooks on the client: the call's parameters
    are kept from ``before-parameter-build`` and priced in ``after-call`` (which
    also fires for error responses, so failed conditional writes are counted).
    ``shapes`` gives the secondary indexes of each table (:func:`describe_shape`).
    ``row`` names the row a call is counted in (default: its operation), e.g. to tell
    the writes of bucket items from those of segment items.
    """

    def __init__(
        self,
        shapes: Mapping[str, TableShape] | None = None,
        row: Callable[[str, dict[str, Any]], str] | None = None,
    ) -> None:
        self.enabled = True
        self._shapes = dict(shapes or {})
        self._row = row or (lambda operation, _params: operation)
        self._ops: dict[str, OperationFigures] = defaultdict(OperationFigures)
        #: the last item the meter saw written under each key (None: deleted)
        self._known: dict[ItemId, WireItem | None] = {}
        self._unpriced: Counter[str] = Counter()
        self._settled: dict[str, tuple[float, float]] | None = None

    # -- wiring ----------------------------------------------------------------------

    def attach(self, client: Any) -> CapacityMeter:
        events = client.meta.events
        events.register("before-parameter-build.dynamodb", self._keep_params)
        events.register("after-call.dynamodb", self._after_call)
        events.register("after-call-error.dynamodb", self._after_error)
        return self

    def _keep_params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_PARAMS] = params

    def _after_error(
        self, event_name: str, context: dict[str, Any] | None = None, **_: Any
    ) -> None:
        """No response at all (connection error, timeout): a request, priced at nothing."""
        if not self.enabled:
            return
        figures = self._ops[
            self._row(event_name.rsplit(".", 1)[-1], (context or {}).get(_PARAMS, {}))
        ]
        figures.requests += 1
        figures.failed += 1

    def _after_call(
        self,
        http_response: Any,
        parsed: dict[str, Any],
        model: Any,
        context: dict[str, Any],
        **_: Any,
    ) -> None:
        if not self.enabled:
            return
        operation = model.name
        params: dict[str, Any] = context.get(_PARAMS, {})
        figures = self._ops[self._row(operation, params)]
        figures.requests += 1
        figures.retries += int(parsed.get("ResponseMetadata", {}).get("RetryAttempts", 0))
        ok = http_response.status_code < 300
        if not ok:
            figures.failed += 1
            code = parsed.get("Error", {}).get("Code", "")
            if code not in ("ConditionalCheckFailedException", "TransactionCanceledException"):
                return  # throttled / rejected before any work: not charged
        price = _PRICERS.get(operation)
        if price is None:
            self._unpriced[f"{operation} (not priced: counted as requests only)"] += 1
            return
        price(self, figures, params, parsed, ok)

    # -- pricing -----------------------------------------------------------------------

    def _put(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        figures.items += 1
        self._put_item(figures, params["TableName"], params["Item"], parsed.get("Item"), ok, 1)

    def _put_item(
        self,
        figures: OperationFigures,
        table: str,
        item: WireItem,
        returned_old: WireItem | None,
        ok: bool,
        multiplier: int,
    ) -> None:
        ident = item_id(table, item)
        # a put of a key the meter never saw written is taken for a new item
        old = returned_old or self._known.get(ident)
        before = item_size(old) if old else 0
        if not ok:  # AWS: a failed condition costs the existing item's size (at least 1 unit)
            figures.write_units += multiplier * write_units(before)
            return
        self._known[ident] = item
        figures.write_units += multiplier * write_units(max(item_size(item), before))
        index_units = self._shape(table).index_write_units(old, item)
        figures.write_units += index_units
        figures.index_write_units += index_units

    def _update(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        figures.items += 1
        self._update_item(figures, params, ok, 1)

    def _update_item(
        self, figures: OperationFigures, request: dict[str, Any], ok: bool, multiplier: int
    ) -> None:
        table = request["TableName"]
        figures.deferred.append((item_id(table, request["Key"]), multiplier))
        indexed = self._shape(table).indexed_names()
        if ok and indexed:
            expression = str(request.get("UpdateExpression", ""))
            names = set(request.get("ExpressionAttributeNames", {}).values())
            names.update(_WORD.findall(expression))
            if names & indexed or "*" in indexed:
                self._unpriced["index writes of an UpdateItem touching indexed attributes"] += 1

    def _delete(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        figures.items += 1
        self._delete_item(figures, params["TableName"], params["Key"], ok, 1)

    def _delete_item(
        self, figures: OperationFigures, table: str, key: WireItem, ok: bool, multiplier: int
    ) -> None:
        ident = item_id(table, key)
        old = self._known.get(ident)
        figures.write_units += multiplier * write_units(item_size(old) if old else 0)
        if not ok:
            return
        if ident not in self._known and self._shape(table).indexes:
            self._unpriced["index writes of a DeleteItem of an item the meter never saw"] += 1
        self._known[ident] = None
        index_units = self._shape(table).index_write_units(old, None)
        figures.write_units += index_units
        figures.index_write_units += index_units

    def _transact_write(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        figures.items += len(params["TransactItems"])
        for entry in params["TransactItems"]:
            ((action, request),) = entry.items()
            if action == "Put":
                self._put_item(figures, request["TableName"], request["Item"], None, ok, 2)
            elif action == "Update":
                self._update_item(figures, request, ok, 2)
            elif action == "Delete":
                self._delete_item(figures, request["TableName"], request["Key"], ok, 2)
            else:  # ConditionCheck: sized by the item, known at the end
                figures.deferred.append((item_id(request["TableName"], request["Key"]), 2))

    def _get(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        item = parsed.get("Item") or {}
        consistent = bool(params.get("ConsistentRead", False))
        figures.read_units += read_units(item_size(item), consistent=consistent)

    def _query(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        size = sum(item_size(item) for item in parsed.get("Items", []))
        consistent = bool(params.get("ConsistentRead", False))
        figures.read_units += read_units(size, consistent=consistent)

    def _batch_get(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        for table, items in parsed.get("Responses", {}).items():
            consistent = bool(params["RequestItems"][table].get("ConsistentRead", False))
            figures.read_units += sum(
                read_units(item_size(item), consistent=consistent) for item in items
            )

    def _transact_get(
        self, figures: OperationFigures, params: dict[str, Any], parsed: dict[str, Any], ok: bool
    ) -> None:
        for response in parsed.get("Responses", []):
            figures.read_units += 2 * read_units(
                item_size(response.get("Item") or {}), consistent=True
            )

    def _shape(self, table: str) -> TableShape:
        return self._shapes.get(table) or TableShape()

    # -- results -------------------------------------------------------------------------

    def settle(self, final_sizes: Mapping[ItemId, int]) -> None:
        """Price the deferred updates with each item's final size (an upper bound here).

        Every update of this benchmark only ADDs to numbers, so an item's size never
        shrinks and its final size bounds both "before" and "after" of each update.
        """
        self._settled = {}
        for operation, figures in self._ops.items():
            units = 0
            for ident, multiplier in figures.deferred:
                known = self._known.get(ident)
                size = final_sizes.get(ident, item_size(known) if known else 0)
                units += multiplier * write_units(size)
            self._settled[operation] = (figures.write_units + units, figures.read_units)

    def totals(self) -> Totals:
        if self._settled is None and any(f.deferred for f in self._ops.values()):
            raise RuntimeError("call settle() with the final item sizes before totals()")
        settled = self._settled or {}
        by_operation: dict[str, OperationFigures] = {}
        for operation, figures in self._ops.items():
            wcu, rcu = settled.get(operation, (figures.write_units, figures.read_units))
            by_operation[operation] = OperationFigures(
                requests=figures.requests,
                failed=figures.failed,
                retries=figures.retries,
                write_units=wcu,
                index_write_units=figures.index_write_units,
                read_units=rcu,
                items=figures.items,
            )
        return Totals(
            requests=sum(f.requests for f in by_operation.values()),
            failed=sum(f.failed for f in by_operation.values()),
            retries=sum(f.retries for f in by_operation.values()),
            write_units=sum(f.write_units for f in by_operation.values()),
            index_write_units=sum(f.index_write_units for f in by_operation.values()),
            read_units=sum(f.read_units for f in by_operation.values()),
            by_operation=by_operation,
            unpriced=frozenset(self._unpriced),
        )


_Pricer = Callable[[CapacityMeter, OperationFigures, dict[str, Any], dict[str, Any], bool], None]
_PRICERS: Final[dict[str, _Pricer]] = {
    "PutItem": CapacityMeter._put,
    "UpdateItem": CapacityMeter._update,
    "DeleteItem": CapacityMeter._delete,
    "TransactWriteItems": CapacityMeter._transact_write,
    "GetItem": CapacityMeter._get,
    "Query": CapacityMeter._query,
    "Scan": CapacityMeter._query,
    "BatchGetItem": CapacityMeter._batch_get,
    "TransactGetItems": CapacityMeter._transact_get,
}
