"""The aggregation consumer as deployed: its event source mapping on the read model's
stream, its least-privilege role, its dead-letter queue and alarms, its settings
(docs/deployment.md, "Aggregation"; docs/read-model.md#aggregation-by-stream)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App
from hypothesis import given
from hypothesis import strategies as st

from infra.aggregation import segment_change_pattern
from infra.settings import DLQ_RETENTION_DAYS, SettingsError, StackSettings
from tests.infra.template import Synth, as_list, statements_by_sid
from video_index.core.contract import (
    AGGREGATE_HANDLER,
    AGGREGATE_SERVICE_NAME,
    AGGREGATION_LAG_METRIC,
    METRICS_NAMESPACE,
    OUTPUT_AGGREGATE_FUNCTION,
    OUTPUT_AGGREGATION_DLQ_URL,
)
from video_index.core.keys import DEVICE_RE, KINDS
from video_index.core.layout import CONTROL_PK, bucket_pk, devices_pk, segment_pk

DEFAULTS = StackSettings()


def _mapping(synth: Synth) -> dict[str, Any]:
    return synth.props(synth.video_index.aggregation.event_source)


# --- the event source mapping -----------------------------------------------------------------


def test_the_consumer_reads_the_read_models_stream_in_order_with_partial_failures(
    synth: Synth,
) -> None:
    # Given the aggregation's event source mapping
    stack = synth.video_index
    props = _mapping(synth)
    # Then it reads the read-model table's stream (new and old images) into the consumer
    assert props["EventSourceArn"] == {
        "Fn::GetAtt": [synth.logical_id(stack.read_model.table), "StreamArn"]
    }
    assert synth.props(stack.read_model.table)["StreamSpecification"] == {
        "StreamViewType": "NEW_AND_OLD_IMAGES"
    }
    assert props["FunctionName"] == synth.ref(stack.aggregation.function)
    # And from the oldest record, one invocation per shard (exact high-water marks)
    assert props["StartingPosition"] == "TRIM_HORIZON"
    assert props["ParallelizationFactor"] == 1
    # And in batches of the settings' size and window (the write cost, docs)
    assert props["BatchSize"] == DEFAULTS.aggregation_batch_size == 1000
    assert props["MaximumBatchingWindowInSeconds"] == 60
    # And a failed item resumes the batch, a crash halves it, retries are bounded and
    # then the range goes to the encrypted dead-letter queue
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BisectBatchOnFunctionError"] is True
    assert props["MaximumRetryAttempts"] == DEFAULTS.aggregation_retry_attempts == 10
    dlq = stack.aggregation.dead_letter_queue
    assert props["DestinationConfig"] == {"OnFailure": {"Destination": synth.arn(dlq)}}
    queue = synth.props(dlq)
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["MessageRetentionPeriod"] == DLQ_RETENTION_DAYS * 24 * 60 * 60


def test_only_segment_item_changes_pass_the_filter(synth: Synth) -> None:
    # Given the filter of the mapping, as deployed
    (only,) = _mapping(synth)["FilterCriteria"]["Filters"]
    pattern = json.loads(only["Pattern"])
    # Then it is the construct's, over every event name a segment change has
    assert pattern == segment_change_pattern()
    for name in ("INSERT", "MODIFY", "REMOVE"):
        assert _matches(pattern, _record(name, segment_pk(1, "cam-1", "video")))
    # And the consumer's own writes never invoke it
    for pk in (CONTROL_PK, devices_pk(1), devices_pk(12), bucket_pk(3, "cam-1")):
        assert not _matches(pattern, _record("MODIFY", pk)), pk


_devices = st.from_regex(DEVICE_RE, fullmatch=True)
_generations = st.integers(min_value=0, max_value=10**9)


@given(generation=_generations, device=_devices, kind=st.sampled_from(KINDS))
def test_the_filter_never_drops_a_segment_change(generation: int, device: str, kind: str) -> None:
    # Given any segment item's partition key, changed in any way
    pk = segment_pk(generation, device, kind)
    # Then the filter lets it through (a dropped change would be a wrong aggregate)
    for name in ("INSERT", "MODIFY", "REMOVE"):
        assert _matches(segment_change_pattern(), _record(name, pk))


@given(generation=_generations, device=_devices)
def test_the_filter_keeps_the_consumers_own_writes_out(generation: int, device: str) -> None:
    # Given the partition keys the consumer writes
    pattern = segment_change_pattern()
    # Then none passes, but a bucket of a device named like a kind (the consumer skips it)
    assert not _matches(pattern, _record("MODIFY", devices_pk(generation)))
    assert not _matches(pattern, _record("MODIFY", CONTROL_PK))
    passes = _matches(pattern, _record("INSERT", bucket_pk(generation, device)))
    assert passes == (device in KINDS)


def _record(event_name: str, pk: str) -> dict[str, Any]:
    return {
        "eventName": event_name,
        "dynamodb": {"Keys": {"pk": {"S": pk}, "sk": {"S": "x"}}, "SequenceNumber": "1"},
    }


def _matches(pattern: dict[str, Any], event: dict[str, Any]) -> bool:
    """Lambda's filter rules for the operators the pattern uses (reference: the Lambda
    developer guide, "Filter rule syntax"): nested keys must all match; a list matches
    when any of its values (exact) or operators (``prefix``, ``suffix``) does."""
    for key, rule in pattern.items():
        if key not in event:
            return False
        value = event[key]
        if isinstance(rule, dict):
            if not isinstance(value, dict) or not _matches(rule, value):
                return False
            continue
        if not any(_matches_one(option, value) for option in rule):
            return False
    return True


def _matches_one(option: Any, value: Any) -> bool:
    if isinstance(option, dict):
        ((operator, operand),) = option.items()
        if operator == "prefix":
            return isinstance(value, str) and value.startswith(operand)
        if operator == "suffix":
            return isinstance(value, str) and value.endswith(operand)
        raise AssertionError(f"operator not modelled: {operator}")
    return bool(option == value)


# --- the function and its role ----------------------------------------------------------------


def test_the_consumer_runs_the_aggregate_handler_with_the_table_and_gap_tolerance(
    synth: Synth,
) -> None:
    # Given the aggregation function
    stack = synth.video_index
    props = synth.props(stack.aggregation.function)
    # Then it runs the aggregate handler with only what that handler reads
    assert props["Handler"] == AGGREGATE_HANDLER
    assert props["Environment"]["Variables"] == {
        "VIDEO_INDEX_TABLE": synth.ref(stack.read_model.table),
        "VIDEO_INDEX_GAP_TOLERANCE_MS": str(DEFAULTS.gap_tolerance_ms),
        "VIDEO_INDEX_TOMBSTONE_DAYS": str(DEFAULTS.tombstone_days),  # its store is built so
        "POWERTOOLS_SERVICE_NAME": AGGREGATE_SERVICE_NAME,
        "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
    }
    assert props["Timeout"] == DEFAULTS.aggregation_timeout_seconds
    assert props["TracingConfig"] == {"Mode": "Active"}


def test_the_consumers_role_has_exactly_what_it_does(synth: Synth) -> None:
    # Given the aggregation role's statements
    stack = synth.video_index
    aggregation = stack.aggregation
    statements = synth.policy_statements(aggregation.role)
    by_sid = statements_by_sid(statements)
    table = stack.read_model.table
    # Then aggregates: read and write items of the read model (its spec's read and write:
    # an aggregate read, put back conditioned on its version; segment items queried), on
    # the table only
    assert by_sid["ReadModelRead"]["Action"] == [
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
    ]
    assert by_sid["ReadModelWrite"]["Action"] == [
        "dynamodb:ConditionCheckItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
    ]
    assert by_sid["ReadModelRead"]["Resource"] == synth.arn(table)
    assert by_sid["ReadModelWrite"]["Resource"] == synth.arn(table)
    # And the stream's records on the stream's ARN only
    assert by_sid["ReadModelStream"]["Action"] == [
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
    ]
    assert by_sid["ReadModelStream"]["Resource"] == {
        "Fn::GetAtt": [synth.logical_id(table), "StreamArn"]
    }
    # And ListStreams, which has no resource-level permission
    assert by_sid["ListStreams"] == {
        "Action": "dynamodb:ListStreams",
        "Effect": "Allow",
        "Resource": "*",
        "Sid": "ListStreams",
    }
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(aggregation.log_group)
    # And what CDK adds: X-Ray, and sending failed ranges to its own dead-letter queue
    generated = [s for s in statements if "Sid" not in s]
    by_resource = {json.dumps(s["Resource"]): sorted(as_list(s["Action"])) for s in generated}
    assert by_resource == {
        '"*"': ["xray:PutTelemetryRecords", "xray:PutTraceSegments"],
        json.dumps(synth.arn(aggregation.dead_letter_queue)): [
            "sqs:GetQueueAttributes",
            "sqs:GetQueueUrl",
            "sqs:SendMessage",
        ],
    }
    # And nothing else: no scan, no batch, no delete, no update, no other table
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert not {a for a in actions if a.startswith("dynamodb:")} - {
        *by_sid["ReadModelRead"]["Action"],
        *by_sid["ReadModelWrite"]["Action"],
        *by_sid["ReadModelStream"]["Action"],
        "dynamodb:ListStreams",
    }
    assert len(statements) == 7


def test_ingest_reads_and_writes_items_and_never_deletes_or_scans(synth: Synth) -> None:
    # Given the ingest role's statements on the read model
    table = synth.arn(synth.video_index.read_model.table)
    statements = synth.policy_statements(synth.video_index.ingest.role)
    actions = {a for s in statements if s["Resource"] == table for a in as_list(s["Action"])}
    # Then it reads and writes items (one conditional write per transition; aggregates
    # are the stream consumer's, which no IAM action tells apart), and nothing more
    assert actions == {
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    }


# --- alarms and outputs -----------------------------------------------------------------------


def test_the_lag_alarm_watches_the_consumers_metric_above_the_threshold(synth: Synth) -> None:
    # Given the aggregation-lag alarm
    monitoring = synth.video_index.monitoring
    props = synth.props(monitoring.aggregation_lag_alarm)
    # Then it fires when the newest change of a batch was older than the threshold
    assert props["Namespace"] == METRICS_NAMESPACE
    assert props["MetricName"] == AGGREGATION_LAG_METRIC
    assert props["Dimensions"] == [{"Name": "service", "Value": AGGREGATE_SERVICE_NAME}]
    assert props["Statistic"] == "Maximum"
    assert props["Threshold"] == DEFAULTS.aggregation_lag_alarm_seconds * 1000 == 300_000
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["AlarmActions"] == [synth.ref(monitoring.topic)]


def test_the_iterator_age_alarm_watches_the_stream_the_consumer_reads(synth: Synth) -> None:
    # Given the iterator-age alarm
    stack = synth.video_index
    props = synth.props(stack.monitoring.aggregation_iterator_age_alarm)
    # Then it fires when Lambda reads records older than the threshold (failing, behind)
    assert (props["Namespace"], props["MetricName"]) == ("AWS/Lambda", "IteratorAge")
    assert props["Dimensions"] == [
        {"Name": "FunctionName", "Value": synth.ref(stack.aggregation.function)}
    ]
    assert props["Statistic"] == "Maximum"
    assert props["Threshold"] == 300_000
    assert props["AlarmActions"] == [synth.ref(stack.monitoring.topic)]


def test_a_failed_batch_in_the_dead_letter_queue_pages(synth: Synth) -> None:
    # Given the dead-letter alarms
    stack = synth.video_index
    props = synth.props(stack.monitoring.dlq_alarms["Aggregation"])
    # Then one watches the aggregation's queue and publishes to the alarm topic
    queue = stack.aggregation.dead_letter_queue
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": [synth.logical_id(queue), "QueueName"]}}
    ]
    assert props["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert props["Threshold"] == 0
    assert props["AlarmActions"] == [synth.ref(stack.monitoring.topic)]
    assert "reconcile" in props["AlarmDescription"]


def test_the_stack_outputs_the_consumers_function_and_dead_letter_queue(synth: Synth) -> None:
    # Given the template's outputs
    outputs = synth.template.to_json()["Outputs"]
    stack = synth.video_index
    # Then the function's name and the queue's URL are there, under the contract's keys
    assert outputs[OUTPUT_AGGREGATE_FUNCTION]["Value"] == synth.ref(stack.aggregation.function)
    assert outputs[OUTPUT_AGGREGATION_DLQ_URL]["Value"] == synth.ref(
        stack.aggregation.dead_letter_queue
    )


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("context", "key", "expected"),
    [
        (
            {"aggregation_lag_alarm_seconds": "60"},
            "aggregation_lag_alarm_seconds",
            "greater than aggregation_max_batching_window_seconds (60)",
        ),
        (
            {"aggregation_max_batching_window_seconds": "120", "aggregation_lag_alarm_seconds": 90},
            "aggregation_lag_alarm_seconds",
            "greater than aggregation_max_batching_window_seconds (120)",
        ),
        (
            {"aggregation_lag_alarm_seconds": "900"},
            "aggregation_lag_alarm_seconds",
            "less than fresh_window_seconds (900)",
        ),
        (
            {"fresh_window_seconds": "240"},
            "aggregation_lag_alarm_seconds",
            "less than fresh_window_seconds (240)",
        ),
        (
            {"aggregation_max_batching_window_seconds": "301"},
            "aggregation_max_batching_window_seconds",
            "between 0 and 300",
        ),
        ({"aggregation_batch_size": "0"}, "aggregation_batch_size", "between 1 and 10000"),
        ({"aggregation_batch_size": "10001"}, "aggregation_batch_size", "between 1 and 10000"),
        ({"aggregation_retry_attempts": "-1"}, "aggregation_retry_attempts", "between 0 and"),
        ({"aggregation_timeout_seconds": "901"}, "aggregation_timeout_seconds", "between 1"),
    ],
)
def test_aggregation_settings_out_of_order_or_range_are_refused(
    context: dict[str, object], key: str, expected: str
) -> None:
    # Given an app with aggregation settings that break a rule
    app = App(context=context)
    # When settings are read from it
    with pytest.raises(SettingsError) as error:
        StackSettings.from_context(app)
    # Then the error names the key and the rule
    assert f"context key {key!r}" in str(error.value)
    assert expected in str(error.value)


def test_batching_window_lag_alarm_and_fresh_window_in_order_are_accepted() -> None:
    # Given a window, a lag alarm and a fresh window in increasing order
    settings = StackSettings.from_context(
        App(
            context={
                "aggregation_max_batching_window_seconds": "0",
                "aggregation_lag_alarm_seconds": "1",
                "fresh_window_seconds": "2",
            }
        )
    )
    # Then they are taken as given
    assert (
        settings.aggregation_max_batching_window_seconds,
        settings.aggregation_lag_alarm_seconds,
        settings.fresh_window_seconds,
    ) == (0, 1, 2)
