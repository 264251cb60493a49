"""``video-index status``: is ingest keeping up? Against the local stack or a deployed one.

Reports the notification queue's depth (visible + in flight), the dead-letter
queue's depth, the age of the oldest message (CloudWatch ``AWS/SQS``
``ApproximateAgeOfOldestMessage``; "unknown" where CloudWatch has no figure, e.g.
locally — the queue is never peeked at, since a receive would count against the
message's ``maxReceiveCount``), the read model's serving (and building) generation,
the aggregation's freshness (when the stream consumer last applied a batch, and that
batch's lag, from the control item ``control``/``aggregate``) and the last reconcile
result; for a deployed stack also the running and the last
execution of each ops state machine, with its result.

Read-only: GetQueueAttributes, GetMetricStatistics, GetItem on the control items,
ListExecutions and DescribeExecution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from boto3.dynamodb.types import TypeDeserializer

from video_index.aws.executions import StateMachineExecutions
from video_index.aws.store import ReadModelStore
from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS
from video_index.core.layout import AGGREGATE_SK, CONTROL_PK, GENERATION_SK, RECONCILE_SK
from video_index.core.settings import DEFAULT_TOMBSTONE_DAYS
from video_index.core.silence import DEFAULT_SILENT_AFTER_SECONDS
from video_index.ops.silence import check

#: Sort key of the control item where reconcile records its last result (docs/operations.md).
#: How far back to look for the newest CloudWatch datapoint of the queue age.
AGE_LOOKBACK: Final = timedelta(minutes=15)

_deserialize = TypeDeserializer().deserialize


@dataclass(frozen=True)
class StatusTarget:
    """What to ask, and the clients to ask it with."""

    queue_url: str
    dlq_url: str
    table: str
    sqs: Any
    dynamodb: Any
    cloudwatch: Any
    #: Deployed: a Step Functions client and ``{job name: state machine ARN}``.
    stepfunctions: Any = None
    state_machines: dict[str, str] = field(default_factory=dict)
    #: The API's clock (epoch seconds; a local stack's ``--now`` moves it): silence is
    #: judged on it, as ``GET /devices`` judges it. None: the real clock.
    api_clock: Callable[[], float] | None = None


def collect(target: StatusTarget, now: datetime | None = None) -> dict[str, Any]:
    """Every figure of the status; a figure that could not be read is listed in ``errors``."""
    errors: list[str] = []
    status: dict[str, Any] = {
        "queue": _queue(target.sqs, target.queue_url, errors),
        "dlq": _queue(target.sqs, target.dlq_url, errors),
    }
    status["oldest_message_age_seconds"] = _oldest_age(
        target.cloudwatch, target.queue_url, now or datetime.now(UTC)
    )
    status["read_model"] = _read_model(target.dynamodb, target.table, errors)
    status["aggregation"] = _aggregation(
        target.dynamodb, target.table, now or datetime.now(UTC), errors
    )
    status["last_reconcile"] = _last_reconcile(target.dynamodb, target.table, errors)
    api_now = datetime.fromtimestamp(target.api_clock(), tz=UTC) if target.api_clock else None
    at = api_now or now or datetime.now(UTC)
    status["silent"], status["clocks"] = _silent(target, at, errors)
    problems: list[str] = []
    if target.state_machines:
        status["executions"] = {
            job: _executions(target.stepfunctions, arn, job, errors, problems)
            for job, arn in target.state_machines.items()
        }
    status["errors"] = errors
    dlq_depth = status["dlq"].get("depth")
    if dlq_depth:
        problems.insert(0, f"the dead-letter queue holds {dlq_depth} message(s)")
    status["problems"] = problems
    status["healthy"] = not errors and not problems and dlq_depth == 0
    return status


#: How a last execution ends that needs an operator (an operator's stop does not).
FAILED_STATUSES: Final = frozenset({"FAILED", "TIMED_OUT"})


def _executions(
    client: Any, arn: str, job: str, errors: list[str], problems: list[str]
) -> dict[str, Any]:
    """The running executions and the newest one, with its error or output."""
    executions = StateMachineExecutions(client, arn)
    try:
        running = executions.running()
        latest = executions.last_finished()
    except Exception as exc:
        errors.append(f"{job} executions: {exc}")
        return {"state_machine": arn, "running": None, "last": None}
    last: dict[str, Any] | None = None
    if latest is not None:
        last = latest.as_dict()
        if latest.succeeded and isinstance(latest.output, dict):
            last["output"] = latest.output
    if latest is not None and latest.status in FAILED_STATUSES:
        problems.append(
            f"the last {job} execution {latest.status.lower()}: {latest.error}: {latest.cause}"
        )
    return {
        "state_machine": arn,
        "running": [execution.as_dict() for execution in running],
        "last": last,
    }


def _queue(sqs: Any, url: str, errors: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"url": url}
    try:
        attributes = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
    except Exception as exc:
        errors.append(f"queue {url}: {exc}")
        out["depth"] = None
        return out
    visible = int(attributes.get("ApproximateNumberOfMessages", 0))
    in_flight = int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0))
    out.update(
        visible=visible,
        in_flight=in_flight,
        delayed=int(attributes.get("ApproximateNumberOfMessagesDelayed", 0)),
        depth=visible + in_flight,
    )
    return out


def _oldest_age(cloudwatch: Any, queue_url: str, now: datetime) -> float | None:
    """Seconds, from the newest CloudWatch datapoint; ``None`` when there is none."""
    try:
        datapoints = cloudwatch.get_metric_statistics(
            Namespace="AWS/SQS",
            MetricName="ApproximateAgeOfOldestMessage",
            Dimensions=[{"Name": "QueueName", "Value": queue_url.rstrip("/").rsplit("/", 1)[-1]}],
            StartTime=now - AGE_LOOKBACK,
            EndTime=now,
            Period=60,
            Statistics=["Maximum"],
        ).get("Datapoints", [])
    except Exception:
        return None
    if not datapoints:
        return None
    newest = max(datapoints, key=lambda point: point["Timestamp"])
    return float(newest["Maximum"])


def _read_model(dynamodb: Any, table: str, errors: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"table": table}
    try:
        # Read-only: the tombstone setting only matters to writes.
        store = ReadModelStore(dynamodb, table, tombstone_days=DEFAULT_TOMBSTONE_DAYS)
        generations = store.generations()
    except Exception as exc:
        errors.append(f"read model {table}: {exc}")
        out["generation"] = None
        return out
    out["generation"] = generations[0]
    out["building"] = generations[1] if len(generations) > 1 else None
    try:
        control = _get_control(dynamodb, table, GENERATION_SK) or {}
    except Exception as exc:
        errors.append(f"rebuild state in {table}: {exc}")
        control = {}
    # Written by `video-index rebuild` (phase and progress), absent before the first one.
    out["rebuild"] = {
        name: control[name]
        for name in ("phase", "partitions_done", "partitions_total", "error")
        if control.get(name) is not None
    } or None
    return out


def _silent(
    target: StatusTarget, now: datetime, errors: list[str]
) -> tuple[list[dict[str, str]], dict[str, list[dict[str, Any]]]]:
    """The silent cameras, oldest silence first, at the default thresholds, and the camera
    clocks from the same pass: those ahead (by the default tolerance) and the largest upload
    delays (information, not a problem of ingest: the SilentDevices and ClockAhead alarms
    are the stack's signals; docs/operations.md#camera-clocks)."""
    try:
        store = ReadModelStore(target.dynamodb, target.table, tombstone_days=DEFAULT_TOMBSTONE_DAYS)
        report = check(store, now.timestamp, DEFAULT_SILENT_AFTER_SECONDS)
    except Exception as exc:
        errors.append(f"silent cameras in {target.table}: {exc}")
        return [], {"ahead": [], "upload_delay": []}
    tolerance = DEFAULT_CLOCK_TOLERANCE_SECONDS * 1000
    ahead = [(d, c) for d, c in report.clocks if c.is_ahead(tolerance)]
    late = sorted(report.clocks, key=lambda pair: -pair[1].upload_delay_ms)
    clocks = {
        "ahead": [{"device": d, "ahead_ms": c.ahead_ms, "files": c.files} for d, c in ahead],
        "upload_delay": [
            {"device": d, "upload_delay_ms": c.upload_delay_ms, "files": c.files}
            for d, c in late[:20]
            if c.upload_delay_ms > 0
        ],
    }
    silent = [{"device": d, "silent_since": _instant(since)} for d, since in report.silent]
    return silent, clocks


def _aggregation(
    dynamodb: Any, table: str, now: datetime, errors: list[str]
) -> dict[str, Any] | None:
    """The stream consumer's last batch: when it was applied, how long ago, and its lag
    (from its newest record's creation to its application); ``None`` before the first."""
    try:
        control = _get_control(dynamodb, table, AGGREGATE_SK)
    except Exception as exc:
        errors.append(f"aggregation state in {table}: {exc}")
        return None
    if control is None or control.get("t") is None:
        return None
    applied_ms = int(control["t"])
    newest_ms = int(control.get("a") or applied_ms)
    lag_ms = int(control.get("lag_ms", max(0, applied_ms - newest_ms)))
    now_ms = int(now.timestamp() * 1000)
    return {
        "applied_at": _instant(applied_ms),
        "applied_ago_seconds": round(max(0, now_ms - applied_ms) / 1000, 1),
        "newest_change_at": _instant(newest_ms),
        "lag_seconds": round(lag_ms / 1000, 3),
    }


def _instant(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds")


def _last_reconcile(dynamodb: Any, table: str, errors: list[str]) -> dict[str, Any] | None:
    try:
        return _get_control(dynamodb, table, RECONCILE_SK)
    except Exception as exc:
        errors.append(f"last reconcile in {table}: {exc}")
        return None


def _get_control(dynamodb: Any, table: str, sk: str) -> dict[str, Any] | None:
    """The control item ``pk=control, sk=<sk>`` as JSON-ready values, without its keys."""
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": CONTROL_PK}, "sk": {"S": sk}}).get(
        "Item"
    )
    if not item:
        return None
    return {
        name: _json_value(_deserialize(value))
        for name, value in item.items()
        if name not in ("pk", "sk")
    }


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | set | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value
