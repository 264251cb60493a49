"""Deletion requests (docs/deletion.md): their table, the job queue, the deletion worker.

* The **deletion requests table** is primary data, like the annotations: point-in-time
  recovery, deletion protection, retained when the stack goes. Its key shape comes
  from :mod:`video_index.core.table_schema`, as for every table.
* The **job queue** (with its DLQ) feeds the **deletion worker**: one job per
  invocation, up to 15 minutes; a longer job queues its own continuation.
* The API records and withdraws requests and queues jobs (:meth:`allow_requests`);
  ingest and reconcile enforce the windows in force (:meth:`allow_enforcement`).

Least privilege, written out here: the worker lists and deletes under ``v1/`` (delete
markers, and with ``erase`` versions, in the replica too; erasing, also the versions of
the renditions and export clips made from the footage, and the export jobs it ends) and
reads and checkpoints its request; ingest may only Query the window items (``win#``
partitions) and delete again what a window covers; nobody but the API writes requests.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import derived_objects_acknowledgment, segment_objects_acknowledgment
from infra.python_function import PythonFunction, derived_media_statement, python_function
from infra.queues import work_queue
from infra.settings import StackSettings
from video_index.core.contract import (
    DELETION_HANDLER,
    DELETION_SERVICE_NAME,
    DELETION_WINDOW_PREFIX,
    ENV_BUCKET,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    ENV_REPLICA_BUCKET,
    EXPORTS_PREFIX,
    INDEXED_PREFIX,
    RENDITIONS_PREFIX,
)
from video_index.core.queue_settings import (
    DELETION_BATCH_SIZE,
    DELETION_MAX_RECEIVES,
    DELETION_TIMEOUT_SECONDS,
    visibility_timeout_seconds,
)
from video_index.core.table_schema import (
    PARTITION_KEY,
    SORT_KEY,
    deletions_table_definition,
)

#: The worker reads its request and writes its checkpoint (a conditional update).
WORKER_TABLE_ACTIONS: Final = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
#: The API records a request with its window (a transaction of two puts), reads it, and
#: withdraws it (an update and the window's delete, in a transaction).
API_TABLE_ACTIONS: Final = [
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
]
#: Deleting again what a window covers: a delete marker, or with ``erase`` every version.
ENFORCE_ACTIONS: Final = ["s3:DeleteObject", "s3:DeleteObjectVersion"]
_STRING: Final = dynamodb.AttributeType.STRING


def erased_media_grants(
    bucket: s3.IBucket,
) -> tuple[list[iam.PolicyStatement], list[Acknowledgment]]:
    """What an erasure needs beside ``v1/`` (the deletion worker, and bulk deletion, which
    runs the same jobs): every version of the renditions and frame pictures of erased
    footage, and of the clips of exports made of it, whose jobs it reads and ends failed
    (video_index.media.erasure). Nothing else outside ``v1/``."""
    statements = [
        derived_media_statement(
            bucket, "EraseDerivedMedia", ["s3:DeleteObjectVersion"], [RENDITIONS_PREFIX]
        ),
        derived_media_statement(
            bucket,
            "EndErasedExports",
            ["s3:DeleteObjectVersion", "s3:GetObject", "s3:PutObject"],
            [EXPORTS_PREFIX],
        ),
    ]
    acknowledgments = [
        derived_objects_acknowledgment(
            bucket, RENDITIONS_PREFIX, "Only s3:DeleteObjectVersion, of erased footage's media."
        ),
        derived_objects_acknowledgment(
            bucket, EXPORTS_PREFIX, "Export jobs of erased footage are read and ended by id."
        ),
    ]
    return statements, acknowledgments


class DeletionRequests(Construct):
    """The deletion requests table, the job queue + DLQ and the deletion worker."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
        replica: s3.IBucket | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.bucket = bucket
        self.table = self._table()
        queues = work_queue(
            self,
            settings,
            visibility_timeout_seconds=visibility_timeout_seconds(DELETION_TIMEOUT_SECONDS),
            # The worker ends a job failed on this receive, before SQS parks its message.
            max_receive_count=DELETION_MAX_RECEIVES,
        )
        self.queue, self.dead_letter_queue = queues.queue, queues.dead_letter_queue
        lambda_function = self._function(settings, bucket, replica)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        self.function.add_event_source(
            event_sources.SqsEventSource(
                self.queue, batch_size=DELETION_BATCH_SIZE, report_batch_item_failures=True
            )
        )

    def _table(self) -> dynamodb.Table:
        definition = deletions_table_definition("unused")
        types = {a["AttributeName"]: a["AttributeType"] for a in definition["AttributeDefinitions"]}
        if types != {PARTITION_KEY: "S", SORT_KEY: "S"}:
            raise ValueError("video_index.core.table_schema deletions definition changed")
        return dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(
                name=PARTITION_KEY, type=dynamodb.AttributeType.STRING
            ),
            sort_key=dynamodb.Attribute(name=SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            # Only the per-caller daily quota counters expire (docs/access.md); requests
            # and windows carry no such attribute and stay.
            time_to_live_attribute="expires_at",
            # Primary data: what people decided must outlive the stack and a slip of the hand.
            deletion_protection=True,
            removal_policy=RemovalPolicy.RETAIN,
        )

    def _function(
        self, settings: StackSettings, bucket: s3.IBucket, replica: s3.IBucket | None
    ) -> PythonFunction:
        statements = [
            iam.PolicyStatement(
                sid="RunDeletionJobs",
                actions=list(WORKER_TABLE_ACTIONS),
                resources=[self.table.table_arn],
            ),
            # The window's keys (ListObjectsV2) and, to erase, their versions.
            iam.PolicyStatement(
                sid="ListSegmentKeysAndVersions",
                actions=["s3:ListBucket", "s3:ListBucketVersions"],
                resources=[bucket.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="DeleteSegmentObjects",
                actions=list(ENFORCE_ACTIONS),
                resources=[bucket.arn_for_objects(f"{INDEXED_PREFIX}*")],
            ),
            # A job longer than one invocation queues its own continuation.
            iam.PolicyStatement(
                sid="ContinueDeletionJobs",
                actions=["sqs:SendMessage"],
                resources=[self.queue.queue_arn],
            ),
        ]
        erased_statements, erased_acknowledgments = erased_media_grants(bucket)
        statements += erased_statements
        acknowledgments = [
            segment_objects_acknowledgment(
                bucket,
                "Only s3:DeleteObject and s3:DeleteObjectVersion: a deletion job removes the "
                "keys of the window a person asked to delete.",
            ),
            *erased_acknowledgments,
        ]
        environment = {
            ENV_BUCKET: bucket.bucket_name,
            ENV_DELETIONS_TABLE: self.table.table_name,
            ENV_DELETION_QUEUE_URL: self.queue.queue_url,
        }
        if replica is not None:
            # Version deletes are not replicated: an erasure erases in the replica too.
            statements += [
                iam.PolicyStatement(
                    sid="ListReplicaVersions",
                    actions=["s3:ListBucketVersions"],
                    resources=[replica.bucket_arn],
                ),
                iam.PolicyStatement(
                    sid="EraseReplicaVersions",
                    actions=["s3:DeleteObjectVersion"],
                    resources=[replica.arn_for_objects(f"{INDEXED_PREFIX}*")],
                ),
            ]
            acknowledgments.append(
                segment_objects_acknowledgment(
                    replica, "Only s3:DeleteObjectVersion: an erasure erases the replica's copies."
                )
            )
            environment[ENV_REPLICA_BUCKET] = replica.bucket_name
        return python_function(
            self,
            settings=settings,
            handler=DELETION_HANDLER,
            service_name=DELETION_SERVICE_NAME,
            description="video-index deletion: a window's objects deleted, resumably",
            timeout=Duration.seconds(DELETION_TIMEOUT_SECONDS),
            memory_size=512,
            environment=environment,
            statements=statements,
            acknowledgments=acknowledgments,
        )

    # -- what other functions may do -------------------------------------------------

    def allow_requests(self, function: lambda_.Function, role: iam.IRole) -> None:
        """The API: record, read and withdraw requests; queue their jobs."""
        function.add_environment(ENV_DELETIONS_TABLE, self.table.table_name)
        function.add_environment(ENV_DELETION_QUEUE_URL, self.queue.queue_url)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="DeletionRequests",
                actions=list(API_TABLE_ACTIONS),
                resources=[self.table.table_arn],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="QueueDeletionJobs",
                actions=["sqs:SendMessage"],
                resources=[self.queue.queue_arn],
            )
        )

    def allow_enforcement(
        self, function: lambda_.Function, role: iam.IRole, *, scan: bool = False
    ) -> None:
        """Ingest and reconcile: read the windows in force (only the ``win#`` partitions;
        reconcile also scans for every device's) and delete again what they cover."""
        function.add_environment(ENV_DELETIONS_TABLE, self.table.table_name)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="ReadDeletionWindows",
                actions=["dynamodb:Query"],
                resources=[self.table.table_arn],
                conditions={
                    "ForAllValues:StringLike": {
                        "dynamodb:LeadingKeys": [f"{DELETION_WINDOW_PREFIX}*"]
                    }
                },
            )
        )
        if scan:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    sid="ListDeletionWindows",
                    actions=["dynamodb:Scan"],
                    resources=[self.table.table_arn],
                )
            )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="EnforceDeletions",
                actions=list(ENFORCE_ACTIONS),
                resources=[self.bucket.arn_for_objects(f"{INDEXED_PREFIX}*")],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="ListSegmentVersions",
                actions=["s3:ListBucketVersions"],
                resources=[self.bucket.bucket_arn],
            )
        )
