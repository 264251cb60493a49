"""Fail closed (docs/holds.md): whatever deletes footage refuses to start without the holds
table, naming ``VIDEO_INDEX_HOLDS_TABLE``, even from settings that name every other table
(the command line's, a hand-made configuration): there is no "nothing is held"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from video_index.aws.clients import Clients
from video_index.bulk.service import build_bulk
from video_index.core.errors import ConfigurationError
from video_index.core.settings import Settings
from video_index.deletion.service import build_deletion_jobs, build_enforcer
from video_index.deletion.worker import build_deletion_worker
from video_index.holds.service import build_retention
from video_index.ingest.service import build_ingest_service
from video_index.ops.service import build_ops

#: Every setting but the holds table.
WITHOUT_HOLDS = Settings(
    bucket="segments",
    table="read-model",
    dlq_url="https://sqs.example/dlq",
    reports_bucket="reports",
    deletions_table="deletions",
    deletion_queue_url="https://sqs.example/deletions",
)

BUILDERS: dict[str, Callable[[Settings, Clients], Any]] = {
    "deletion worker": build_deletion_worker,
    "deletion jobs": build_deletion_jobs,
    "bulk units": build_bulk,
    "retention job": build_retention,
    "ingest's enforcement": build_ingest_service,
    "reconcile's enforcement": build_ops,
    "an enforcer": build_enforcer,
}


@pytest.mark.parametrize("builder", BUILDERS.values(), ids=list(BUILDERS))
def test_nothing_that_deletes_footage_starts_without_the_holds_table(
    aws: None, builder: Callable[[Settings, Clients], Any]
) -> None:
    # When it is built from settings naming every table but the holds
    # Then it refuses, naming the missing variable, before it touches anything
    with pytest.raises(ConfigurationError, match="VIDEO_INDEX_HOLDS_TABLE"):
        builder(WITHOUT_HOLDS, Clients.default())
