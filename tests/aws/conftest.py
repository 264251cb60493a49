"""The engine under contract: moto in-process, and the test endpoint when one is named.

Each test gets a fresh read-model table made by the product's own definition
(:func:`video_index.core.table_schema.create_tables`: pk/sk strings, on demand, a
``NEW_AND_OLD_IMAGES`` stream, TTL on ``expires_at``), so the contract is checked on
the table the product uses.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from moto import mock_aws

from tests.support.tables import ENGINES, engine_client
from video_index.core.table_schema import create_tables
from worlds.aggregation import streams_client


@dataclass(frozen=True)
class Engine:
    """A DynamoDB client, a DynamoDB Streams client beside it, and a fresh table."""

    name: str
    dynamodb: Any
    streams: Any
    table: str


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with mock_aws():
        dynamodb = engine_client(str(request.param), request)
        table = f"contract-{uuid.uuid4().hex[:12]}"
        create_tables(dynamodb, table)
        yield Engine(str(request.param), dynamodb, streams_client(dynamodb), table)
        dynamodb.delete_table(TableName=table)
