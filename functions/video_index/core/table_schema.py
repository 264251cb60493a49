"""Physical shape of the DynamoDB tables: one definition for CDK, `video-index local` and tests.

Keeping the key schema, TTL attribute and billing mode here means the deployed
table, the local stack and the test tables cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Final

PARTITION_KEY: Final = "pk"
SORT_KEY: Final = "sk"
TTL_ATTRIBUTE: Final = "expires_at"
#: The read model's stream: the aggregation consumer turns each segment item's old and
#: new image into aggregate deltas (docs/read-model.md).
STREAM_VIEW_TYPE: Final = "NEW_AND_OLD_IMAGES"


def read_model_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the read-model table (on-demand, pk/sk strings, a
    stream; no secondary index: every read addresses items by key, docs/read-model.md)."""
    definition = _keyed_table_definition(table_name)
    definition["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": STREAM_VIEW_TYPE}
    return definition


def _keyed_table_definition(table_name: str) -> dict[str, Any]:
    """On-demand table keyed by ``pk``/``sk`` strings, without secondary indexes."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": SORT_KEY, "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
        ],
    }


def annotations_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the annotations table (primary data, docs/annotations.md)."""
    return _keyed_table_definition(table_name)


def deletions_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the deletion requests table (primary data,
    docs/deletion.md): a request item per request, a window item per recorded window."""
    return _keyed_table_definition(table_name)


def holds_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the holds table (primary data, docs/holds.md): a hold
    item per hold and a copy under its device."""
    return _keyed_table_definition(table_name)


def shares_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the shares table (docs/shares.md): a share item per
    share and a copy under its device; items expire by TTL a while after the share ends."""
    return _keyed_table_definition(table_name)


def audit_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for the audit index (docs/audit.md): one item per record,
    ``day#<yyyy-mm-dd>`` / ``<record id>``, expiring by TTL on ``expires_at``."""
    return _keyed_table_definition(table_name)


def create_tables(
    client: Any,
    read_model: str,
    annotations: str | None = None,
    deletions: str | None = None,
    holds: str | None = None,
    shares: str | None = None,
) -> None:
    """Create the tables (and enable TTL) the way the stack does; for local runs and tests."""
    client.create_table(**read_model_table_definition(read_model))
    client.get_waiter("table_exists").wait(TableName=read_model)
    client.update_time_to_live(
        TableName=read_model,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
    )
    if annotations:
        client.create_table(**annotations_table_definition(annotations))
        client.get_waiter("table_exists").wait(TableName=annotations)
    if deletions:
        client.create_table(**deletions_table_definition(deletions))
        client.get_waiter("table_exists").wait(TableName=deletions)
    if holds:
        client.create_table(**holds_table_definition(holds))
        client.get_waiter("table_exists").wait(TableName=holds)
    if shares:
        client.create_table(**shares_table_definition(shares))
        client.get_waiter("table_exists").wait(TableName=shares)
        client.update_time_to_live(
            TableName=shares,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )
