"""The local stack's AWS resources, made like the CDK stack makes them (docs/local.md).

Queues with their dead-letter queues and redrive policies, the segment bucket
with its S3 → SQS notifications on ``v1/`` and CORS for presigned reads, and the
tables (:func:`video_index.core.table_schema.create_tables`). The settings come
from the same modules the stack reads (``core.queue_settings``, ``core.contract``).
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Final

from video_index.core.contract import INDEXED_PREFIX
from video_index.core.queue_settings import (
    DLQ_RETENTION_DAYS,
    NOTIFIED_EVENTS,
    QUEUE_RETENTION_DAYS,
)

_DAY_SECONDS: Final = 24 * 60 * 60
#: Id of the bucket's notification configuration (as the CDK stack's handler names it).
NOTIFICATION_ID: Final = "video-index-notifications"
#: Pages on any origin may read what a presigned URL points at, as the deployed bucket's
#: rule says (docs/playback.md): the signature is the credential, and a page on another
#: origin arrives from the API's media redirect with `Origin: null`.
PRESIGNED_READ_ORIGINS: Final = ("*",)


def create_queue(
    sqs: Any, name: str, dlq_name: str, *, visibility_timeout: int, max_receive_count: int
) -> tuple[str, str]:
    """A queue and its dead-letter queue (redrive after ``max_receive_count``): the URLs."""
    dlq_url = str(
        sqs.create_queue(
            QueueName=dlq_name,
            Attributes={"MessageRetentionPeriod": str(DLQ_RETENTION_DAYS * _DAY_SECONDS)},
        )["QueueUrl"]
    )
    redrive = {"deadLetterTargetArn": queue_arn(sqs, dlq_url), "maxReceiveCount": max_receive_count}
    queue_url = str(
        sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(visibility_timeout),
                "MessageRetentionPeriod": str(QUEUE_RETENTION_DAYS * _DAY_SECONDS),
                "RedrivePolicy": json.dumps(redrive),
            },
        )["QueueUrl"]
    )
    return queue_url, dlq_url


def queue_arn(sqs: Any, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def create_bucket(s3: Any, sqs: Any, bucket: str, queue_url: str) -> None:
    """The segment bucket, versioned like the deployed one, notifying ``queue_url`` of
    every change under ``v1/`` (the deletes moto does not notify in a versioned bucket
    are sent by :mod:`video_index.local.s3_fidelity`)."""
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "Id": NOTIFICATION_ID,
                    "QueueArn": queue_arn(sqs, queue_url),
                    "Events": list(NOTIFIED_EVENTS),
                    "Filter": {
                        "Key": {"FilterRules": [{"Name": "prefix", "Value": INDEXED_PREFIX}]}
                    },
                }
            ]
        },
    )
    s3.put_bucket_cors(
        Bucket=bucket,
        CORSConfiguration={
            "CORSRules": [
                {
                    "AllowedOrigins": list(PRESIGNED_READ_ORIGINS),
                    "AllowedMethods": ["GET", "HEAD"],
                    "AllowedHeaders": ["Range"],
                    "ExposeHeaders": ["Content-Length", "Content-Range", "ETag"],
                    "MaxAgeSeconds": 3600,
                }
            ]
        },
    )


def create_cursor_key_secret(secretsmanager: Any, name: str) -> str:
    """The secret the API seals its page cursors with, as the stack makes it (64 random
    letters and digits, new for each stack): its ARN."""
    value = secrets.token_hex(32)
    return str(secretsmanager.create_secret(Name=name, SecretString=value)["ARN"])


def create_keys(clients: Any, names: Any) -> dict[str, Any]:
    """The API's cursor key secret and the export signing key (a KMS key of moto), as the
    stack makes them: the settings naming them."""
    from video_index.aws.kms import create_signing_key

    return {
        "cursor_key_secret": create_cursor_key_secret(
            clients.secretsmanager, names.cursor_key_secret
        ),
        "export_signing_key": create_signing_key(clients.kms, "video-index local exports"),
    }


def create_audit_trail(clients: Any, names: Any, overrides: dict[str, Any]) -> None:
    """The audit bucket (Object Lock, COMPLIANCE) and its index, as the stack makes them
    (docs/audit.md), kept for the stack's ``audit_retention_days``."""
    from video_index.aws.audit import create_audit_trail as create
    from video_index.core.audit import DEFAULT_AUDIT_RETENTION_DAYS

    days = int(overrides.get("audit_retention_days", DEFAULT_AUDIT_RETENTION_DAYS))
    create(clients.s3, names.audit_bucket, clients.dynamodb, names.audit_table, days)
