"""Fresh read-model tables on an engine, for the fixtures.

Engines: ``moto`` (in-process, inside ``mock_aws``) and ``endpoint`` (the session's DynamoDB
endpoint over HTTP, the ``dynamodb_endpoint`` fixture). :data:`ENGINES` is what the
engine-parametrized tests run on: moto, plus the endpoint when
``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT`` names one (docs/testing.md).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any, Final

import boto3
import pytest

from video_index.core.table_schema import create_tables

TableFactory = Callable[[], tuple[Any, str]]

#: A DynamoDB-compatible endpoint (URL) to run the engine-parametrized tests on as well.
ENDPOINT_ENV: Final = "VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT"
ENGINES: Final[tuple[str, ...]] = (
    ("moto", "endpoint") if os.environ.get(ENDPOINT_ENV) else ("moto",)
)


def engine_client(engine: str, request: pytest.FixtureRequest) -> Any:
    """A DynamoDB client of ``engine`` (for moto: inside an active ``mock_aws``)."""
    if engine == "endpoint":
        endpoint: str = request.getfixturevalue("dynamodb_endpoint")
        return boto3.client("dynamodb", endpoint_url=endpoint)
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
        client = engine_client(engine, request)
        name = f"read-model-{uuid.uuid4().hex[:12]}"
        create_tables(client, name)
        return client, name

    return factory
