"""Jobs that change what is kept without a request leave a record when they start
(docs/audit.md): the retention run and the bulk runs, through their own handlers and
settings; without the trail's settings they do not start."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from video_index.aws.audit import create_audit_trail
from video_index.core.contract import (
    ENV_AUDIT_BUCKET,
    ENV_AUDIT_TABLE,
    ENV_BUCKET,
    ENV_DELETIONS_TABLE,
    ENV_HOLDS_TABLE,
    ENV_REPORTS_BUCKET,
    ENV_RETENTION_DAYS,
)
from video_index.core.errors import BadInput, ConfigurationError
from video_index.core.table_schema import holds_table_definition

AUDIT = "video-index-audit-jobs"


@dataclass
class _Context:
    """What Powertools reads of a Lambda context."""

    aws_request_id: str = "c0ffee00-0000-4000-8000-000000000001"
    function_name: str = "retention"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:111122223333:function:retention"


@pytest.fixture
def deployment(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with mock_aws():
        s3, dynamodb = boto3.client("s3"), boto3.client("dynamodb")
        s3.create_bucket(Bucket="video-index-segments-jobs")
        s3.create_bucket(Bucket="video-index-reports-jobs")
        dynamodb.create_table(**holds_table_definition("holds"))
        create_audit_trail(s3, AUDIT, dynamodb, "audit", 30)
        for name, value in (
            (ENV_BUCKET, "video-index-segments-jobs"),
            (ENV_HOLDS_TABLE, "holds"),
            (ENV_REPORTS_BUCKET, "video-index-reports-jobs"),
            (ENV_DELETIONS_TABLE, "deletions"),
            (ENV_RETENTION_DAYS, json.dumps({"video": 30, "sensor": 90, "analysis": 90})),
            (ENV_AUDIT_BUCKET, AUDIT),
            (ENV_AUDIT_TABLE, "audit"),
        ):
            monkeypatch.setenv(name, value)
        yield s3


def test_a_retention_run_leaves_a_record_before_it_deletes(deployment: Any) -> None:
    from video_index.handlers import retention

    # When the deployed retention function runs
    retention.handler({}, _Context())
    # Then the trail holds one record of it: who, what, which invocation
    (listed,) = deployment.list_objects_v2(Bucket=AUDIT)["Contents"]
    record = json.loads(deployment.get_object(Bucket=AUDIT, Key=listed["Key"])["Body"].read())
    assert (record["principal"], record["action"], record["outcome"]) == (
        "system:retention",
        "retention.run",
        "ok",
    )
    assert record["request_id"] == _Context.aws_request_id


def test_without_the_trail_the_retention_run_does_not_start(
    deployment: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from video_index.handlers import retention

    # Given the function without its audit bucket
    monkeypatch.delenv(ENV_AUDIT_BUCKET)
    # When it runs, Then it refuses, naming the setting (never "auditing off")
    with pytest.raises(ConfigurationError, match=ENV_AUDIT_BUCKET):
        retention.handler({}, _Context())


def test_a_bulk_restore_leaves_a_record_before_it_plans(deployment: Any) -> None:
    from video_index.bulk.names import ACTION_RESTORE_PLAN
    from video_index.handlers import bulk

    # When the bulk function is asked to start a restore it then refuses (the source is the
    # segment bucket itself)
    event = {"action": ACTION_RESTORE_PLAN, "source_bucket": "video-index-segments-jobs"}
    bulk.build.cache_clear()  # (a new container: its services from this environment)
    try:
        with pytest.raises(BadInput, match="source_bucket"):
            bulk.handler(event, _Context(function_name="bulk"))
    finally:
        bulk.build.cache_clear()
    # Then its start was recorded first
    (listed,) = deployment.list_objects_v2(Bucket=AUDIT)["Contents"]
    record = json.loads(deployment.get_object(Bucket=AUDIT, Key=listed["Key"])["Body"].read())
    assert (record["principal"], record["action"]) == ("system:bulk", "restore.start")
