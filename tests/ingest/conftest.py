"""What the ingest tests share: the deployed ingest function's environment on moto."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from video_index.core.table_schema import create_tables
from video_index.handlers import ingest as ingest_handler
from worlds import events as ev


@dataclass
class FakeContext:
    """A Lambda context as the ingest handler reads it."""

    function_name: str = "video-index-ingest"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:111122223333:function:video-index-ingest"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"


@pytest.fixture
def deployed(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The ingest function's declared settings (core/functions.py) pointing at moto, and a
    fresh container: its service is built on first use."""
    boto3.client("s3").create_bucket(Bucket=ev.BUCKET)
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "video-index-read-model", deletions="deletions", holds="holds")
    dlq = boto3.client("sqs").create_queue(QueueName="ingest-dlq")["QueueUrl"]
    for name, value in {
        "VIDEO_INDEX_BUCKET": ev.BUCKET,
        "VIDEO_INDEX_TABLE": "video-index-read-model",
        "VIDEO_INDEX_DLQ_URL": dlq,
        "VIDEO_INDEX_DELETIONS_TABLE": "deletions",
        "VIDEO_INDEX_HOLDS_TABLE": "holds",
    }.items():
        monkeypatch.setenv(name, value)
    ingest_handler.build.cache_clear()
    return dynamodb
