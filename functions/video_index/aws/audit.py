"""The audit trail on AWS (docs/audit.md): an Object Lock bucket (the truth) and an index.

* **The record** is one object, ``records/<yyyy>/<mm>/<dd>/<record id>.json``, put with
  ``If-None-Match: *`` (never over another) into a bucket whose default Object Lock
  retention (COMPLIANCE mode, the stack's ``audit_retention_days``) locks every version
  for that long: no one, the account's root included, can delete or shorten it.
* **The index** is one item per record in the audit table, ``pk = day#<yyyy-mm-dd>``,
  ``sk = <record id>`` (time-ordered), written with one conditional ``PutItem``
  (``attribute_not_exists``) and expiring by TTL (``expires_at``) after the same days. No
  role holds ``UpdateItem``, ``DeleteItem`` or ``BatchWriteItem`` on it. It is rebuilt
  from the bucket if ever lost; the read model's rebuild never touches either.

``GET /audit`` is a Query per day of its window, at most :data:`MAX_REQUESTS` a page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.dynamodb import plain, wire
from video_index.aws.errors import error_code
from video_index.core.audit import (
    AuditLog,
    AuditPage,
    AuditQuery,
    AuditRecord,
    AuditWriteFailed,
    record_id,
)
from video_index.core.contract import AUDIT_RECORDS_PREFIX, ENV_AUDIT_BUCKET, ENV_AUDIT_TABLE
from video_index.core.errors import ConfigurationError, ServiceError
from video_index.core.settings import Settings
from video_index.core.table_schema import TTL_ATTRIBUTE, audit_table_definition

#: DynamoDB requests one page of ``GET /audit`` may make (each reads at most 1 MB).
MAX_REQUESTS: Final = 8
_DAY_MS: Final = 86_400_000


def day_of(time_ms: int) -> str:
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%Y-%m-%d")


def object_key(record: AuditRecord) -> str:
    day = day_of(record.time_ms).replace("-", "/")
    return f"{AUDIT_RECORDS_PREFIX}{day}/{record.record_id}.json"


class S3AuditLog(AuditLog):
    """Records in the Object Lock bucket, found through the index table."""

    def __init__(
        self,
        s3: Any,
        bucket: str,
        dynamodb: Any,
        table: str,
        retention_days: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._s3, self._bucket = s3, bucket
        self._dynamodb, self._table = dynamodb, table
        self._retention = timedelta(days=retention_days)
        self._clock = clock

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def write(self, record: AuditRecord) -> None:
        """The object first (the truth), then its index item; either failing raises."""
        try:
            self._s3.put_object(
                Bucket=self._bucket,
                Key=object_key(record),
                Body=record.body(),
                ContentType="application/json",
                IfNoneMatch="*",
                # Object Lock needs an integrity checksum on every PUT.
                ChecksumAlgorithm="SHA256",
            )
            expires = int(self._clock() + self._retention.total_seconds())
            item = {"pk": f"day#{day_of(record.time_ms)}", "sk": record.record_id}
            self._dynamodb.put_item(
                TableName=self._table,
                Item=wire({**item, **_indexed(record), TTL_ATTRIBUTE: expires}),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except (ClientError, BotoCoreError) as exc:
            code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
            raise AuditWriteFailed(f"the audit record could not be stored ({code})") from exc

    def query(self, query: AuditQuery) -> AuditPage:
        found: list[AuditRecord] = []
        position = query.position
        start_ms = int(position.split("-", 1)[0]) if position else query.from_ms
        day_ms = start_ms - start_ms % _DAY_MS
        low, high = record_id(query.from_ms, ""), record_id(query.to_ms, "")
        for _ in range(MAX_REQUESTS):
            request: dict[str, Any] = {
                "TableName": self._table,
                "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
                "ExpressionAttributeValues": wire(
                    {":pk": f"day#{day_of(day_ms)}", ":low": low, ":high": high}
                ),
                "Limit": 1000,
            }
            if position is not None and day_of(int(position.split("-", 1)[0])) == day_of(day_ms):
                request["ExclusiveStartKey"] = wire({"pk": f"day#{day_of(day_ms)}", "sk": position})
            page = self._call(request)
            for item in page.get("Items", []):
                record = AuditRecord.from_json(plain(item))
                position = record.record_id
                if query.matches(record) and record.record_id < high:
                    found.append(record)
                    if len(found) == query.limit:
                        return AuditPage(found, position)
            if "LastEvaluatedKey" in page:
                position = str(plain(page["LastEvaluatedKey"])["sk"])
                continue
            day_ms += _DAY_MS
            position = record_id(day_ms, "") if day_ms < query.to_ms else None
            if position is None:
                return AuditPage(found, None)
        return AuditPage(found, position)

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            page: dict[str, Any] = self._dynamodb.query(**request)
        except (ClientError, BotoCoreError) as exc:
            raise ServiceError("the audit index is unavailable") from exc
        return page


def build_audit_log(
    settings: Settings, s3: Any, dynamodb: Any, clock: Callable[[], float] = time.time
) -> AuditLog:
    """The deployment's audit trail. Without its bucket or table, a log that refuses every
    write naming the missing setting: what must be recorded is refused (a request answered
    503, a job not started), never done unrecorded."""
    missing = [
        setting
        for setting, given in (
            (ENV_AUDIT_BUCKET, settings.audit_bucket),
            (ENV_AUDIT_TABLE, settings.audit_table),
        )
        if not given
    ]
    if missing:
        return UnconfiguredAuditLog(", ".join(missing))
    return S3AuditLog(
        s3,
        str(settings.audit_bucket),
        dynamodb,
        str(settings.audit_table),
        settings.audit_retention_days,
        clock,
    )


class UnconfiguredAuditLog(AuditLog):
    """The log of a deployment missing a setting: every write and read refused, naming it."""

    def __init__(self, missing: str) -> None:
        self.missing = missing

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def write(self, record: AuditRecord) -> None:
        raise ConfigurationError(f"{self.missing} is not set: requests cannot be audited")

    def query(self, query: AuditQuery) -> AuditPage:
        raise ConfigurationError(f"{self.missing} is not set: there is no audit trail")


def _indexed(record: AuditRecord) -> dict[str, Any]:
    """The record's fields as index attributes (absent ones left out)."""
    return {name: value for name, value in record.to_json().items() if value is not None}


def create_audit_trail(
    s3: Any, bucket: str, dynamodb: Any, table: str, retention_days: int
) -> None:
    """Make the audit bucket and index as the stack does (``video-index local``, tests):
    Object Lock on at creation, COMPLIANCE default retention of ``retention_days``, the
    index's TTL. Made again, they are left as they are."""
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    locked = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    if "Rule" not in locked:
        _lock(s3, bucket, retention_days)
    try:
        dynamodb.create_table(**audit_table_definition(table))
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
        return  # made already (a second world over the same tables): as it was made
    dynamodb.get_waiter("table_exists").wait(TableName=table)
    dynamodb.update_time_to_live(
        TableName=table,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
    )


def _lock(s3: Any, bucket: str, retention_days: int) -> None:
    s3.put_object_lock_configuration(
        Bucket=bucket,
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": retention_days}},
        },
    )
