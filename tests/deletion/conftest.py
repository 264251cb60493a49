"""Fixtures of the deletion tests: a versioned bucket (moto) and a deletion requests table
on either engine."""

from __future__ import annotations

import pytest

from tests.support.deletion_world import World, deletions_table, make_world


@pytest.fixture
def world(aws: None, engine: str, request: pytest.FixtureRequest) -> World:
    dynamodb, table = deletions_table(engine, request)
    return make_world(dynamodb, table)


@pytest.fixture
def moto_world(aws: None, request: pytest.FixtureRequest) -> World:
    """The same on moto only (for the many-example properties)."""
    dynamodb, table = deletions_table("moto", request)
    return make_world(dynamodb, table)
