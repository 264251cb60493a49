"""An SQS work queue with its dead-letter queue: the one shape every queue of the stack has."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.limits import DLQ_RETENTION_DAYS
from infra.settings import StackSettings


@dataclass(frozen=True)
class WorkQueue:
    queue: sqs.Queue
    dead_letter_queue: sqs.Queue


def work_queue(
    scope: Construct,
    settings: StackSettings,
    *,
    visibility_timeout_seconds: int,
    max_receive_count: int | None = None,
) -> WorkQueue:
    """``Queue`` and ``DeadLetterQueue`` in ``scope``: SSE, TLS only, a redrive after
    ``max_receive_count`` receives (the stack's setting unless the queue's consumer needs
    its own count), the DLQ keeping messages for SQS's maximum 14 days."""
    dead_letter_queue = sqs.Queue(
        scope,
        "DeadLetterQueue",
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(DLQ_RETENTION_DAYS),
    )
    queue = sqs.Queue(
        scope,
        "Queue",
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        visibility_timeout=Duration.seconds(visibility_timeout_seconds),
        retention_period=Duration.days(settings.queue_retention_days),
        dead_letter_queue=sqs.DeadLetterQueue(
            queue=dead_letter_queue,
            max_receive_count=max_receive_count or settings.max_receive_count,
        ),
    )
    return WorkQueue(queue, dead_letter_queue)
