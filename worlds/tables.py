"""Read-model table settings the loaded worlds need (tests and benchmarks)."""

from __future__ import annotations

from typing import Any

from video_index.core.table_schema import read_model_table_definition


def without_stream(client: Any, table: str) -> None:
    """Make the just-created, still empty read-model table ``table`` one without a stream:
    for worlds loaded with their aggregates already (``make_world(..., aggregate=False)``),
    where no consumer reads it and an engine keeping every stream record only slows the
    loading of tens of thousands of items down.

    The table is made again rather than updated: moto (5.x) fails every later write of a
    table whose stream was turned off by ``UpdateTable`` (its shard outlives the view type).
    """
    client.delete_table(TableName=table)
    client.get_waiter("table_not_exists").wait(TableName=table)
    definition = read_model_table_definition(table)
    del definition["StreamSpecification"]
    client.create_table(**definition)
    client.get_waiter("table_exists").wait(TableName=table)
