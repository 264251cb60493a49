"""DynamoDB item sizes and capacity units by AWS's rules, and the shape of a table's
secondary indexes: what :class:`bench.capacity.CapacityMeter` prices calls with (the
rules are listed in :mod:`bench.capacity`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

WRITE_UNIT: Final = 1024
READ_UNIT: Final = 4096

#: (table, pk value, sk value): identifies one item of the pk/sk tables of this project
ItemId = tuple[str, str, str]
WireItem = Mapping[str, Mapping[str, Any]]


# -- item sizes --------------------------------------------------------------------------


def number_size(text: str) -> int:
    """Bytes of a DynamoDB number: about one per two significant digits, plus one."""
    digits = text.strip().lstrip("+-")
    mantissa = digits.split("e", 1)[0].split("E", 1)[0].replace(".", "")
    significant = mantissa.strip("0") or "0"
    return (len(significant) + 1) // 2 + 1


def value_size(value: Mapping[str, Any]) -> int:
    """Bytes of one attribute value in DynamoDB's wire shape (``{"S": "..."}`` etc.)."""
    ((tag, inner),) = value.items()
    if tag == "S":
        return len(str(inner).encode())
    if tag == "N":
        return number_size(str(inner))
    if tag == "B":
        return len(inner)
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(str(member).encode()) for member in inner)
    if tag == "NS":
        return sum(number_size(str(member)) for member in inner)
    if tag == "BS":
        return sum(len(member) for member in inner)
    if tag == "M":
        return 3 + sum(len(name.encode()) + value_size(v) + 1 for name, v in inner.items())
    if tag == "L":
        return 3 + sum(value_size(v) + 1 for v in inner)
    raise ValueError(f"unknown attribute value type {tag!r}")


def item_size(item: WireItem) -> int:
    """Bytes DynamoDB bills for an item: attribute names plus values, keys included."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


def item_id(table: str, key_or_item: WireItem) -> ItemId:
    return (table, _scalar(key_or_item.get("pk")), _scalar(key_or_item.get("sk")))


def _scalar(value: Mapping[str, Any] | None) -> str:
    if not value:
        return ""
    ((_, inner),) = value.items()
    return str(inner)


# -- secondary indexes -------------------------------------------------------------------


@dataclass(frozen=True)
class IndexShape:
    name: str
    keys: tuple[str, ...]
    projection: str  # KEYS_ONLY | INCLUDE | ALL
    non_key: tuple[str, ...] = ()

    def holds(self, item: WireItem | None) -> bool:
        return item is not None and all(key in item for key in self.keys)

    def entry(self, item: WireItem, table_keys: tuple[str, ...]) -> dict[str, Any]:
        if self.projection == "ALL":
            return dict(item)
        names = (*table_keys, *self.keys, *self.non_key)
        return {name: item[name] for name in names if name in item}


@dataclass(frozen=True)
class TableShape:
    keys: tuple[str, ...] = ("pk", "sk")
    indexes: tuple[IndexShape, ...] = ()

    def index_write_units(self, old: WireItem | None, new: WireItem | None) -> int:
        """Standard WCU the indexes consume when an item goes from ``old`` to ``new``."""
        units = 0
        for index in self.indexes:
            was, now = index.holds(old), index.holds(new)
            if was and now:
                assert old is not None and new is not None
                before, after = index.entry(old, self.keys), index.entry(new, self.keys)
                if any(old[k] != new[k] for k in index.keys):
                    units += write_units(item_size(before)) + write_units(item_size(after))
                elif before != after:
                    units += write_units(item_size(after))
            elif now:
                assert new is not None
                units += write_units(item_size(index.entry(new, self.keys)))
            elif was:
                assert old is not None
                units += write_units(item_size(index.entry(old, self.keys)))
        return units

    def indexed_names(self) -> set[str]:
        names: set[str] = set()
        for index in self.indexes:
            names.update(index.keys)
            names.update(index.non_key)
            if index.projection == "ALL":
                names.add("*")
        return names


def describe_shape(client: Any, table: str) -> TableShape:
    """Key schema and secondary indexes of a table, from ``DescribeTable``."""
    description = client.describe_table(TableName=table)["Table"]
    indexes = [
        IndexShape(
            name=index["IndexName"],
            keys=tuple(k["AttributeName"] for k in index["KeySchema"]),
            projection=index["Projection"]["ProjectionType"],
            non_key=tuple(index["Projection"].get("NonKeyAttributes", ())),
        )
        for index in (
            *description.get("GlobalSecondaryIndexes", ()),
            *description.get("LocalSecondaryIndexes", ()),
        )
    ]
    return TableShape(
        keys=tuple(k["AttributeName"] for k in description["KeySchema"]), indexes=tuple(indexes)
    )


def scan_items(client: Any, table: str) -> list[dict[str, Any]]:
    """Every item of a table in wire shape (call it on an unmetered client)."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def item_sizes(table: str, items: Iterable[WireItem]) -> dict[ItemId, int]:
    return {item_id(table, item): item_size(item) for item in items}
