"""The silent-camera check as deployed (docs/operations.md#silent-cameras): its schedule,
its least-privilege role, its alarm on SilentDevices, and the settings it reads."""

from __future__ import annotations

import json

from infra.settings import StackSettings
from tests.infra.template import Synth, as_list, statements_by_sid
from video_index.core.contract import (
    ENV_RETENTION_DAYS,
    ENV_SILENT_AFTER_SECONDS,
    METRICS_NAMESPACE,
    SILENCE_HANDLER,
    SILENCE_SERVICE_NAME,
    SILENT_DEVICES_METRIC,
)

DEFAULTS = StackSettings()


def test_the_check_runs_every_five_minutes_and_may_only_read_the_read_model(synth: Synth) -> None:
    # Given the silent-camera construct
    silence = synth.video_index.silent_cameras
    function = synth.props(silence.function)
    # Then the function runs the silence handler with the per-kind thresholds
    assert function["Handler"] == SILENCE_HANDLER
    thresholds = json.loads(function["Environment"]["Variables"][ENV_SILENT_AFTER_SECONDS])
    assert thresholds == {"video": 300, "sensor": 900, "analysis": 900}
    # And its role reads the read model (its items) and writes its logs: nothing else
    statements = synth.policy_statements(silence.role)
    by_sid = statements_by_sid(statements)
    assert sorted(as_list(by_sid["ReadModelRead"]["Action"])) == [
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
    ]
    assert by_sid["ReadModelRead"]["Resource"] == synth.arn(synth.video_index.read_model.table)
    assert {s.get("Sid") for s in statements} - {None} == {"WriteOwnLogs", "ReadModelRead"}
    assert all(
        a.startswith("xray:") for s in statements if "Sid" not in s for a in as_list(s["Action"])
    )
    # And a rule starts it every five minutes
    rules = [
        r
        for r in synth.of_type("AWS::Events::Rule").values()
        if r["Properties"].get("ScheduleExpression") == "rate(5 minutes)"
    ]
    assert len(rules) == 1
    assert rules[0]["Properties"]["Targets"][0]["Arn"] == synth.arn(silence.function)


def test_the_alarm_fires_while_one_camera_is_silent(synth: Synth) -> None:
    alarm = synth.props(synth.video_index.silent_cameras.alarm)
    assert (alarm["Namespace"], alarm["MetricName"]) == (METRICS_NAMESPACE, SILENT_DEVICES_METRIC)
    assert alarm["Dimensions"] == [{"Name": "service", "Value": SILENCE_SERVICE_NAME}]
    assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 0)
    assert alarm["AlarmActions"] == [synth.ref(synth.video_index.monitoring.topic)]


def test_the_api_shows_the_stacks_retention_and_thresholds(synth: Synth) -> None:
    variables = synth.props(synth.video_index.api.function)["Environment"]["Variables"]
    assert json.loads(variables[ENV_RETENTION_DAYS]) == dict(DEFAULTS.retention_days)
    assert json.loads(variables[ENV_SILENT_AFTER_SECONDS]) == dict(DEFAULTS.silent_after_seconds)
