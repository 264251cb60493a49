"""How S3 events reach ingest: the queue and event-source settings, in one place.

The deployed stack (``infra``) and ``video-index local`` both take these values,
so the local worker batches, hides, redelivers and dead-letters messages exactly
like the Lambda SQS event source in AWS does.
"""

from __future__ import annotations

from typing import Final

#: Ingest Lambda timeout.
INGEST_TIMEOUT_SECONDS: Final = 60
#: AWS guidance for an SQS event source: visibility timeout at least 6x the function
#: timeout, so a message is not redelivered while a (retried) invocation still holds it.
VISIBILITY_TIMEOUT_FACTOR: Final = 6
#: SQS event source: records per invocation and how long Lambda may wait to fill a batch.
SQS_BATCH_SIZE: Final = 10
SQS_MAX_BATCHING_WINDOW_SECONDS: Final = 1
#: Receives before SQS moves a message to the dead-letter queue.
MAX_RECEIVE_COUNT: Final = 5
#: Retention of the notification queue. Kept well below the DLQ's 14 days because a
#: moved message keeps its original enqueue time: whatever it spent here is lost there.
QUEUE_RETENTION_DAYS: Final = 4
#: SQS keeps a message at most 14 days. The DLQ uses the maximum so a parked event can be
#: inspected and redriven long after the failure.
DLQ_RETENTION_DAYS: Final = 14
#: S3 events that change the set of objects under ``v1/`` (docs/ingest.md), as S3 spells them.
#: Of lifecycle's, only the delete marker it creates when it expires a current version:
#: in a versioned bucket (the stack's always is) ``s3:LifecycleExpiration:Delete`` reports
#: a *version* permanently deleted (the undelete window's noncurrent versions, expired
#: delete markers), which never changes what a key currently holds, so the read model
#: has nothing to learn from it; each one cost a message, a HEAD, a read and a write.
NOTIFIED_EVENTS: Final = (
    "s3:ObjectCreated:*",
    "s3:ObjectRemoved:*",
    "s3:LifecycleExpiration:DeleteMarkerCreated",
)


#: The export Lambda: one job per invocation, up to Lambda's 15 minutes.
EXPORT_TIMEOUT_SECONDS: Final = 900
EXPORT_BATCH_SIZE: Final = 1
#: The deletion worker: one job per invocation; a job longer than one invocation
#: queues its own continuation before the time runs out (docs/deletion.md).
DELETION_TIMEOUT_SECONDS: Final = 900
DELETION_BATCH_SIZE: Final = 1
#: Receives of a deletion message before SQS parks it in the DLQ: fixed (not the stack's
#: ``max_receive_count``), because the worker ends a job ``failed`` on its last receive
#: rather than leave it ``running`` in the DLQ (docs/deletion.md).
DELETION_MAX_RECEIVES: Final = MAX_RECEIVE_COUNT


def visibility_timeout_seconds(ingest_timeout_seconds: int = INGEST_TIMEOUT_SECONDS) -> int:
    """The queue's visibility timeout for an ingest function with this timeout."""
    return VISIBILITY_TIMEOUT_FACTOR * ingest_timeout_seconds


#: The notification queue's visibility timeout with the default ingest timeout (360 s).
VISIBILITY_TIMEOUT_SECONDS: Final = visibility_timeout_seconds()
