"""Clip exports (docs/playback.md): the export queue with its DLQ and the export Lambda.

The API writes a job to ``exports/<id>/job.json`` and sends ``{"export_id"}`` to
the queue; the export Lambda (one job per invocation, up to 15 minutes, with the
ephemeral storage a 6-hour window's files need) stream-copies the window's files
into one MP4 beside the job. Least privilege, written out here: read the indexed
video, read and write the export objects, nothing else.
"""

from __future__ import annotations

from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import derived_objects_acknowledgment
from infra.python_function import PythonFunction, derived_media_statement, python_function
from infra.queues import work_queue
from infra.settings import StackSettings
from infra.wiring import Wiring
from video_index.core.contract import ENV_EXPORT_QUEUE_URL, EXPORTS_PREFIX
from video_index.core.functions import EXPORT, Access
from video_index.core.queue_settings import (
    EXPORT_BATCH_SIZE,
    EXPORT_TIMEOUT_SECONDS,
    visibility_timeout_seconds,
)


class ExportPipeline(Construct):
    """The export queue + DLQ and the export Lambda fed by it."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, bucket: s3.IBucket
    ) -> None:
        super().__init__(scope, construct_id)
        queues = work_queue(
            self,
            settings,
            visibility_timeout_seconds=visibility_timeout_seconds(EXPORT_TIMEOUT_SECONDS),
        )
        self.queue, self.dead_letter_queue = queues.queue, queues.dead_letter_queue
        # The API queues exports (its spec declares the send).
        send = iam.PolicyStatement(
            sid="QueueExports", actions=["sqs:SendMessage"], resources=[self.queue.queue_arn]
        )
        Wiring.of(self).provide(
            ENV_EXPORT_QUEUE_URL, self, self.queue.queue_url, {Access.SEND: lambda: [send]}
        )
        lambda_function = self._function(settings, bucket)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        self.function.add_event_source(
            event_sources.SqsEventSource(
                self.queue, batch_size=EXPORT_BATCH_SIZE, report_batch_item_failures=True
            )
        )

    def _function(self, settings: StackSettings, bucket: s3.IBucket) -> PythonFunction:
        """Its spec's read of the segments, and the export objects (job, clip) written here."""
        return python_function(
            self,
            settings=settings,
            spec=EXPORT,
            description="video-index export: a window's video as one MP4 (stream copy)",
            timeout=Duration.seconds(EXPORT_TIMEOUT_SECONDS),
            memory_size=settings.export_memory_mb,
            ephemeral_storage=Size.mebibytes(settings.export_ephemeral_storage_mb),
            statements=[
                derived_media_statement(
                    bucket, "ReadWriteExports", ["s3:GetObject", "s3:PutObject"], [EXPORTS_PREFIX]
                ),
            ],
            acknowledgments=[
                derived_objects_acknowledgment(
                    bucket, EXPORTS_PREFIX, "Each job reads its job.json and writes its clip."
                ),
            ],
        )
