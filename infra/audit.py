"""The audit trail (docs/audit.md): an Object Lock bucket, the truth, and its index table.

* **The bucket** is created with Object Lock and a default retention in **COMPLIANCE**
  mode of ``audit_retention_days``: every record version is locked for that long, and
  no one — no role of this stack, no administrator, not the account's root — can delete
  it or shorten its lock (S3 refuses). Its bucket policy also denies, to every principal,
  deleting objects or versions, changing a retention or a legal hold and bypassing a
  governance lock: belt and braces beside the lock. Versioned (Object Lock requires it),
  private, TLS only, SSE-S3, access-logged, retained when the stack goes.
* **The index** (``GET /audit``) is a table whose resource policy denies ``UpdateItem``,
  ``DeleteItem``, ``BatchWriteItem`` and PartiQL writes to every principal; functions get
  only ``PutItem`` (conditional, ``attribute_not_exists``) and the API ``Query``. Items
  expire by TTL after the same days. PITR, deletion protection, retained.

Functions that audit declare both (``core/functions.py``); what each access means is
:data:`BUCKET_ACTIONS` and :data:`TABLE_ACTIONS`. Neither reconcile nor rebuild has any
access to either, so a rebuild of the read model never touches a record.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import logical_id
from infra.read_model import primary_data_table
from infra.settings import StackSettings
from infra.wiring import Statements, Wiring, table_grants
from video_index.core.contract import AUDIT_RECORDS_PREFIX, ENV_AUDIT_BUCKET, ENV_AUDIT_TABLE
from video_index.core.functions import Access
from video_index.core.table_schema import (
    TTL_ATTRIBUTE,
    audit_table_definition,
)

#: What each access to the audit bucket means: adding a record, nothing else.
BUCKET_ACTIONS: Final = {Access.WRITE: ["s3:PutObject"]}
#: What each access to the index means: a conditional put, a Query. No update, no delete.
TABLE_ACTIONS: Final = {Access.WRITE: ["dynamodb:PutItem"], Access.READ: ["dynamodb:Query"]}
#: Denied to every principal on the bucket's objects.
DENIED_OBJECT_ACTIONS: Final = (
    "s3:BypassGovernanceRetention",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:PutObjectLegalHold",
    "s3:PutObjectRetention",
)
#: Denied to every principal on the index.
DENIED_TABLE_ACTIONS: Final = (
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
    "dynamodb:PartiQLDelete",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:UpdateItem",
)


class AuditTrail(Construct):
    """The audit bucket and its index, registered for the functions that audit."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        access_log_bucket: s3.IBucket,
    ) -> None:
        super().__init__(scope, construct_id)
        days = Duration.days(settings.audit_retention_days)
        self.bucket = s3.Bucket(
            self,
            "Records",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            encryption=s3.BucketEncryption.S3_MANAGED,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            object_lock_enabled=True,
            object_lock_default_retention=s3.ObjectLockRetention.compliance(days),
            server_access_logs_bucket=access_log_bucket,
            server_access_logs_prefix="audit/",
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.bucket.add_to_resource_policy(
            iam.PolicyStatement(
                sid="RecordsAreNeverChanged",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=list(DENIED_OBJECT_ACTIONS),
                resources=[self.bucket.arn_for_objects("*")],
            )
        )
        self.table = self._index()
        self._provide()

    def _index(self) -> dynamodb.Table:
        definition = audit_table_definition("unused")
        return primary_data_table(
            self,
            definition,
            "Index",
            time_to_live_attribute=TTL_ATTRIBUTE,
            resource_policy=iam.PolicyDocument(
                statements=[
                    iam.PolicyStatement(
                        sid="IndexItemsAreNeverChanged",
                        effect=iam.Effect.DENY,
                        principals=[iam.AnyPrincipal()],
                        actions=list(DENIED_TABLE_ACTIONS),
                        resources=["*"],
                    )
                ]
            ),
        )

    def _provide(self) -> None:
        wiring = Wiring.of(self)
        bucket = self.bucket

        def put_records() -> list[iam.PolicyStatement]:
            return [
                iam.PolicyStatement(
                    sid="AuditRecordsWrite",
                    actions=BUCKET_ACTIONS[Access.WRITE],
                    resources=[bucket.arn_for_objects(f"{AUDIT_RECORDS_PREFIX}*")],
                )
            ]

        grants: dict[Access, Statements] = {Access.WRITE: put_records}
        wiring.provide(
            ENV_AUDIT_BUCKET,
            self,
            bucket.bucket_name,
            grants,
            acknowledgment=lambda reason: Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{logical_id(bucket)}.Arn>/"
                f"{AUDIT_RECORDS_PREFIX}*]",
                reason="One object per audit record, named at run time; the wildcard is "
                f"confined to {AUDIT_RECORDS_PREFIX} and grants PutObject only (Object "
                f"Lock refuses overwriting a locked version). {reason}",
            ),
        )
        wiring.provide(
            ENV_AUDIT_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "Audit", TABLE_ACTIONS),
        )
