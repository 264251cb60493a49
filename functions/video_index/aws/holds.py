"""Data access for the holds table (docs/holds.md): a hold item and its device copy.

Each hold is two items carrying the same attributes: ``hold#<id>`` / ``hold``
(``GET /holds/{id}`` finds it without the device) and ``device#<device>`` /
``from#<from_ms>#<id>`` (a device's holds overlapping a window are one Query:
no hold is longer than 31 days, so the copies starting in ``[start - 31 d, end)``
are all the candidates). Both are written in one ``TransactWriteItems``,
conditioned on the hold item's version, so they never disagree. Errors are
mapped once, by :class:`~video_index.aws.dynamodb.DynamoTable`; the adapter
answers :class:`VersionTaken` when the condition failed and knows no rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.aws.dynamodb import DynamoTable, domain_error, plain, wire
from video_index.aws.errors import error_code

#: Sort key of the hold item.
HOLD_SK: Final = "hold"
#: Width of the zero-padded epoch ms in a copy's sort key (up to year 2286).
_MS_WIDTH: Final = 13


class VersionTaken(Exception):
    """The hold changed (or exists) already: another writer got there first."""


def hold_pk(hold_id: str) -> str:
    return f"hold#{hold_id}"


def device_pk(device: str) -> str:
    return f"device#{device}"


def copy_sk(from_ms: int, hold_id: str) -> str:
    return f"from#{from_ms:0{_MS_WIDTH}d}#{hold_id}"


class HoldStore(DynamoTable):
    """Reads and writes the items of the holds table."""

    def hold(self, hold_id: str) -> dict[str, Any] | None:
        """The hold item (strongly consistent), or None."""
        return self.get_item({"pk": hold_pk(hold_id), "sk": HOLD_SK}, consistent=True)

    def starting(self, device: str, low_ms: int, high_ms: int) -> Iterator[dict[str, Any]]:
        """The device's hold copies whose window starts in ``[low_ms, high_ms)``, in start
        order (strongly consistent: a hold just written counts)."""
        return self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=wire(
                {
                    ":pk": device_pk(device),
                    ":low": f"from#{max(low_ms, 0):0{_MS_WIDTH}d}",
                    ":high": f"from#{max(high_ms - 1, 0):0{_MS_WIDTH}d}#~",
                }
            ),
            ConsistentRead=True,
        )

    def scan_holds(self) -> Iterator[dict[str, Any]]:
        """Every hold item of the table (the export; not for the API)."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": "sk = :hold",
            "ExpressionAttributeValues": wire({":hold": HOLD_SK}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        while True:
            page = self.call("scan", **request)
            yield from (plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def write(self, attributes: dict[str, Any], previous_version: int) -> None:
        """Write both items of a hold at ``attributes["version"]`` if the stored hold is at
        ``previous_version`` (0: absent); :class:`VersionTaken` otherwise."""
        hold_id, device = attributes["hold_id"], attributes["device"]
        if previous_version == 0:
            condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
        else:
            condition = {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": wire({":v": previous_version}),
            }
        copy_key = {"pk": device_pk(device), "sk": copy_sk(attributes["from_ms"], hold_id)}
        items = [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": wire({"pk": hold_pk(hold_id), "sk": HOLD_SK, **attributes}),
                    **condition,
                }
            },
            {"Put": {"TableName": self.table, "Item": wire({**copy_key, **attributes})}},
        ]
        try:
            self.call("transact_write_items", TransactItems=items, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                reasons = {r.get("Code") for r in exc.response.get("CancellationReasons", [])}
                if "ConditionalCheckFailed" in reasons:
                    raise VersionTaken() from None
            raise domain_error(exc) from exc
