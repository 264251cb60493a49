"""The deletion requests table (docs/deletion.md): its layout and every request made to it.

Primary data, like the annotations: what a person decided. Two kinds of item:

* the **request** (``pk = req#<deletion id>``, ``sk = req``): the request, who made
  it, its job's state, progress and checkpoint, and the job's lease;
* the **window** (``pk = win#<device>``, ``sk = <from ms, 15 digits>#<deletion id>``):
  one per recorded, not withdrawn request, so "which windows of device D are in
  force?" is one Query of one small partition (ingest asks it once per device and
  batch). Withdrawing a request removes its window item in the same transaction
  that marks the request withdrawn.
* the **quota counter** (``pk = quota#<principal>``, ``sk = <UTC day>``): how many
  requests that caller made that day (docs/access.md), counted before the request is
  recorded; it expires with the table's TTL attribute ``expires_at`` two days later.

Items are handled as plain dictionaries; :mod:`video_index.deletion.jobs` turns them
into models. Errors are mapped by :class:`~video_index.aws.dynamodb.DynamoTable`;
a failed condition is :class:`~video_index.aws.dynamodb.ConditionFailed`.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.aws.dynamodb import (
    ConditionFailed,
    DynamoTable,
    domain_error,
    plain,
    wire,
)
from video_index.aws.errors import error_code
from video_index.core.contract import DELETION_WINDOW_PREFIX

REQUEST_SK: Final = "req"
QUOTA_PREFIX: Final = "quota#"
#: How long a day's counter is kept (TTL, seconds after the day began).
QUOTA_KEEP_SECONDS: Final = 2 * 86_400
REQUEST_PREFIX: Final = "req#"
WINDOW_PREFIX: Final = DELETION_WINDOW_PREFIX
#: Job fields only the lease holder may change (conditioned on its lease).
LEASE_OWNER: Final = "lease_owner"
LEASE_UNTIL: Final = "lease_until"


def request_key(deletion_id: str) -> dict[str, str]:
    return {"pk": f"{REQUEST_PREFIX}{deletion_id}", "sk": REQUEST_SK}


def window_key(device: str, from_ms: int, deletion_id: str) -> dict[str, str]:
    return {"pk": f"{WINDOW_PREFIX}{device}", "sk": f"{from_ms:015d}#{deletion_id}"}


def _numbers(value: Any) -> Any:
    """DynamoDB's Decimals as ints (every number stored here is whole)."""
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def _set_clause(fields: dict[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``SET #f0 = :f0, ...`` for ``fields`` (``None`` values are REMOVEd)."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    sets, removes = [], []
    for i, (name, value) in enumerate(sorted(fields.items())):
        names[f"#f{i}"] = name
        if value is None:
            removes.append(f"#f{i}")
        else:
            values[f":f{i}"] = value
            sets.append(f"#f{i} = :f{i}")
    expression = ("SET " + ", ".join(sets)) if sets else ""
    if removes:
        expression += (" " if expression else "") + "REMOVE " + ", ".join(removes)
    return expression, names, values


class DeletionTable(DynamoTable):
    """Requests and windows of one deletion requests table."""

    # -- requests --------------------------------------------------------------------

    def create(self, request: dict[str, Any], window: dict[str, Any]) -> None:
        """Record a request and its window together (a new id: never overwrites)."""
        device, from_ms, deletion_id = request["device"], request["from_ms"], request["deletion_id"]
        self._transact(
            [
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": wire({**request_key(deletion_id), **_present(request)}),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": wire(
                            {**window_key(device, from_ms, deletion_id), **_present(window)}
                        ),
                    }
                },
            ]
        )

    def get_request(self, deletion_id: str) -> dict[str, Any] | None:
        item = self.get_item(request_key(deletion_id), consistent=True)
        return _numbers(item) if item else None

    def update_request(
        self,
        deletion_id: str,
        fields: dict[str, Any],
        *,
        condition: str,
        values: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Set ``fields`` (``None`` removes) if ``condition`` holds; the item after.

        ``condition`` may use ``#state``, ``#owner`` and ``#until`` and the
        placeholders in ``values``. :class:`ConditionFailed` when it does not hold.
        """
        expression, names, expression_values = _set_clause(fields)
        names.update({"#state": "state", "#owner": LEASE_OWNER, "#until": LEASE_UNTIL})
        expression_values.update(values or {})
        used = expression + " " + condition
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": wire(request_key(deletion_id)),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {k: v for k, v in names.items() if k in used},
            "ReturnValues": "ALL_NEW",
        }
        if expression_values:
            request["ExpressionAttributeValues"] = wire(expression_values)
        answer = self.conditional("update_item", **request)
        return dict(_numbers(plain(answer["Attributes"])))

    def withdraw(self, request: dict[str, Any], fields: dict[str, Any]) -> None:
        """Mark the request withdrawn (``fields``) and remove its window, together;
        :class:`ConditionFailed` when it is gone or already withdrawn."""
        deletion_id = request["deletion_id"]
        expression, names, values = _set_clause(fields)
        names["#state"] = "state"
        values[":withdrawn"] = "withdrawn"
        self._transact(
            [
                {
                    "Update": {
                        "TableName": self.table,
                        "Key": wire(request_key(deletion_id)),
                        "UpdateExpression": expression,
                        "ConditionExpression": "attribute_exists(pk) AND #state <> :withdrawn",
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": wire(values),
                    }
                },
                {
                    "Delete": {
                        "TableName": self.table,
                        "Key": wire(window_key(request["device"], request["from_ms"], deletion_id)),
                    }
                },
            ]
        )

    def spend_quota(self, principal: str, day: str, day_start_s: int, per_day: int) -> bool:
        """Count one request of ``principal`` on ``day``; False (nothing counted) when it
        has made ``per_day`` already. One conditional UpdateItem: concurrent requests
        cannot both take the last one."""
        try:
            self.conditional(
                "update_item",
                TableName=self.table,
                Key=wire({"pk": f"{QUOTA_PREFIX}{principal}", "sk": day}),
                UpdateExpression="ADD #n :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(#n) OR #n < :limit",
                ExpressionAttributeNames={"#n": "requests"},
                ExpressionAttributeValues=wire(
                    {":one": 1, ":limit": per_day, ":expires": day_start_s + QUOTA_KEEP_SECONDS}
                ),
            )
        except ConditionFailed:
            return False
        return True

    # -- windows ---------------------------------------------------------------------

    def windows(self, device: str) -> list[dict[str, Any]]:
        """The windows in force for ``device`` (one strongly consistent Query)."""
        return [
            _numbers(item)
            for item in self.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=wire({":pk": f"{WINDOW_PREFIX}{device}"}),
                ConsistentRead=True,
            )
        ]

    def all_windows(self) -> Iterator[dict[str, Any]]:
        """Every window in force, of every device (a Scan: the table holds only what
        people asked for)."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": "begins_with(pk, :prefix)",
            "ExpressionAttributeValues": wire({":prefix": WINDOW_PREFIX}),
            "ConsistentRead": True,
            "ReturnConsumedCapacity": "TOTAL",
        }
        while True:
            page = self.call("scan", **request)
            yield from (_numbers(plain(item)) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # -- plumbing --------------------------------------------------------------------

    def _transact(self, items: list[dict[str, Any]]) -> None:
        try:
            self.call("transact_write_items", TransactItems=items, ReturnConsumedCapacity="TOTAL")
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                reasons = exc.response.get("CancellationReasons", [])
                if any(r.get("Code") == "ConditionalCheckFailed" for r in reasons):
                    raise ConditionFailed(None, known=False) from None
            raise domain_error(exc) from exc


def _present(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if value is not None}
