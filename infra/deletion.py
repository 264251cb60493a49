"""Deletion requests (docs/deletion.md): their table, the job queue, the deletion worker.

* The **deletion requests table** is primary data, like the annotations: point-in-time
  recovery, deletion protection, retained when the stack goes. Its key shape comes
  from :mod:`video_index.core.table_schema`, as for every table.
* The **job queue** (with its DLQ) feeds the **deletion worker**: one job per
  invocation, up to 15 minutes; a longer job queues its own continuation.

Who may do what with them is each function's spec (``core/functions.py``): this
construct registers what each access means (:data:`TABLE_ACTIONS`, the queue's send)
and the stack gives every function what its spec declares (``infra/wiring.py``). The
API records and withdraws requests and queues jobs; ingest and reconcile may only read
the window items (``win#`` partitions) and delete again what a window covers, around
the holds; the worker reads and checkpoints its request, lists and deletes under
``v1/`` (and with ``erase`` in the replica, and every version of the renditions and
export clips made from the erased footage: :func:`erased_media_grants`, the one narrow
grant this construct writes itself), and reads the holds before every batch.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import derived_objects_acknowledgment
from infra.python_function import derived_media_statement, python_function
from infra.queues import work_queue
from infra.settings import StackSettings
from infra.wiring import Wiring, table_grants
from video_index.core.contract import (
    DELETION_WINDOW_PREFIX,
    ENV_DELETION_QUEUE_URL,
    ENV_DELETIONS_TABLE,
    EXPORTS_PREFIX,
    RENDITIONS_PREFIX,
)
from video_index.core.functions import DELETION, Access
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

#: What each access to the deletion requests table means. Reading and writing are the
#: requests' (a request with its window is a transaction of two puts; a job's checkpoint
#: a conditional update; a withdrawal an update and the window's delete); ``WINDOWS`` is
#: the Query of the window items alone (``win#`` partitions, an IAM ``LeadingKeys``
#: condition): what ingest and reconcile read to enforce; ``SCAN`` lists every window.
TABLE_ACTIONS: Final = {
    Access.READ: ["dynamodb:GetItem"],
    Access.WRITE: ["dynamodb:PutItem", "dynamodb:UpdateItem"],
    Access.DELETE: ["dynamodb:DeleteItem"],
    Access.WINDOWS: ["dynamodb:Query"],
    Access.SCAN: ["dynamodb:Scan"],
}
WINDOWS_ONLY: Final = {
    Access.WINDOWS: {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{DELETION_WINDOW_PREFIX}*"]}
    }
}
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
    ) -> None:
        super().__init__(scope, construct_id)
        self.table = self._table()
        queues = work_queue(
            self,
            settings,
            visibility_timeout_seconds=visibility_timeout_seconds(DELETION_TIMEOUT_SECONDS),
            # The worker ends a job failed on this receive, before SQS parks its message.
            max_receive_count=DELETION_MAX_RECEIVES,
        )
        self.queue, self.dead_letter_queue = queues.queue, queues.dead_letter_queue
        wiring = Wiring.of(self)
        wiring.provide(
            ENV_DELETIONS_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "DeletionRequests", TABLE_ACTIONS, WINDOWS_ONLY),
        )
        send = iam.PolicyStatement(
            sid="QueueDeletionJobs", actions=["sqs:SendMessage"], resources=[self.queue.queue_arn]
        )
        wiring.provide(
            ENV_DELETION_QUEUE_URL, self, self.queue.queue_url, {Access.SEND: lambda: [send]}
        )
        erased, acknowledgments = erased_media_grants(bucket)
        lambda_function = python_function(
            self,
            settings=settings,
            spec=DELETION,
            description="video-index deletion: a window's objects deleted, resumably",
            timeout=Duration.seconds(DELETION_TIMEOUT_SECONDS),
            memory_size=512,
            statements=erased,
            acknowledgments=acknowledgments,
        )
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
