"""The deployed entry point: configuration from the environment, metrics, partial responses."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.ingest.conftest import FakeContext
from video_index.core.settings import ConfigurationError
from video_index.handlers import ingest as ingest_handler
from worlds import events as ev

KEY = "v1/video/cam-001/2026/11/30/12/20261130T120000.000Z_10000_3f9a1c2e7b4d5a60.mp4"


def test_handler_applies_a_batch_and_emits_metrics(
    deployed: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a queue batch with one upload event
    batch = ev.sqs_event(
        ev.sqs_record(ev.s3_notification(ev.s3_record(KEY, size=5, sequencer="01")))
    )
    # When Lambda invokes the handler
    response = ingest_handler.handler(batch, FakeContext())  # type: ignore[arg-type]
    # Then nothing is reported failed and the segment is indexed
    assert response == {"batchItemFailures": []}
    items = deployed.scan(TableName="video-index-read-model")["Items"]
    assert any(i["pk"]["S"] == "g1#seg#cam-001#video" for i in items)
    # And the outcome is published as a CloudWatch EMF metric
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert emf and emf[-1]["Applied"] == [1.0]
    assert emf[-1]["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "VideoIndex"


def test_handler_without_configuration_names_the_missing_variable(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a container with none of the ingest function's settings
    for name in ("BUCKET", "TABLE", "DLQ_URL", "DELETIONS_TABLE", "HOLDS_TABLE"):
        monkeypatch.delenv(f"VIDEO_INDEX_{name}", raising=False)
    ingest_handler.build.cache_clear()  # a fresh container: built on first use
    # When Lambda invokes the handler, Then it refuses to start, naming every one of them
    missing = (
        "the ingest function is missing environment variable(s): VIDEO_INDEX_BUCKET, "
        "VIDEO_INDEX_TABLE, VIDEO_INDEX_DLQ_URL, VIDEO_INDEX_DELETIONS_TABLE, "
        "VIDEO_INDEX_HOLDS_TABLE"
    )
    with pytest.raises(ConfigurationError, match=re.escape(missing)):
        ingest_handler.handler(ev.sqs_event(), FakeContext())  # type: ignore[arg-type]
