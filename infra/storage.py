"""The segment bucket, the one source of truth for segments (docs/invariants.md).

Everything here protects the bytes: no public access, TLS only, encryption at
rest, versioning with a bounded undelete window, and a retained bucket. The
read model and every report are derived from this bucket and can be rebuilt;
the objects in it cannot.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.settings import StackSettings
from infra.wiring import Statements, Wiring
from video_index.core.contract import (
    CORS_EXPOSED_HEADERS,
    CORS_MAX_AGE_SECONDS,
    ENV_BUCKET,
    ENV_INVENTORY_DESTINATION,
    ENV_REPORTS_BUCKET,
    EXPORTS_PREFIX,
    INDEXED_PREFIX,
    INVENTORY_ID,
    INVENTORY_PREFIX,
    RENDITIONS_PREFIX,
)
from video_index.core.functions import Access

#: Fields reconcile needs from an inventory row besides the key (docs/read-model.md: size, etag,
#: last_modified). Fewer fields make smaller, cheaper reports.
INVENTORY_FIELDS: tuple[str, ...] = ("Size", "LastModifiedDate", "ETag")
_ACCESS_LOGS_USE_BUCKET_POLICY = "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy"


def _private_bucket(scope: Construct, construct_id: str, **props: Any) -> s3.Bucket:
    """A bucket with what every bucket of the product shares: private, TLS 1.2+, SSE-S3, no ACLs.

    SSE-S3 (not KMS) on purpose: S3 server access logging and S3 Inventory deliver
    into SSE-S3 buckets without key-policy plumbing, and segment reads pay no
    per-request KMS cost.
    """
    return s3.Bucket(
        scope,
        construct_id,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        minimum_tls_version=1.2,
        encryption=s3.BucketEncryption.S3_MANAGED,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        **props,
    )


class SegmentStorage(Construct):
    """Segment bucket plus its access-log bucket and the inventory/reports bucket."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StackSettings) -> None:
        super().__init__(scope, construct_id)
        # Grant S3 log delivery through a bucket policy, not the legacy LogDeliveryWrite
        # ACL: ACLs are disabled (BucketOwnerEnforced) on every bucket here. Set on this
        # construct so the behaviour does not depend on the app's cdk.json.
        self.node.set_context(_ACCESS_LOGS_USE_BUCKET_POLICY, True)

        self.access_log_bucket = _private_bucket(
            self,
            "AccessLogs",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-access-logs",
                    expiration=Duration.days(settings.access_log_retention_days),
                )
            ],
            # Logs are the audit trail of access to the source of truth: keep them.
            removal_policy=RemovalPolicy.RETAIN,
        )
        # Inventory reports (and later the reconcile reports) live in their own bucket,
        # outside the indexed v1/ tree, so they are never mistaken for segments and
        # never trigger the ingest notifications of the segment bucket.
        self.reports_bucket = _private_bucket(
            self,
            "Reports",
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="reports/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-inventory",
                    prefix=f"{INVENTORY_PREFIX}/",
                    expiration=Duration.days(settings.inventory_retention_days),
                )
            ],
            # Reports are rebuildable, but deleting a non-empty bucket fails the stack
            # deletion; retaining costs little and keeps the last reconcile evidence.
            removal_policy=RemovalPolicy.RETAIN,
            # Object-created events go to EventBridge, where a rule starts reconcile as soon
            # as a new inventory report is complete (its manifest.checksum is written last).
            event_bridge_enabled=True,
        )

        self.bucket = _private_bucket(
            self,
            "Segments",
            bucket_name=settings.bucket_name,
            versioned=True,
            lifecycle_rules=self._segment_lifecycle_rules(settings),
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="segments/",
            inventories=[
                s3.Inventory(
                    inventory_id=INVENTORY_ID,
                    destination=s3.InventoryDestination(
                        bucket=self.reports_bucket, prefix=INVENTORY_PREFIX
                    ),
                    frequency=s3.InventoryFrequency.DAILY,
                    include_object_versions=s3.InventoryObjectVersion.CURRENT,
                    # CSV: the reconcile Lambda reads it with the standard library alone
                    # (Parquet and ORC need pyarrow, which no layer of this stack ships).
                    format=s3.InventoryFormat.CSV,
                    optional_fields=list(INVENTORY_FIELDS),
                    # Only the indexed tree: foreign keys are never indexed (docs/keys.md).
                    objects_prefix=INDEXED_PREFIX,
                    enabled=True,
                )
            ],
            # The source of truth: never deleted together with the stack.
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.inventory_prefix = INVENTORY_PREFIX
        self.inventory_id = INVENTORY_ID
        self._provide()

    def _provide(self) -> None:
        """The segment bucket, the reports bucket and the inventory destination, as the
        functions that declare them get them (``infra/wiring.py``)."""
        wiring = Wiring.of(self)
        wiring.provide(
            ENV_BUCKET,
            self,
            self.bucket.bucket_name,
            segment_grants(self.bucket),
            objects=self.bucket,
        )
        reports = self.reports_bucket
        list_reports = iam.PolicyStatement(
            sid="ListReports", actions=["s3:ListBucket"], resources=[reports.bucket_arn]
        )
        wiring.provide(
            ENV_REPORTS_BUCKET, self, reports.bucket_name, {Access.READ: lambda: [list_reports]}
        )
        wiring.provide_value(ENV_INVENTORY_DESTINATION, self, self.inventory_destination_uri)

    @property
    def inventory_destination_prefix(self) -> str:
        """Key prefix (in the reports bucket) under which S3 writes this bucket's inventory.

        S3 Inventory delivers to ``<prefix>/<source bucket>/<configuration id>/`` and puts
        one dated folder per report below it (``.../YYYY-MM-DDTHH-MMZ/manifest.json``).
        """
        return f"{self.inventory_prefix}/{self.bucket.bucket_name}/{self.inventory_id}/"

    @property
    def inventory_destination_uri(self) -> str:
        """``s3://`` URI of the inventory destination folder (where reconcile looks)."""
        return f"s3://{self.reports_bucket.bucket_name}/{self.inventory_destination_prefix}"

    def allow_presigned_reads(self) -> None:
        """Pages on any origin may GET/HEAD (with ``Range``) what a presigned URL points at,
        and read the answer (docs/playback.md, "Playback from another origin").

        The signature in the URL is the credential, not the origin: nothing in the bucket is
        readable without one, no cookies are involved (S3 never answers ``*`` with
        ``Access-Control-Allow-Credentials``), and whoever holds a presigned URL can read it
        with any HTTP client anyway. A rule naming origins cannot work for playback: after
        the API's media redirect a page on another origin arrives with ``Origin: null``.
        """
        self.bucket.add_cors_rule(
            allowed_origins=["*"],
            allowed_methods=[s3.HttpMethods.GET, s3.HttpMethods.HEAD],
            allowed_headers=["range"],
            exposed_headers=list(CORS_EXPOSED_HEADERS),
            max_age=CORS_MAX_AGE_SECONDS,
        )

    @staticmethod
    def _segment_lifecycle_rules(settings: StackSettings) -> list[s3.LifecycleRule]:
        """Derived media, the undelete window, and multipart cleanup.

        No rule expires the current versions under ``v1/``: a lifecycle filter can only
        include (prefix, tags, size), so a per-kind expiration would expire held footage
        too. The daily retention job does it instead (``infra/holds.py``,
        docs/holds.md). Its deletes, like lifecycle's, only add a delete marker in a
        versioned bucket; the bytes stay recoverable for the undelete window, then go.
        """
        rules: list[s3.LifecycleRule] = []
        # Derived media (docs/playback.md): a rendition lives as long as video may, an
        # export for its own short while.
        rules.append(
            s3.LifecycleRule(
                id="expire-renditions",
                prefix=RENDITIONS_PREFIX,
                expiration=Duration.days(settings.retention_days_video),
            )
        )
        rules.append(
            s3.LifecycleRule(
                id="expire-exports",
                prefix=EXPORTS_PREFIX,
                expiration=Duration.days(settings.export_retention_days),
            )
        )
        rules.append(
            s3.LifecycleRule(
                id="undelete-window",
                noncurrent_version_expiration=Duration.days(
                    settings.noncurrent_version_expiry_days
                ),
                # Delete markers left alone after their versions expire slow down LIST,
                # which reconcile and the API's freshness merge rely on.
                expired_object_delete_marker=True,
            )
        )
        rules.append(
            s3.LifecycleRule(
                id="abort-incomplete-multipart-uploads",
                abort_incomplete_multipart_upload_after=Duration.days(
                    settings.abort_incomplete_upload_days
                ),
            )
        )
        return rules


def segment_grants(bucket: s3.IBucket) -> dict[Access, Statements]:
    """What each access to the segments means: objects under ``v1/`` only, never a write
    or a delete elsewhere (renditions and exports are granted by their constructs).

    ``READ`` is GetObject (HEAD, and presigned GETs signed with the role) with ListBucket
    on the bucket: with it, HEAD of a missing key answers 404 instead of 403, so "gone"
    and "forbidden" differ; no ``s3:prefix`` condition, since a HEAD carries no prefix.
    ``LIST`` is ListBucket under ``v1/`` alone. ``DELETE`` makes delete markers;
    ``ERASE`` deletes versions (and lists them)."""
    objects = bucket.arn_for_objects(f"{INDEXED_PREFIX}*")

    def statement(sid: str, actions: list[str], resource: str, **conditions: object) -> Statements:
        return lambda: [
            iam.PolicyStatement(
                sid=sid, actions=actions, resources=[resource], conditions=conditions or None
            )
        ]

    under_v1 = {"StringLike": {"s3:prefix": [f"{INDEXED_PREFIX}*"]}}
    read, listing = (
        statement("ReadSegmentObjects", ["s3:GetObject"], objects),
        statement("ListSegmentKeys", ["s3:ListBucket"], bucket.bucket_arn),
    )
    erase, versions = (
        statement("EraseSegmentVersions", ["s3:DeleteObjectVersion"], objects),
        statement("ListSegmentVersions", ["s3:ListBucketVersions"], bucket.bucket_arn),
    )
    return {
        Access.READ: lambda: [*read(), *listing()],
        Access.LIST: statement(
            "ListSegmentFolders", ["s3:ListBucket"], bucket.bucket_arn, **under_v1
        ),
        Access.WRITE: statement(
            "WriteSegmentObjects", ["s3:AbortMultipartUpload", "s3:PutObject"], objects
        ),
        Access.DELETE: statement("DeleteSegmentObjects", ["s3:DeleteObject"], objects),
        Access.ERASE: lambda: [*erase(), *versions()],
    }
