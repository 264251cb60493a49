"""The replica (docs/deletion.md): S3 replication of ``v1/`` to a bucket of its own.

Versioning keeps a deleted object recoverable for the undelete window; it does not
help when the bucket itself is lost or emptied. With ``replication`` on, every new
object and every delete marker under ``v1/`` is replicated to the replica bucket
(versioned, private, retained, with the same retention per kind and the same
undelete window), from which ``video-index restore`` copies back what is missing.
Replication copies new writes only: objects that existed before it was turned on are
not in the replica (S3 Batch Replication copies them, once).

``replication = paused`` keeps the replica and the role but disables the rule: the
restore order recreates the bucket with the rule paused, so the objects copied back
are not replicated into the replica again as new versions, then resumes it.

The replication role may read the source's versions for replication under ``v1/``
and replicate (objects, delete markers, tags) into the replica under ``v1/``; nothing
else.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import segment_objects_acknowledgment
from infra.settings import REPLICATION_ON, StackSettings
from infra.storage import SegmentStorage, _private_bucket
from infra.wiring import Statements, Wiring
from video_index.core.contract import ENV_REPLICA_BUCKET, INDEXED_PREFIX
from video_index.core.functions import Access

#: Id of the replication rule on the segment bucket.
RULE_ID = "replicate-v1"


class SegmentReplica(Construct):
    """The replica bucket, the replication role, and the rule on the segment bucket."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
    ) -> None:
        super().__init__(scope, construct_id)
        source = storage.bucket
        self.bucket = _private_bucket(
            self,
            "Bucket",
            bucket_name=settings.replica_bucket_name,
            versioned=True,
            lifecycle_rules=self._lifecycle_rules(settings),
            server_access_logs_bucket=storage.access_log_bucket,
            server_access_logs_prefix="replica/",
            # The copy of the source of truth: never deleted with the stack.
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.role = self._replication_role(source)
        Wiring.of(self).provide(
            ENV_REPLICA_BUCKET,
            self,
            self.bucket.bucket_name,
            replica_grants(self.bucket),
            objects=self.bucket,
        )
        cfn = source.node.default_child
        assert isinstance(cfn, s3.CfnBucket)
        cfn.replication_configuration = s3.CfnBucket.ReplicationConfigurationProperty(
            role=self.role.role_arn,
            rules=[
                s3.CfnBucket.ReplicationRuleProperty(
                    id=RULE_ID,
                    status="Enabled" if settings.replication == REPLICATION_ON else "Disabled",
                    priority=1,
                    filter=s3.CfnBucket.ReplicationRuleFilterProperty(prefix=INDEXED_PREFIX),
                    # Deletes (delete markers) reach the replica; version deletes never do.
                    delete_marker_replication=s3.CfnBucket.DeleteMarkerReplicationProperty(
                        status="Enabled"
                    ),
                    destination=s3.CfnBucket.ReplicationDestinationProperty(
                        bucket=self.bucket.bucket_arn
                    ),
                )
            ],
        )

    def _replication_role(self, source: s3.IBucket) -> iam.Role:
        """Reads the source's versions for replication under ``v1/`` and replicates
        (objects, delete markers, tags) into the replica under ``v1/``; nothing else."""
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("s3.amazonaws.com"),
            description="video-index replication: segment bucket v1/ -> replica bucket",
        )
        for statement in (
            iam.PolicyStatement(
                sid="ReadReplicationConfiguration",
                actions=["s3:GetReplicationConfiguration", "s3:ListBucket"],
                resources=[source.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="ReadSourceVersions",
                actions=[
                    "s3:GetObjectVersionForReplication",
                    "s3:GetObjectVersionAcl",
                    "s3:GetObjectVersionTagging",
                ],
                resources=[source.arn_for_objects(f"{INDEXED_PREFIX}*")],
            ),
            iam.PolicyStatement(
                sid="ReplicateIntoReplica",
                actions=["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
                resources=[self.bucket.arn_for_objects(f"{INDEXED_PREFIX}*")],
            ),
        ):
            role.add_to_principal_policy(statement)
        Validations.of(role).acknowledge(
            segment_objects_acknowledgment(
                source, "Only the three s3:GetObjectVersion*ForReplication reads S3 needs."
            ),
            segment_objects_acknowledgment(
                self.bucket, "Only s3:Replicate* into the replica's indexed tree."
            ),
        )
        return role

    @staticmethod
    def _lifecycle_rules(settings: StackSettings) -> list[s3.LifecycleRule]:
        """The source's undelete window. No per-kind expiration: the retention job's
        deletes are delete markers, which replicate, so the replica expires what the
        source expires and keeps what a hold keeps there (docs/holds.md)."""
        rules: list[s3.LifecycleRule] = []
        rules.append(
            s3.LifecycleRule(
                id="undelete-window",
                noncurrent_version_expiration=Duration.days(
                    settings.noncurrent_version_expiry_days
                ),
                expired_object_delete_marker=True,
            )
        )
        return rules


def replica_grants(replica: s3.IBucket) -> dict[Access, Statements]:
    """What each access to the replica means: ``READ`` lists it and reads its ``v1/``
    (copying back reads the object or the version); ``ERASE`` deletes versions under
    ``v1/`` and lists them (version deletes are not replicated: an erasure erases in the
    replica too). Nothing writes into it but replication."""
    objects = replica.arn_for_objects(f"{INDEXED_PREFIX}*")
    return {
        Access.READ: lambda: [
            iam.PolicyStatement(
                sid="ListReplica", actions=["s3:ListBucket"], resources=[replica.bucket_arn]
            ),
            iam.PolicyStatement(
                sid="CopyFromReplica",
                actions=["s3:GetObject", "s3:GetObjectVersion"],
                resources=[objects],
            ),
        ],
        Access.ERASE: lambda: [
            iam.PolicyStatement(
                sid="ListReplicaVersions",
                actions=["s3:ListBucketVersions"],
                resources=[replica.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="EraseReplicaVersions",
                actions=["s3:DeleteObjectVersion"],
                resources=[objects],
            ),
        ],
    }
