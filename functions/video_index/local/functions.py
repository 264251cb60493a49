"""The local stack's stand-ins for the deployed functions' event sources: the stream
consumer and the ingest, export and deletion workers (docs/local.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from video_index.core.queue_settings import (
    DELETION_BATCH_SIZE,
    DELETION_TIMEOUT_SECONDS,
    EXPORT_BATCH_SIZE,
    EXPORT_TIMEOUT_SECONDS,
    visibility_timeout_seconds,
)
from video_index.local.aws import REGION
from video_index.local.aws import client as make_client

if TYPE_CHECKING:
    from video_index.local.stack import LocalStack


def start_workers(stack: LocalStack, dynamodb_endpoint: str) -> None:
    """The stream consumer and the ingest, export and deletion workers, as Lambda's
    event sources would run the deployed functions."""
    from video_index.aggregate.service import build_aggregator
    from video_index.deletion.worker import build_deletion_worker
    from video_index.ingest.service import build_ingest_service
    from video_index.local.streams import StreamEventSource
    from video_index.local.worker import SqsEventSourceWorker
    from video_index.media.worker import build_export_worker

    # Buckets and device items follow the segment items from the table's stream; the
    # consumer starts first and stops after ingest, like the deployed mapping.
    aggregator = build_aggregator(stack.settings, stack.clients)
    stack.aggregation = StreamEventSource(
        stack.clients.dynamodb,
        make_client(stack.session, "dynamodbstreams", dynamodb_endpoint),
        stack.names.table,
        aggregator.handle,
        region=REGION,
    )
    stack._stops.append(("aggregation", stack.aggregation.stop))
    stack.aggregation.start()
    ingest = build_ingest_service(stack.settings, stack.clients)
    stack.worker = SqsEventSourceWorker(
        stack.clients.sqs,
        stack.settings.queue_url,
        ingest.handle,
        region=REGION,
        batch_size=stack.batch_size,
        batching_window_seconds=stack.batching_window_seconds,
        visibility_timeout_seconds=stack.visibility_timeout_seconds,
        function_timeout_seconds=stack.function_timeout_seconds,
    )
    stack._stops.append(("ingest worker", stack.worker.stop))
    stack.worker.start()
    exports = build_export_worker(stack.settings, stack.clients)
    stack.export_worker = SqsEventSourceWorker(
        stack.clients.sqs,
        stack.settings.export_queue_url,
        exports.handle,
        region=REGION,
        batch_size=EXPORT_BATCH_SIZE,
        batching_window_seconds=0,
        visibility_timeout_seconds=visibility_timeout_seconds(EXPORT_TIMEOUT_SECONDS),
        function_timeout_seconds=EXPORT_TIMEOUT_SECONDS,
        function_name="video-index-export-local",
    )
    stack._stops.append(("export worker", stack.export_worker.stop))
    stack.export_worker.start()
    deletions = build_deletion_worker(stack.settings, stack.clients)
    stack.deletion_worker = SqsEventSourceWorker(
        stack.clients.sqs,
        stack.settings.deletion_queue_url,
        deletions.handle,
        region=REGION,
        batch_size=DELETION_BATCH_SIZE,
        batching_window_seconds=0,
        visibility_timeout_seconds=visibility_timeout_seconds(DELETION_TIMEOUT_SECONDS),
        function_timeout_seconds=DELETION_TIMEOUT_SECONDS,
        function_name="video-index-deletion-local",
    )
    stack._stops.append(("deletion worker", stack.deletion_worker.stop))
    stack.deletion_worker.start()
