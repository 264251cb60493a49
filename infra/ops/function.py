"""The ops Lambda (reconcile and rebuild steps) and its least-privilege role.

Privileges are written out here instead of the ``grant_*`` helpers, so a review of
this file is a review of them.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Duration, Size
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra.nag import logical_id, segment_objects_acknowledgment
from infra.python_function import (
    PythonFunction,
    python_function,
    run_reports_statements,
    segment_read_statements,
)
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import (
    ENV_BUCKET,
    ENV_GAP_TOLERANCE_MS,
    ENV_INVENTORY_DESTINATION,
    ENV_MAX_REMOVE_SHARE,
    ENV_REPORTS_BUCKET,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
    REBUILD_REPORTS_PREFIX,
    RECONCILE_HANDLER,
    RECONCILE_REPORTS_PREFIX,
    RECONCILE_SERVICE_NAME,
)

#: Item actions reconcile and rebuild perform on the read model (repairs are conditional
#: writes and transactions; a rebuild writes a generation in batches and drops the old one;
#: the plan sizes its parallel Scan by the table's size, DescribeTable).
READ_MODEL_ACTIONS: Final = [
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
]


def ops_function(
    scope: Construct, *, settings: StackSettings, storage: SegmentStorage, table: dynamodb.ITable
) -> PythonFunction:
    """The reconcile Lambda; its role has only what the handler does.

    Segment objects are read, never written: reconcile and rebuild derive the read
    model from ``v1/`` and leave the source of truth alone. The annotations table is
    primary data and deliberately absent (docs/invariants.md: never touched by rebuild).
    """
    bucket = storage.bucket
    reports = storage.reports_bucket
    statements = _statements(storage, table)
    acknowledgments = _acknowledgments(storage)
    return python_function(
        scope,
        settings=settings,
        handler=RECONCILE_HANDLER,
        service_name=RECONCILE_SERVICE_NAME,
        description="video-index reconcile/rebuild: plan, repair partitions, report, switch",
        role_description=("video-index reconcile/rebuild: S3 listing and inventory -> read model"),
        timeout=Duration.seconds(settings.reconcile_timeout_seconds),
        memory_size=settings.reconcile_memory_mb,
        ephemeral_storage=Size.mebibytes(settings.reconcile_ephemeral_storage_mb),
        environment={
            ENV_BUCKET: bucket.bucket_name,
            ENV_TABLE: table.table_name,
            ENV_REPORTS_BUCKET: reports.bucket_name,
            ENV_INVENTORY_DESTINATION: storage.inventory_destination_uri,
            ENV_MAX_REMOVE_SHARE: str(settings.reconcile_max_remove_share),
            ENV_GAP_TOLERANCE_MS: str(settings.gap_tolerance_ms),
            ENV_TOMBSTONE_DAYS: str(settings.tombstone_days),
        },
        statements=statements,
        acknowledgments=acknowledgments,
    )


def _statements(storage: SegmentStorage, table: dynamodb.ITable) -> list[iam.PolicyStatement]:
    """The read model, segment reads, the inventory and the runs' own report objects."""
    bucket = storage.bucket
    reports = storage.reports_bucket
    return [
        iam.PolicyStatement(
            sid="ReadModelItems",
            actions=list(READ_MODEL_ACTIONS),
            resources=[table.table_arn],
        ),
        # Every repair is verified against a LIST of the partition and a HEAD (docs/operations.md).
        *segment_read_statements(bucket),
        # The newest inventory report; the partition lists and reports of a run.
        *run_reports_statements(
            reports,
            f"{storage.inventory_destination_prefix}*",
            (RECONCILE_REPORTS_PREFIX, REBUILD_REPORTS_PREFIX),
        ),
    ]


def _acknowledgments(storage: SegmentStorage) -> list[Acknowledgment]:
    """Why the wildcards of :func:`_statements` are as narrow as the names allow."""
    bucket = storage.bucket
    reports = storage.reports_bucket
    segments = logical_id(bucket)
    reports_id = logical_id(reports)
    return [
        segment_objects_acknowledgment(
            bucket,
            "Only s3:GetObject (HEAD before a repair); nothing here writes to the segment bucket.",
        ),
        Acknowledgment(
            id=(
                f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/"
                f"{storage.inventory_prefix}/<{segments}>/{storage.inventory_id}/*]"
            ),
            reason=(
                "S3 Inventory names each report by its date under the configured "
                "destination; read-only and confined to this bucket's inventory reports."
            ),
        ),
        Acknowledgment(
            id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{RECONCILE_REPORTS_PREFIX}*]",
            reason=(
                "Each reconcile run writes and reads its own objects under reconcile/<run "
                "id>/, and reads the Distributed Map results under reconcile/results/."
            ),
        ),
        Acknowledgment(
            id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{REBUILD_REPORTS_PREFIX}*]",
            reason=(
                "Each rebuild writes and reads its partition list under rebuild/<rebuild "
                "id>/; the run id is generated at run time, so the prefix is the bound."
            ),
        ),
    ]
