"""Fresh read-model tables on either engine (moto or DynamoDB Local), for the fixtures."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from video_index.core.table_schema import create_tables
from video_index.local.dynamodb_local import DynamoDBLocal

TableFactory = Callable[[], tuple[Any, str]]


def engine_client(engine: str, request: pytest.FixtureRequest) -> Any:
    """A DynamoDB client of ``engine`` (for moto: inside an active ``mock_aws``)."""
    if engine == "dynamodb_local":
        server: DynamoDBLocal = request.getfixturevalue("dynamodb_local")
        return boto3.client("dynamodb", endpoint_url=server.endpoint)
    return boto3.client("dynamodb")


def make_tables(engine: str, request: pytest.FixtureRequest) -> tuple[Any, str, str]:
    """A fresh read-model table and a fresh annotations table on ``engine``:
    (client, read-model table, annotations table)."""
    client = engine_client(engine, request)
    suffix = uuid.uuid4().hex[:12]
    read_model, annotations = f"read-model-{suffix}", f"annotations-{suffix}"
    create_tables(client, read_model, annotations)
    return client, read_model, annotations


def make_table_factory(engine: str, request: pytest.FixtureRequest) -> TableFactory:
    """A function creating a fresh read-model table on ``engine``: (client, table name).

    For moto it must be called inside an active ``mock_aws``.
    """

    def factory() -> tuple[Any, str]:
        if engine == "dynamodb_local":
            server: DynamoDBLocal = request.getfixturevalue("dynamodb_local")
            client = boto3.client("dynamodb", endpoint_url=server.endpoint)
        else:
            client = boto3.client("dynamodb")
        name = f"read-model-{uuid.uuid4().hex[:12]}"
        create_tables(client, name)
        return client, name

    return factory
