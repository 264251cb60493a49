"""The video-index stack: wires the constructs together and nothing else.

Each construct owns its resources, their settings and their cdk-nag
acknowledgments, and registers what its resources are to the functions that need
them (``infra/wiring.py``); what each function needs is its spec
(``video_index/core/functions.py``). This class only decides who is connected to whom,
and, last, applies the wiring: every function gets the variables and grants its spec
declares, or synthesis fails naming what is missing.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.aggregation import Aggregation
from infra.annotations import AnnotationsTable
from infra.api import QueryApi
from infra.audit import AuditTrail
from infra.bulk import bulk_operations
from infra.cameras import CameraIdentities
from infra.deletion import DeletionRequests
from infra.exports import ExportPipeline
from infra.holds import Holds
from infra.ingest import IngestPipeline
from infra.media import MediaRoutes
from infra.monitoring import Monitoring
from infra.ops import ReconcileAndRebuild
from infra.outputs import aggregation_outputs, ops_outputs
from infra.read_model import ReadModelTable
from infra.replication import SegmentReplica
from infra.settings import REPLICATION_OFF, StackSettings
from infra.shares import Shares
from infra.signing import ExportSigningKey
from infra.silence import SilentCameras
from infra.storage import SegmentStorage
from infra.wiring import Wiring, provide_settings
from video_index.core.contract import (
    OUTPUT_ANNOTATIONS_TABLE,
    OUTPUT_API_URL,
    OUTPUT_DELETIONS_TABLE,
    OUTPUT_HOLDS_TABLE,
    OUTPUT_REBUILD_STATE_MACHINE,
    OUTPUT_RECONCILE_STATE_MACHINE,
    OUTPUT_REPLICA_BUCKET,
    OUTPUT_SHARES_TABLE,
    OUTPUT_VIEWER_URL,
)


class VideoIndexStack(Stack):
    """Segment bucket -> notifications -> ingest -> read-model table -> HTTP API, with alarms.

    The read model's stream -> the aggregation consumer -> buckets and device totals.

    Plus reconcile and rebuild (S3 listing/inventory -> read model, on Step Functions).

    Environment-agnostic on purpose (no account/region, no lookups): it synthesizes
    offline and without credentials, and one template deploys to any region.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings
        self._add_data(settings)
        self._add_pipelines(settings)
        self._add_api(settings)
        self._add_operations(settings)
        self._add_monitoring(settings)
        self._add_outputs(settings)
        # Last: every construct has registered its resources and functions by now.
        Wiring.of(self).apply()

    def _add_data(self, settings: StackSettings) -> None:
        """The segment bucket, the read model and the annotations (primary data)."""
        provide_settings(self, settings)  # the plain values the specs may declare
        self.storage = SegmentStorage(self, "Storage", settings=settings)
        self.read_model = ReadModelTable(self, "ReadModel")
        # One identity per camera (docs/cameras.md): its own keys only, never an overwrite.
        self.cameras = CameraIdentities(self, "Cameras", bucket=self.storage.bucket)
        self.annotations = AnnotationsTable(self, "Annotations", settings=settings)
        # Who read footage, changed what is kept or was refused (docs/audit.md).
        self.audit = AuditTrail(
            self, "Audit", settings=settings, access_log_bucket=self.storage.access_log_bucket
        )

    def _add_pipelines(self, settings: StackSettings) -> None:
        """Ingest (notifications -> read model), aggregation (its stream), exports."""
        self.ingest = IngestPipeline(self, "Ingest", settings=settings, bucket=self.storage.bucket)
        self.aggregation = Aggregation(
            self, "Aggregation", settings=settings, stream_arn=self.read_model.stream_arn
        )
        self.exports = ExportPipeline(
            self, "Exports", settings=settings, bucket=self.storage.bucket
        )
        # Signs export manifests (docs/playback.md#signed-exports).
        self.export_signing_key = ExportSigningKey(self, "ExportSigningKey")

    def _add_api(self, settings: StackSettings) -> None:
        """The HTTP API, and the bucket's CORS for the players it redirects."""
        self.api = QueryApi(self, "Api", settings=settings, bucket=self.storage.bucket)
        # The routes that need PyAV, on their own function (docs/architecture.md).
        self.media = MediaRoutes(
            self, "Media", settings=settings, bucket=self.storage.bucket, api=self.api
        )
        # Players follow the API's media redirects to presigned URLs; a page on another
        # origin arrives there with `Origin: null`, so presigned reads answer any origin
        # (docs/playback.md).
        self.storage.allow_presigned_reads()

    def _add_operations(self, settings: StackSettings) -> None:
        """Reconcile and rebuild, the optional replica, deletion requests and who may
        record or enforce them."""
        self.reconcile = ReconcileAndRebuild(
            self, "Reconcile", settings=settings, storage=self.storage
        )
        # Deletion requests (docs/deletion.md): the API records them, ingest and reconcile
        # enforce them, the deletion worker runs their jobs; the replica is optional.
        self.replica = (
            SegmentReplica(self, "Replica", settings=settings, storage=self.storage)
            if settings.replication != REPLICATION_OFF
            else None
        )
        self.deletion = DeletionRequests(
            self, "Deletion", settings=settings, bucket=self.storage.bucket
        )
        # Restore and deletion at fleet size (docs/bulk.md); restore needs the replica.
        self.bulk = bulk_operations(
            self, settings, self.storage, self.replica.bucket if self.replica else None
        )
        # Evidence holds (docs/holds.md): the API writes them, every function that deletes
        # footage reads them (its spec must say so), and the daily retention job (instead
        # of a per-kind lifecycle expiration) deletes what they do not cover.
        self.holds = Holds(self, "Holds", settings=settings)
        # Share links (docs/shares.md): the API writes them, the media function reads them.
        self.shares = Shares(self, "Shares")

    def _add_monitoring(self, settings: StackSettings) -> None:
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            settings=settings,
            dead_letter_queues={
                "Ingest": self.ingest.dead_letter_queue,
                "Export": self.exports.dead_letter_queue,
                "Deletion": self.deletion.dead_letter_queue,
            },
            ingest_function=self.ingest.function,
            aggregation=self.aggregation,
            reconcile_state_machine=self.reconcile.reconcile_state_machine,
            rebuild_state_machine=self.reconcile.rebuild_state_machine,
        )
        self.silent_cameras = SilentCameras(
            self, "SilentCameras", settings=settings, topic=self.monitoring.topic
        )

    def _add_outputs(self, settings: StackSettings) -> None:
        """What deployers and the CLI read (docs/deployment.md, docs/operations.md)."""
        self.api_url_output = CfnOutput(
            self,
            OUTPUT_API_URL,
            description=f"Base URL of the video-index HTTP API ({settings.api_auth} authorization)",
            value=self.api.url,
        )
        if self.api.viewer_url is not None:
            self.viewer_url_output = CfnOutput(
                self,
                OUTPUT_VIEWER_URL,
                description="The viewer (docs/viewer.md)",
                value=self.api.viewer_url,
            )
        self.annotations_table_output = CfnOutput(
            self,
            OUTPUT_ANNOTATIONS_TABLE,
            description="Annotations table (primary data: PITR, deletion protection, retained)",
            value=self.annotations.table.table_name,
        )
        self.reconcile_state_machine_output = CfnOutput(
            self,
            OUTPUT_RECONCILE_STATE_MACHINE,
            description='Reconcile state machine (start with {} or {"dry_run": true})',
            value=self.reconcile.reconcile_state_machine.state_machine_arn,
        )
        self.deletions_table_output = CfnOutput(
            self,
            OUTPUT_DELETIONS_TABLE,
            description="Deletion requests table (VIDEO_INDEX_DELETIONS_TABLE for the CLI)",
            value=self.deletion.table.table_name,
        )
        self.holds_table_output = CfnOutput(
            self,
            OUTPUT_HOLDS_TABLE,
            description="Holds table (VIDEO_INDEX_HOLDS_TABLE for the CLI; primary data)",
            value=self.holds.table.table_name,
        )
        CfnOutput(
            self,
            OUTPUT_SHARES_TABLE,
            description="Share links table (VIDEO_INDEX_SHARES_TABLE for the CLI)",
            value=self.shares.table.table_name,
        )
        if self.replica is not None:
            CfnOutput(
                self,
                OUTPUT_REPLICA_BUCKET,
                description="Replica of v1/ (video-index restore --from-bucket)",
                value=self.replica.bucket.bucket_name,
            )
        self.rebuild_state_machine_output = CfnOutput(
            self,
            OUTPUT_REBUILD_STATE_MACHINE,
            description="Rebuild state machine (start with {}: re-project S3 into the read model)",
            value=self.reconcile.rebuild_state_machine.state_machine_arn,
        )
        # What `video-index … --stack NAME` reads (docs/operations.md).
        self.ops_outputs = ops_outputs(
            self,
            storage=self.storage,
            table=self.read_model.table,
            queue=self.ingest.queue,
            dead_letter_queue=self.ingest.dead_letter_queue,
            ops_function=self.reconcile.function,
        )
        self.aggregation_outputs = aggregation_outputs(
            self,
            function=self.aggregation.function,
            dead_letter_queue=self.aggregation.dead_letter_queue,
        )
