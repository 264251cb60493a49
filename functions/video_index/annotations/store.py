"""Data access for the annotations table (docs/annotations.md): versions and window copies.

Every request goes through :class:`~video_index.aws.dynamodb.DynamoTable`
(capacity counted, failures mapped once). A change is one ``TransactWriteItems``:
the put of the new version item, conditioned on that version not existing yet,
together with the puts and deletes of the window copies it implies. The adapter
knows no rules; it answers the two outcomes of a refused transaction that the
service interprets itself: :class:`VersionTaken` (a condition failed: another
writer got there first) and :class:`WriteCollided` (DynamoDB cancelled it because
another transaction touched the same items at the same moment: nobody lost yet).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.annotations.layout import WINDOW_PREFIX, partition, versions_prefix
from video_index.aws.dynamodb import DynamoTable, domain_error, plain, wire
from video_index.aws.errors import error_code

#: Above every character of a sort key this adapter writes.
_AFTER: Final = "~"


class VersionTaken(Exception):
    """The version the write would create exists already, or a checked item does."""


class WriteCollided(Exception):
    """DynamoDB cancelled the transaction for a concurrent one on the same items."""


@dataclass
class Change:
    """One transaction of one annotation: a new version and what it does to the copies."""

    device: str
    #: Sort key and attributes of the new version item (written only if absent).
    version_sk: str
    version: dict[str, Any]
    #: Window copies to write (sort key -> attributes).
    copies: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Window copies to remove.
    removals: list[str] = field(default_factory=list)
    #: Sort keys that must not exist (a version after the one the change was made from).
    absent: list[str] = field(default_factory=list)


class AnnotationStore(DynamoTable):
    """Reads and writes the items of the annotations table."""

    def latest_version(self, device: str, annotation_id: str) -> dict[str, Any] | None:
        """The newest version item of an annotation (strongly consistent), or None."""
        prefix = versions_prefix(annotation_id)
        response = self.call(
            "query",
            TableName=self.table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=wire({":pk": partition(device), ":prefix": prefix}),
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
            ReturnConsumedCapacity="TOTAL",
        )
        items = response.get("Items", [])
        return plain(items[0]) if items else None

    def versions(
        self, device: str, annotation_id: str, after_sk: str | None, page_size: int
    ) -> Iterator[dict[str, Any]]:
        """Version items of an annotation, oldest first, after ``after_sk``; pages of
        ``page_size`` items."""
        prefix = versions_prefix(annotation_id)
        low = after_sk + "\0" if after_sk is not None else prefix
        return self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=wire(
                {":pk": partition(device), ":low": low, ":high": prefix + _AFTER}
            ),
            Limit=page_size,
        )

    def window(self, device: str, low: str, high: str) -> Iterator[dict[str, Any]]:
        """Window copies with ``low <= sk <= high``, in sort order: one request per MB."""
        return self.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=wire({":pk": partition(device), ":low": low, ":high": high}),
        )

    def all_window_items(self, device: str) -> Iterator[dict[str, Any]]:
        """Every window copy of a device (anchors and carries), in sort order."""
        return self.window(device, WINDOW_PREFIX, WINDOW_PREFIX + _AFTER)

    def scan_window_items(self) -> Iterator[dict[str, Any]]:
        """Every window copy of every device (an export of the whole table; not for the API)."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": "begins_with(sk, :w)",
            "ExpressionAttributeValues": wire({":w": WINDOW_PREFIX}),
            "ReturnConsumedCapacity": "TOTAL",
        }
        while True:
            page = self.call("scan", **request)
            yield from (plain(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def write(self, change: Change) -> None:
        """Commit one change atomically; :class:`VersionTaken` or :class:`WriteCollided`."""
        pk = partition(change.device)
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": wire({"pk": pk, "sk": change.version_sk, **change.version}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            *(
                {
                    "ConditionCheck": {
                        "TableName": self.table,
                        "Key": wire({"pk": pk, "sk": sk}),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
                for sk in change.absent
            ),
            *(
                {"Put": {"TableName": self.table, "Item": wire({"pk": pk, "sk": sk, **copy})}}
                for sk, copy in change.copies.items()
            ),
            *(
                {"Delete": {"TableName": self.table, "Key": wire({"pk": pk, "sk": sk})}}
                for sk in change.removals
                if sk not in change.copies
            ),
        ]
        try:
            self.call("transact_write_items", TransactItems=items, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise VersionTaken() from None
            if error_code(exc) == "TransactionCanceledException":
                reasons = {r.get("Code") for r in exc.response.get("CancellationReasons", [])}
                if "ConditionalCheckFailed" in reasons:
                    raise VersionTaken() from None
                if "TransactionConflict" in reasons:
                    raise WriteCollided() from None
            raise domain_error(exc) from exc
