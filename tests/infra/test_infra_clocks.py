"""Camera clocks as deployed (docs/operations.md#camera-clocks): the ClockAhead alarm on
what the ingest function publishes, at the stack's tolerance, and the API told the same
tolerance."""

from __future__ import annotations

from infra.settings import StackSettings
from tests.infra.template import Synth
from video_index.core.contract import (
    CLOCK_AHEAD_METRIC,
    ENV_CLOCK_TOLERANCE_SECONDS,
    INGEST_SERVICE_NAME,
    METRICS_NAMESPACE,
)

DEFAULTS = StackSettings()


def test_the_clock_ahead_alarm_watches_ingests_metric_at_the_tolerance(synth: Synth) -> None:
    # Given the stack's monitoring
    alarm = synth.props(synth.video_index.monitoring.clock_ahead_alarm)
    # Then the alarm watches the largest ClockAheadSeconds the ingest function publishes
    assert (alarm["Namespace"], alarm["MetricName"]) == (METRICS_NAMESPACE, CLOCK_AHEAD_METRIC)
    assert alarm["Dimensions"] == [{"Name": "service", "Value": INGEST_SERVICE_NAME}]
    assert (alarm["Statistic"], alarm["Period"]) == ("Maximum", 300)
    # And fires above the tolerance (10 s by default), to the alarm topic
    assert DEFAULTS.clock_tolerance_seconds == 10
    assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 10)
    assert alarm["AlarmActions"] == [synth.ref(synth.video_index.monitoring.topic)]
    # And a camera without files (no data) is no alarm
    assert alarm["TreatMissingData"] == "notBreaching"


def test_the_api_says_ahead_at_the_same_tolerance(synth: Synth) -> None:
    variables = synth.props(synth.video_index.api.function)["Environment"]["Variables"]
    assert variables[ENV_CLOCK_TOLERANCE_SECONDS] == str(DEFAULTS.clock_tolerance_seconds)
