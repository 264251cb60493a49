"""Fixtures of the deletion tests: a versioned bucket (moto) and a deletion requests table
on either engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.deletion_world import World, deletions_table, make_world
from video_index.local import s3_fidelity


@pytest.fixture
def world(aws: None, engine: str, request: pytest.FixtureRequest) -> World:
    dynamodb, table = deletions_table(engine, request)
    return make_world(dynamodb, table)


@pytest.fixture
def moto_world(aws: None, request: pytest.FixtureRequest) -> World:
    """The same on moto only (for the many-example properties)."""
    dynamodb, table = deletions_table("moto", request)
    return make_world(dynamodb, table)


@pytest.fixture(autouse=True)
def s3_like_s3() -> Iterator[None]:
    """moto's S3 made to list versions after a KeyMarker, and notify deletes, as S3 does
    (what ``video-index local`` runs with: :mod:`video_index.local.s3_fidelity`)."""
    undo = s3_fidelity.install()
    try:
        yield
    finally:
        undo()
