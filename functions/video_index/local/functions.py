"""The local stack's stand-ins for the deployed functions' event sources: the stream
consumer and the ingest, export and deletion workers (docs/local.md).

Each is built from the settings of its own spec (``core/functions.py``), as deployed: a
worker whose builder asks for a setting its spec does not declare fails here too, where
one ``Settings`` holding every table would hide it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from video_index.core.functions import AGGREGATE, DELETION, EXPORT, INGEST, FunctionSpec
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
    from video_index.core.settings import Settings
    from video_index.local.stack import LocalStack
    from video_index.local.worker import Handler, SqsEventSourceWorker


def settings_of(stack: LocalStack, spec: FunctionSpec) -> Settings:
    """The settings the function ``spec`` would get deployed: only those it declares, read
    from the environment this stack would give it."""
    from video_index.core.settings import Settings

    return Settings.for_function(spec, stack.settings.environ())


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
    aggregator = build_aggregator(settings_of(stack, AGGREGATE), stack.clients)
    stack.aggregation = StreamEventSource(
        stack.clients.dynamodb,
        make_client(stack.session, "dynamodbstreams", dynamodb_endpoint),
        stack.names.table,
        aggregator.handle,
        region=REGION,
    )
    stack._stops.append(("aggregation", stack.aggregation.stop))
    stack.aggregation.start()
    ingest = build_ingest_service(settings_of(stack, INGEST), stack.clients)
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
    exports = build_export_worker(settings_of(stack, EXPORT), stack.clients)
    stack.export_worker = _job_worker(
        stack,
        "export",
        stack.settings.export_queue_url,
        exports.handle,
        EXPORT_BATCH_SIZE,
        EXPORT_TIMEOUT_SECONDS,
    )
    deletions = build_deletion_worker(settings_of(stack, DELETION), stack.clients)
    stack.deletion_worker = _job_worker(
        stack,
        "deletion",
        stack.settings.deletion_queue_url,
        deletions.handle,
        DELETION_BATCH_SIZE,
        DELETION_TIMEOUT_SECONDS,
    )


def _job_worker(
    stack: LocalStack,
    name: str,
    queue_url: str,
    handle: Handler,
    batch_size: int,
    timeout_seconds: int,
) -> SqsEventSourceWorker:
    """A job function's event source (export, deletion): no batching window, the queue's
    visibility as long as the function may run; started, and stopped with the stack."""
    from video_index.local.worker import SqsEventSourceWorker

    worker = SqsEventSourceWorker(
        stack.clients.sqs,
        queue_url,
        handle,
        region=REGION,
        batch_size=batch_size,
        batching_window_seconds=0,
        visibility_timeout_seconds=visibility_timeout_seconds(timeout_seconds),
        function_timeout_seconds=timeout_seconds,
        function_name=f"video-index-{name}-local",
    )
    stack._stops.append((f"{name} worker", worker.stop))
    worker.start()
    return worker
