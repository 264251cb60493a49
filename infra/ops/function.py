"""The ops Lambda (reconcile and rebuild steps) and its least-privilege role.

What it may do with the read model, the segments, the deletion windows and the holds is
its spec (``core/functions.py``); the report objects of its runs are written out here,
never with the ``grant_*`` helpers.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Duration, Size
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra.nag import logical_id
from infra.python_function import PythonFunction, python_function, run_reports_statements
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import REBUILD_REPORTS_PREFIX, RECONCILE_REPORTS_PREFIX
from video_index.core.functions import RECONCILE


def ops_function(
    scope: Construct, *, settings: StackSettings, storage: SegmentStorage
) -> PythonFunction:
    """The reconcile Lambda; its role has only what the handler does.

    Segment objects are read and never written: reconcile and rebuild derive the read
    model from ``v1/``; the one delete is enforcement's, of what a deletion window in
    force covers and no hold keeps. The annotations table is primary data and
    deliberately absent (docs/invariants.md: never touched by rebuild).
    """
    return python_function(
        scope,
        settings=settings,
        spec=RECONCILE,
        description="video-index reconcile/rebuild: plan, repair partitions, report, switch",
        role_description=("video-index reconcile/rebuild: S3 listing and inventory -> read model"),
        timeout=Duration.seconds(settings.reconcile_timeout_seconds),
        memory_size=settings.reconcile_memory_mb,
        ephemeral_storage=Size.mebibytes(settings.reconcile_ephemeral_storage_mb),
        statements=_statements(storage),
        acknowledgments=_acknowledgments(storage),
    )


def _statements(storage: SegmentStorage) -> list[iam.PolicyStatement]:
    """The inventory and the runs' own report objects (the read model, the segments, the
    deletion windows and the holds are the spec's)."""
    # The newest inventory report; the partition lists and reports of a run.
    return run_reports_statements(
        storage.reports_bucket,
        f"{storage.inventory_destination_prefix}*",
        (RECONCILE_REPORTS_PREFIX, REBUILD_REPORTS_PREFIX),
    )


def _acknowledgments(storage: SegmentStorage) -> list[Acknowledgment]:
    """Why the wildcards of :func:`_statements` are as narrow as the names allow."""
    segments = logical_id(storage.bucket)
    reports_id = logical_id(storage.reports_bucket)
    return [
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
