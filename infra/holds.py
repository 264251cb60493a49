"""Evidence holds (docs/holds.md): their table, and the daily retention job that honours them.

* The **holds table** is primary data, like the annotations: point-in-time recovery,
  deletion protection, retained when the stack goes; a rebuild never touches it.
* The **retention job** replaces the per-kind lifecycle expiration of ``v1/`` (a
  lifecycle filter can only include, so it would expire held footage): once a day an
  EventBridge schedule starts it; it lists the expired day folders of each device
  and deletes the keys no hold covers. Noncurrent versions still expire by lifecycle.

Least privilege, from the job's spec (``core/functions.py``): it may list the bucket
only under ``v1/``, delete current versions (``s3:DeleteObject``: a delete marker, the
undelete window stays) only under ``v1/``, and read the holds table. Every function that
deletes footage declares a read of the holds (a spec without it cannot be made); the API
writes them. What reading and writing holds means is :data:`HOLDS_ACTIONS`.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from infra.python_function import python_function
from infra.read_model import primary_data_table
from infra.settings import StackSettings
from infra.wiring import Wiring, table_grants
from video_index.core.contract import ENV_HOLDS_TABLE
from video_index.core.functions import RETENTION, Access
from video_index.core.table_schema import holds_table_definition

#: What each access to the holds means: reading one hold (GetItem) or a device's in a
#: window (Query); writing a version (a transaction of two conditional puts: create,
#: release). No delete: a hold is never deleted, a release is a new version.
HOLDS_ACTIONS: Final = {
    Access.READ: ["dynamodb:GetItem", "dynamodb:Query"],
    Access.WRITE: ["dynamodb:PutItem"],
}
#: 03:00 UTC every day: one run a day lets retention catch up within a day of a release.
SCHEDULE: Final = events.Schedule.cron(minute="0", hour="3")
#: Long enough for a fleet's expired day: a run that times out is finished by the next.
JOB_TIMEOUT: Final = Duration.minutes(15)
#: Memory of the retention job (the cost bench bills its measured time at this size).
RETENTION_MEMORY_MB: Final = 512


class Holds(Construct):
    """The holds table, the retention job and its daily schedule."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: StackSettings) -> None:
        super().__init__(scope, construct_id)
        # Primary data: never deleted with the stack.
        self.table = primary_data_table(self, holds_table_definition("unused"))
        Wiring.of(self).provide(
            ENV_HOLDS_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "Holds", HOLDS_ACTIONS),
        )
        # Lists expired day folders under v1/ and deletes what no hold covers, reading
        # the holds before each batch: its spec (core/functions.py).
        job = python_function(
            self,
            settings=settings,
            spec=RETENTION,
            description="video-index retention: expired footage no hold covers, deleted daily",
            timeout=JOB_TIMEOUT,
            memory_size=RETENTION_MEMORY_MB,
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
