"""Data access for the shares table (docs/shares.md): a share item and its device copy.

Each share is two items with the same attributes: ``share#<id>`` / ``share`` (the public
routes find it by id) and ``device#<device>`` / ``created#<ms>#<id>`` (a device's shares,
newest first, are one Query). Both are written in one ``TransactWriteItems``, the share
item conditioned on its previous state, so they never disagree. ``expires_at`` (the
table's TTL attribute) removes both a while after the share ended.
"""

from __future__ import annotations

from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.aws.dynamodb import DynamoTable, domain_error, wire
from video_index.aws.errors import error_code
from video_index.core.table_schema import TTL_ATTRIBUTE

SHARE_SK: Final = "share"
_MS_WIDTH: Final = 13


class ShareChanged(Exception):
    """The share item is not in the state the write expected (taken, or revoked already)."""


def share_pk(share_id: str) -> str:
    return f"share#{share_id}"


def device_pk(device: str) -> str:
    return f"device#{device}"


def copy_sk(created_at_ms: int, share_id: str) -> str:
    return f"created#{created_at_ms:0{_MS_WIDTH}d}#{share_id}"


class ShareStore(DynamoTable):
    """Reads and writes the items of the shares table."""

    def share(self, share_id: str) -> dict[str, Any] | None:
        """The share item (strongly consistent: a revocation counts at once), or None."""
        return self.get_item({"pk": share_pk(share_id), "sk": SHARE_SK}, consistent=True)

    def of_device(self, device: str, limit: int) -> list[dict[str, Any]]:
        """The device's newest ``limit`` share copies, newest first."""
        found = self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :created)",
            ExpressionAttributeValues=wire({":pk": device_pk(device), ":created": "created#"}),
            ScanIndexForward=False,
            ConsistentRead=True,
        )
        out = []
        for item in found:
            out.append(item)
            if len(out) >= limit:
                break
        return out

    def write(self, attributes: dict[str, Any], *, new: bool, expires_at_s: int) -> None:
        """Both items of a share: a new one (``new``: the id must be free) or a revocation
        (the share must not be revoked yet); :class:`ShareChanged` otherwise."""
        share_id, device = attributes["share_id"], attributes["device"]
        condition = (
            "attribute_not_exists(pk)"
            if new
            else "attribute_exists(pk) AND attribute_not_exists(revoked_at_ms)"
        )
        body = {**attributes, TTL_ATTRIBUTE: expires_at_s}
        copy_key = {"pk": device_pk(device), "sk": copy_sk(attributes["created_at_ms"], share_id)}
        items = [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": wire({"pk": share_pk(share_id), "sk": SHARE_SK, **body}),
                    "ConditionExpression": condition,
                }
            },
            {"Put": {"TableName": self.table, "Item": wire({**copy_key, **body})}},
        ]
        try:
            self.call("transact_write_items", TransactItems=items, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                reasons = {r.get("Code") for r in exc.response.get("CancellationReasons", [])}
                if "ConditionalCheckFailed" in reasons:
                    raise ShareChanged() from None
            raise domain_error(exc) from exc
