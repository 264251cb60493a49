"""What the deployed stack (``infra/``) and the functions must agree on, in one place.

Names, prefixes and action names that one side writes and the other reads: the
handlers' import paths, the Powertools service names and metric namespace, the
environment variables, the Step Functions actions the ops function dispatches
on, and the layout of the reports bucket. ``infra`` imports them from here; so
does the code that reads them at run time, so the two cannot drift.
"""

from __future__ import annotations

from typing import Final

from video_index.core.keys import KEY_PREFIX

# --- functions ---------------------------------------------------------------------------

INGEST_HANDLER: Final = "video_index.handlers.ingest.handler"
API_HANDLER: Final = "video_index.handlers.api.handler"
MEDIA_HANDLER: Final = "video_index.handlers.media.handler"
RECONCILE_HANDLER: Final = "video_index.handlers.reconcile.handler"
EXPORT_HANDLER: Final = "video_index.handlers.export.handler"
DELETION_HANDLER: Final = "video_index.handlers.deletion.handler"
AGGREGATE_HANDLER: Final = "video_index.handlers.aggregate.handler"
SILENCE_HANDLER: Final = "video_index.handlers.silence.handler"
RETENTION_HANDLER: Final = "video_index.handlers.retention.handler"
BULK_HANDLER: Final = "video_index.handlers.bulk.handler"

#: Powertools service names (logs, traces, the ``service`` metric dimension).
INGEST_SERVICE_NAME: Final = "video-index-ingest"
API_SERVICE_NAME: Final = "video-index-api"
MEDIA_SERVICE_NAME: Final = "video-index-media"
RECONCILE_SERVICE_NAME: Final = "video-index-reconcile"
EXPORT_SERVICE_NAME: Final = "video-index-export"
DELETION_SERVICE_NAME: Final = "video-index-deletion"
AGGREGATE_SERVICE_NAME: Final = "video-index-aggregate"
SILENCE_SERVICE_NAME: Final = "video-index-silence"
#: Cameras that uploaded nothing for longer than their kind's ``silent_after`` (an alarm).
SILENT_DEVICES_METRIC: Final = "SilentDevices"
RETENTION_SERVICE_NAME: Final = "video-index-retention"
BULK_SERVICE_NAME: Final = "video-index-bulk"
#: CloudWatch namespace of the product's custom metrics (Powertools EMF).
METRICS_NAMESPACE: Final = "VideoIndex"
#: Metric the reconcile function publishes per repaired partition; the drift alarm watches it.
PARTITIONS_REPAIRED_METRIC: Final = "PartitionsRepaired"
#: Metric ingest and reconcile publish per object deleted again inside a recorded
#: deletion window (docs/deletion.md: no resurrection).
DELETION_ENFORCED_METRIC: Final = "DeletionEnforced"
#: Deletion jobs that ended ``failed`` (the deletion worker; alarmed, docs/deletion.md).
DELETION_JOBS_FAILED_METRIC: Final = "DeletionJobsFailed"
#: Metric ingest and reconcile publish per object inside a recorded deletion window that
#: a hold keeps (docs/holds.md: holds win over deletion requests).
DELETION_HELD_METRIC: Final = "DeletionHeld"
#: How old the newest change of a batch was when the stream consumer applied it (ms);
#: the aggregation-lag alarm watches it (docs/read-model.md#aggregation-by-stream).
AGGREGATION_LAG_METRIC: Final = "AggregationLag"
#: Per ingest batch: how far the file that ended furthest after S3 received it ended (its
#: key's end − the event's ``eventTime``, seconds, 0 when none did); a late upload cannot
#: raise it, a camera clock ahead does. The clock-ahead alarm watches it
#: (docs/operations.md#camera-clocks).
CLOCK_AHEAD_METRIC: Final = "ClockAheadSeconds"
#: Per created file (up to 100 a batch): ``eventTime`` − the key's end, seconds, ≥ 0.
UPLOAD_DELAY_METRIC: Final = "UploadDelaySeconds"

# --- environment (runtime configuration, docs/operations.md) ------------------------------

ENV_BUCKET: Final = "VIDEO_INDEX_BUCKET"
ENV_TABLE: Final = "VIDEO_INDEX_TABLE"
ENV_ANNOTATIONS_TABLE: Final = "VIDEO_INDEX_ANNOTATIONS_TABLE"
ENV_QUEUE_URL: Final = "VIDEO_INDEX_QUEUE_URL"
ENV_DLQ_URL: Final = "VIDEO_INDEX_DLQ_URL"
ENV_GAP_TOLERANCE_MS: Final = "VIDEO_INDEX_GAP_TOLERANCE_MS"
ENV_TOMBSTONE_DAYS: Final = "VIDEO_INDEX_TOMBSTONE_DAYS"
ENV_REPORTS_BUCKET: Final = "VIDEO_INDEX_REPORTS_BUCKET"
ENV_INVENTORY_DESTINATION: Final = "VIDEO_INDEX_INVENTORY_DESTINATION"
ENV_MAX_REMOVE_SHARE: Final = "VIDEO_INDEX_RECONCILE_MAX_REMOVE_SHARE"
ENV_PRESIGN_SECONDS: Final = "VIDEO_INDEX_PRESIGN_SECONDS"
ENV_FRESH_WINDOW_SECONDS: Final = "VIDEO_INDEX_FRESH_WINDOW_SECONDS"
ENV_EXPORT_QUEUE_URL: Final = "VIDEO_INDEX_EXPORT_QUEUE_URL"
ENV_MAX_EXPORT_BYTES: Final = "VIDEO_INDEX_MAX_EXPORT_BYTES"
ENV_DELETIONS_TABLE: Final = "VIDEO_INDEX_DELETIONS_TABLE"
ENV_DELETION_QUEUE_URL: Final = "VIDEO_INDEX_DELETION_QUEUE_URL"
#: The holds table (docs/holds.md) and, for the retention job, each kind's retention.
ENV_HOLDS_TABLE: Final = "VIDEO_INDEX_HOLDS_TABLE"
ENV_REPLICA_BUCKET: Final = "VIDEO_INDEX_REPLICA_BUCKET"
#: Per-kind JSON objects: when a camera is silent, how long each kind is kept.
ENV_SILENT_AFTER_SECONDS: Final = "VIDEO_INDEX_SILENT_AFTER_SECONDS"
ENV_RETENTION_DAYS: Final = "VIDEO_INDEX_RETENTION_DAYS"
#: Seconds a file may end after S3 received it before its camera's clock counts as ahead.
ENV_CLOCK_TOLERANCE_SECONDS: Final = "VIDEO_INDEX_CLOCK_TOLERANCE_SECONDS"
#: The API's page cursors are sealed with a key derived from this secret (its ARN or name,
#: docs/api.md#pages-and-cursors).
ENV_CURSOR_KEY_SECRET: Final = "VIDEO_INDEX_CURSOR_KEY_SECRET"
#: The asymmetric KMS key export manifests are signed with (its ARN,
#: docs/playback.md#signed-exports).
ENV_EXPORT_SIGNING_KEY: Final = "VIDEO_INDEX_EXPORT_SIGNING_KEY"
#: The viewer's sign-in (docs/viewer.md): the OIDC issuer and public client id its page uses.
ENV_VIEWER_OIDC_ISSUER: Final = "VIDEO_INDEX_VIEWER_OIDC_ISSUER"
ENV_VIEWER_OIDC_CLIENT_ID: Final = "VIDEO_INDEX_VIEWER_OIDC_CLIENT_ID"
#: The origins the viewer's page may connect to besides the API's own (its CSP ``connect-src``,
#: docs/viewer.md): the segment bucket's, and the identity provider's. Space-separated.
ENV_VIEWER_CONNECT_ORIGINS: Final = "VIDEO_INDEX_VIEWER_CONNECT_ORIGINS"
#: Share links (docs/shares.md): their table, the longest window one may show (seconds of
#: video) and the longest a link may live (seconds).
ENV_SHARES_TABLE: Final = "VIDEO_INDEX_SHARES_TABLE"
ENV_SHARE_MAX_WINDOW_SECONDS: Final = "VIDEO_INDEX_SHARE_MAX_WINDOW_SECONDS"
ENV_SHARE_MAX_LIFETIME_SECONDS: Final = "VIDEO_INDEX_SHARE_MAX_LIFETIME_SECONDS"
#: The audit trail (docs/audit.md): the Object Lock bucket holding each record (the truth)
#: and the index table answering ``GET /audit`` beside it.
ENV_AUDIT_BUCKET: Final = "VIDEO_INDEX_AUDIT_BUCKET"
ENV_AUDIT_TABLE: Final = "VIDEO_INDEX_AUDIT_TABLE"
#: Days each record is kept: the bucket's default Object Lock retention, the index's TTL.
ENV_AUDIT_RETENTION_DAYS: Final = "VIDEO_INDEX_AUDIT_RETENTION_DAYS"

# --- the segment bucket -------------------------------------------------------------------

#: The only key prefix the product indexes (docs/keys.md); notifications, lifecycle rules
#: and the functions' object permissions are all scoped to it.
INDEXED_PREFIX: Final = KEY_PREFIX
#: Id of the S3 Inventory configuration; part of the report path
#: ``<prefix>/<source-bucket>/<inventory-id>/...`` that reconcile looks under.
INVENTORY_ID: Final = "video-index-daily"
#: Where inventory reports land in the reports bucket (outside ``v1/``: never segments).
INVENTORY_PREFIX: Final = "inventory"
#: Derived media in the segment bucket, outside ``v1/`` (never indexed, no events):
#: fragmented renditions of progressive MP4 files, ``renditions/<source key>/init.mp4``
#: and ``.../data.m4s`` (removed with their source, expiring with its retention) …
RENDITIONS_PREFIX: Final = "renditions/"
#: … and clip exports, ``exports/<export id>/job.json`` and ``.../clip.mp4`` (expiring).
EXPORTS_PREFIX: Final = "exports/"

# --- the audit trail (docs/audit.md) -------------------------------------------------------

#: Where each record lies in the audit bucket: ``records/<yyyy>/<mm>/<dd>/<id>.json``.
AUDIT_RECORDS_PREFIX: Final = "records/"

# --- the deletion requests table ------------------------------------------------------------

#: Partition-key prefix of the window items (``win#<device>``): the only items ingest may
#: read (an IAM ``dynamodb:LeadingKeys`` condition), docs/deletion.md.
DELETION_WINDOW_PREFIX: Final = "win#"

# --- CORS: what a browser page on an allowed origin may do (API Gateway and the bucket) ----

CORS_ALLOWED_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "DELETE")
CORS_ALLOWED_HEADERS: Final = ("authorization", "content-type", "if-match", "range")
CORS_EXPOSED_HEADERS: Final = ("content-length", "content-range", "etag", "location")
CORS_MAX_AGE_SECONDS: Final = 3600

# --- the viewer (docs/viewer.md) ------------------------------------------------------------

#: The viewer's routes: the only ones a browser reaches without a token (the page itself).
VIEWER_PATHS: Final = ("/viewer", "/viewer/{file}")

# --- Step Functions actions of the ops function --------------------------------------------

ACTION_RECONCILE: Final = "reconcile"
ACTION_RECONCILE_PLAN: Final = "reconcile-plan"
ACTION_RECONCILE_PARTITIONS: Final = "reconcile-partitions"
ACTION_RECONCILE_REPORT: Final = "reconcile-report"
ACTION_REBUILD_START: Final = "rebuild-start"
ACTION_REBUILD_PARTITIONS: Final = "rebuild-partitions"
ACTION_REBUILD_FINISH: Final = "rebuild-finish"
ACTION_REBUILD_DROP: Final = "rebuild-drop"
#: How long after the switch the previous generation is dropped (the state machine's
#: wait, the in-process run's sleep): longer than the API's generation cache, so no
#: reader still uses it.
REBUILD_DROP_GRACE_SECONDS: Final = 60
ACTION_REBUILD_ABORT: Final = "rebuild-abort"
#: The distributed fingerprint pass (docs/operations.md, "At fleet scale").
ACTION_FINGERPRINT_UNITS: Final = "fingerprint-units"
ACTION_FINGERPRINT_REDUCE: Final = "fingerprint-reduce"
ACTION_RECONCILE_DECIDE: Final = "reconcile-decide"
ACTION_REBUILD_PLAN: Final = "rebuild-plan"

# --- the reports bucket ---------------------------------------------------------------------

#: Reconcile's plans, partition lists, Distributed Map results and reports.
RECONCILE_REPORTS_PREFIX: Final = "reconcile/"
#: Rebuild's partition lists and Distributed Map results.
REBUILD_REPORTS_PREFIX: Final = "rebuild/"
#: Sub-prefix (under the two above) where Step Functions writes Distributed Map results.
MAP_RESULTS_FOLDER: Final = "results/"


def reconcile_object_key(run_id: str, name: str) -> str:
    """``reconcile/<run id>/<name>`` (``plan.json``, ``partitions.json``, ``report.json``)."""
    return f"{RECONCILE_REPORTS_PREFIX}{run_id}/{name}"


def rebuild_object_key(rebuild_id: str, name: str) -> str:
    """``rebuild/<rebuild id>/<name>`` (``partitions.json``)."""
    return f"{REBUILD_REPORTS_PREFIX}{rebuild_id}/{name}"


# --- stack outputs: what ops tools find with `--stack NAME` (docs/operations.md) -------------
# CloudFormation output keys of the deployed stack. `video-index … --stack NAME` reads them
# with DescribeStacks, so no operator ever types an ARN or a queue URL.

OUTPUT_API_URL: Final = "ApiUrl"
OUTPUT_RECONCILE_STATE_MACHINE: Final = "ReconcileStateMachineArn"
OUTPUT_REBUILD_STATE_MACHINE: Final = "RebuildStateMachineArn"
#: The ops Lambda: the CLI invokes its own ``rebuild-abort`` step after stopping a rebuild.
OUTPUT_OPS_FUNCTION: Final = "OpsFunctionName"
OUTPUT_BUCKET: Final = "SegmentBucketName"
OUTPUT_REPORTS_BUCKET: Final = "ReportsBucketName"
OUTPUT_INVENTORY_DESTINATION: Final = "InventoryDestination"
OUTPUT_TABLE: Final = "ReadModelTableName"
OUTPUT_QUEUE_URL: Final = "NotificationQueueUrl"
OUTPUT_DLQ_URL: Final = "DeadLetterQueueUrl"
#: Outputs for people rather than the ops commands: the viewer's address (with
#: ``viewer=on``), the primary-data tables and the replica (docs/deployment.md).
OUTPUT_VIEWER_URL: Final = "ViewerUrl"
OUTPUT_ANNOTATIONS_TABLE: Final = "AnnotationsTableName"
OUTPUT_DELETIONS_TABLE: Final = "DeletionsTableName"
OUTPUT_HOLDS_TABLE: Final = "HoldsTableName"
#: Share links (docs/shares.md): `video-index share --stack NAME` finds their table here.
OUTPUT_SHARES_TABLE: Final = "SharesTableName"
#: Camera identities (docs/cameras.md): the IoT role alias and policy `camera add` uses.
OUTPUT_CAMERA_ROLE_ALIAS: Final = "CameraRoleAlias"
OUTPUT_CAMERA_IOT_POLICY: Final = "CameraIotPolicy"
OUTPUT_REPLICA_BUCKET: Final = "ReplicaBucketName"
#: The stream consumer (docs/operations.md, "Aggregation"): its function, and the queue
#: where batches that kept failing are described (shard and sequence numbers).
OUTPUT_AGGREGATE_FUNCTION: Final = "AggregateFunctionName"
OUTPUT_AGGREGATION_DLQ_URL: Final = "AggregationDeadLetterQueueUrl"
#: Every output the ops commands need; a stack without one of them predates them.
OPS_OUTPUTS: Final = (
    OUTPUT_RECONCILE_STATE_MACHINE,
    OUTPUT_REBUILD_STATE_MACHINE,
    OUTPUT_OPS_FUNCTION,
    OUTPUT_BUCKET,
    OUTPUT_REPORTS_BUCKET,
    OUTPUT_INVENTORY_DESTINATION,
    OUTPUT_TABLE,
    OUTPUT_QUEUE_URL,
    OUTPUT_DLQ_URL,
)
