"""What the audit trail relies on from S3 Object Lock, stated from AWS's documentation and
checked against moto (docs/audit.md#why-records-cannot-be-changed).

AWS, "Locking objects with Object Lock"
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html):

  "In compliance mode, a protected object version can't be overwritten or deleted by any
  user, including the root user in your AWS account. When an object is locked in
  compliance mode, its retention mode can't be changed, and its retention period can't
  be shortened."

  "When you place an object version in a bucket with a default retention period […]
  Amazon S3 calculates a Retain Until Date for that version."

AWS, "Deleting object versions from an Object Lock-enabled bucket": a DELETE without a
version id adds a delete marker and leaves the locked version in place; a DELETE of the
version itself is refused while it is locked.

AWS, "How to prevent object overwrites with conditional writes"
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html): a PUT
with ``If-None-Match: *`` of a key that exists fails with 412 Precondition Failed.

moto refuses each attempt where it can; where it cannot (it lets a compliance retention
be shortened), the test is a strict expected failure: the day moto refuses, it passes and
says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from video_index.aws.audit import S3AuditLog, create_audit_trail, object_key
from video_index.core.audit import AuditRecord, AuditWriteFailed, iso_ms, record_id

BUCKET = "video-index-audit-lock"
DAYS = 30
NOW_MS = 1_796_040_000_000  # 2026-12-01T12:00:00Z


def _record(request_id: str = "r1") -> AuditRecord:
    return AuditRecord(
        record_id=record_id(NOW_MS, request_id),
        time=iso_ms(NOW_MS),
        principal="user-viewer",
        role="viewer",
        action="playlist.read",
        route="GET /devices/{device}/playlist.m3u8",
        device="cam-a",
        window_from=None,
        window_to=None,
        outcome="ok",
        status=200,
        request_id=request_id,
        source="203.0.113.10",
    )


@pytest.fixture
def stored() -> Iterator[tuple[Any, str, str]]:
    """A record written by the product's own log; (s3 client, its key, its version)."""
    with mock_aws():
        s3, dynamodb = boto3.client("s3"), boto3.client("dynamodb")
        create_audit_trail(s3, BUCKET, dynamodb, "audit", DAYS)
        S3AuditLog(s3, BUCKET, dynamodb, "audit", DAYS, lambda: NOW_MS / 1000).write(_record())
        key = object_key(_record())
        version = s3.head_object(Bucket=BUCKET, Key=key)["VersionId"]
        yield s3, key, version


def test_a_record_is_locked_in_compliance_mode_for_the_setting(
    stored: tuple[Any, str, str],
) -> None:
    s3, key, _ = stored
    head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ObjectLockMode"] == "COMPLIANCE"
    # (retained the setting's days from when S3 stored it, by S3's own clock)
    until = head["ObjectLockRetainUntilDate"]
    assert abs(until - head["LastModified"] - timedelta(days=DAYS)) < timedelta(seconds=2)


def test_deleting_a_locked_version_is_refused(stored: tuple[Any, str, str]) -> None:
    s3, key, version = stored
    with pytest.raises(ClientError) as refused:
        s3.delete_object(Bucket=BUCKET, Key=key, VersionId=version)
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    # And a delete without a version only hides it behind a marker: the record stays
    s3.delete_object(Bucket=BUCKET, Key=key)
    assert s3.get_object(Bucket=BUCKET, Key=key, VersionId=version)["Body"].read()


def test_a_record_is_never_written_over(stored: tuple[Any, str, str]) -> None:
    s3, key, _ = stored
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"{}", IfNoneMatch="*")
    assert refused.value.response["Error"]["Code"] == "PreconditionFailed"
    # And the product's own writer refuses a second record of the same id
    log = S3AuditLog(s3, BUCKET, boto3.client("dynamodb"), "audit", DAYS)
    with pytest.raises(AuditWriteFailed):
        log.write(_record())


@pytest.mark.xfail(
    strict=True, reason="moto lets a COMPLIANCE retention be shortened; AWS refuses it"
)
def test_a_compliance_retention_cannot_be_shortened(stored: tuple[Any, str, str]) -> None:
    s3, key, version = stored
    with pytest.raises(ClientError):
        s3.put_object_retention(
            Bucket=BUCKET,
            Key=key,
            VersionId=version,
            Retention={"Mode": "COMPLIANCE", "RetainUntilDate": datetime(2020, 1, 1, tzinfo=UTC)},
        )
