"""Fixtures of the bulk tests: the deletion world (moto) and a reports bucket."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.deletion_world import World, deletions_table, make_world
from video_index.local import s3_fidelity

REPORTS = "video-index-bulk-reports"


@pytest.fixture
def moto_world(aws: None, request: pytest.FixtureRequest) -> World:
    dynamodb, table = deletions_table("moto", request)
    world = make_world(dynamodb, table)
    world.s3.create_bucket(Bucket=REPORTS)
    return world


@pytest.fixture(autouse=True)
def s3_like_s3() -> Iterator[None]:
    undo = s3_fidelity.install()
    try:
        yield
    finally:
        undo()
