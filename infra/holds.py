"""Evidence holds (docs/holds.md): their table, and the daily retention job that honours them.

* The **holds table** is primary data, like the annotations: point-in-time recovery,
  deletion protection, retained when the stack goes; a rebuild never touches it.
* The **retention job** replaces the per-kind lifecycle expiration of ``v1/`` (a
  lifecycle filter can only include, so it would expire held footage): once a day an
  EventBridge schedule starts it; it lists the expired day folders of each device
  and deletes the keys no hold covers. Noncurrent versions still expire by lifecycle.

Least privilege, written out here: the job may list the bucket only under ``v1/``,
delete current versions (``s3:DeleteObject``: a delete marker, the undelete window
stays) only under ``v1/``, and only Query the holds table; the API function may
read and write holds (:meth:`HoldsTable.allow_api`).
"""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import segment_objects_acknowledgment
from infra.python_function import python_function
from infra.read_model import primary_data_table
from infra.settings import StackSettings
from video_index.core.contract import (
    ENV_BUCKET,
    ENV_HOLDS_TABLE,
    ENV_RETENTION_DAYS,
    INDEXED_PREFIX,
    RETENTION_HANDLER,
    RETENTION_SERVICE_NAME,
)
from video_index.core.table_schema import holds_table_definition

#: The API creates (a transaction of two puts), reads (GetItem, Query) and releases holds.
API_TABLE_ACTIONS: Final = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"]
#: The job only reads a device's holds.
JOB_TABLE_ACTIONS: Final = ["dynamodb:Query"]
#: 03:00 UTC every day: one run a day lets retention catch up within a day of a release.
SCHEDULE: Final = events.Schedule.cron(minute="0", hour="3")
#: Long enough for a fleet's expired day: a run that times out is finished by the next.
JOB_TIMEOUT: Final = Duration.minutes(15)
#: Memory of the retention job (the cost bench bills its measured time at this size).
RETENTION_MEMORY_MB: Final = 512


class Holds(Construct):
    """The holds table, the retention job and its daily schedule."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, bucket: s3.IBucket
    ) -> None:
        super().__init__(scope, construct_id)
        definition = holds_table_definition("unused")
        # Primary data: never deleted with the stack.
        self.table = primary_data_table(self, definition)
        job = python_function(
            self,
            settings=settings,
            handler=RETENTION_HANDLER,
            service_name=RETENTION_SERVICE_NAME,
            description="video-index retention: expired footage no hold covers, deleted daily",
            timeout=JOB_TIMEOUT,
            memory_size=RETENTION_MEMORY_MB,
            environment={
                ENV_BUCKET: bucket.bucket_name,
                ENV_HOLDS_TABLE: self.table.table_name,
                ENV_RETENTION_DAYS: json.dumps(dict(settings.retention_days)),
            },
            statements=[
                iam.PolicyStatement(
                    sid="ReadHolds",
                    actions=list(JOB_TABLE_ACTIONS),
                    resources=[self.table.table_arn],
                ),
                iam.PolicyStatement(
                    sid="ListSegmentKeys",
                    actions=["s3:ListBucket"],
                    resources=[bucket.bucket_arn],
                    conditions={"StringLike": {"s3:prefix": [f"{INDEXED_PREFIX}*"]}},
                ),
                iam.PolicyStatement(
                    sid="ExpireSegmentObjects",
                    actions=["s3:DeleteObject"],
                    resources=[bucket.arn_for_objects(f"{INDEXED_PREFIX}*")],
                ),
            ],
            acknowledgments=[
                segment_objects_acknowledgment(
                    bucket,
                    "Only s3:DeleteObject (a delete marker): the retention job expires "
                    "footage past retention that no hold covers.",
                )
            ],
        )
        self.role = job.role
        self.function = job.function
        self.log_group = job.log_group
        self.schedule = events.Rule(
            self,
            "Daily",
            description="video-index retention job, once a day",
            schedule=SCHEDULE,
            targets=[targets.LambdaFunction(self.function, retry_attempts=2)],
        )

    def allow_census(
        self, function: lambda_.Function, role: iam.IRole, settings: StackSettings
    ) -> None:
        """Reconcile: read a device's holds, to count objects past retention as held or
        overdue (docs/holds.md)."""
        function.add_environment(ENV_HOLDS_TABLE, self.table.table_name)
        function.add_environment(ENV_RETENTION_DAYS, json.dumps(dict(settings.retention_days)))
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="ReadHolds",
                actions=list(JOB_TABLE_ACTIONS),
                resources=[self.table.table_arn],
            )
        )

    def allow_api(self, function: lambda_.Function, role: iam.IRole) -> None:
        """The API: create, read, list and release holds."""
        function.add_environment(ENV_HOLDS_TABLE, self.table.table_name)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="Holds",
                actions=list(API_TABLE_ACTIONS),
                resources=[self.table.table_arn],
            )
        )
