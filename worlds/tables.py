"""Read-model table settings the loaded worlds need (tests and benchmarks)."""

from __future__ import annotations

from typing import Any


def without_stream(client: Any, table: str) -> None:
    """Turn the read-model table's stream off: for worlds loaded with their aggregates
    already (``make_world(..., aggregate=False)``), where no consumer reads it. DynamoDB
    Local slows down with every stream record it keeps, which made loading tens of
    thousands of items take minutes."""
    client.update_table(TableName=table, StreamSpecification={"StreamEnabled": False})
