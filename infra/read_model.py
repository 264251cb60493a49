"""The read-model table: the DynamoDB projection P(S3) the API serves (docs/read-model.md).

Its physical shape (key names and types, TTL attribute, billing mode) is read
from :mod:`video_index.core.table_schema`, the same module `video-index local` and
the tests create their tables from, so the deployed table cannot drift from
what the code was tested against.
"""

from __future__ import annotations

from typing import Any, Final

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.wiring import Wiring, table_grants
from video_index.core.contract import ENV_TABLE
from video_index.core.functions import Access
from video_index.core.table_schema import (
    PARTITION_KEY,
    SORT_KEY,
    TTL_ATTRIBUTE,
    read_model_table_definition,
)

#: What each access to the read model means. Its items are derived (rebuilt from S3), so
#: read covers every way to read them (GetItem, its batch, Query), write every way to
#: write one (a put, an update, the condition check of a transaction), delete their
#: removal in batches (a rebuild drops a generation), scan the whole table (a rebuild's
#: parallel Scan, sized by DescribeTable).
READ_MODEL_ACTIONS: Final = {
    Access.READ: ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"],
    Access.WRITE: ["dynamodb:ConditionCheckItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
    Access.DELETE: ["dynamodb:BatchWriteItem", "dynamodb:DeleteItem"],
    Access.SCAN: ["dynamodb:DescribeTable", "dynamodb:Scan"],
}
_ATTRIBUTE_TYPES: Final[dict[str, dynamodb.AttributeType]] = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}
BILLING_MODES: Final[dict[str, dynamodb.BillingMode]] = {
    "PAY_PER_REQUEST": dynamodb.BillingMode.PAY_PER_REQUEST,
    "PROVISIONED": dynamodb.BillingMode.PROVISIONED,
}
_STREAM_VIEW_TYPES: Final[dict[str, dynamodb.StreamViewType]] = {
    "NEW_AND_OLD_IMAGES": dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    "NEW_IMAGE": dynamodb.StreamViewType.NEW_IMAGE,
    "OLD_IMAGE": dynamodb.StreamViewType.OLD_IMAGE,
    "KEYS_ONLY": dynamodb.StreamViewType.KEYS_ONLY,
}


def key_attribute(definition: dict[str, Any], name: str) -> dynamodb.Attribute:
    """The CDK key attribute for ``name`` with the type the shared definition gives it."""
    types = {a["AttributeName"]: a["AttributeType"] for a in definition["AttributeDefinitions"]}
    return dynamodb.Attribute(name=name, type=_ATTRIBUTE_TYPES[types[name]])


def keyed_table(
    scope: Construct, construct_id: str, definition: dict[str, Any], **props: Any
) -> dynamodb.Table:
    """A table keyed and billed as the shared ``definition`` describes it, with point-in-time
    recovery and AWS-managed encryption; ``props`` say the rest (TTL, removal, stream)."""
    return dynamodb.Table(
        scope,
        construct_id,
        partition_key=key_attribute(definition, PARTITION_KEY),
        sort_key=key_attribute(definition, SORT_KEY),
        billing_mode=BILLING_MODES[definition["BillingMode"]],
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        encryption=dynamodb.TableEncryption.AWS_MANAGED,
        **props,
    )


def primary_data_table(
    scope: Construct, definition: dict[str, Any], construct_id: str = "Table", **props: Any
) -> dynamodb.Table:
    """A table of primary data (annotations, holds, the audit index) as ``definition``
    describes it: deletion protection, retained when the stack goes
    (docs/invariants.md#what-survives-what)."""
    return keyed_table(
        scope,
        construct_id,
        definition,
        deletion_protection=True,
        removal_policy=RemovalPolicy.RETAIN,
        **props,
    )


class ReadModelTable(Construct):
    """On-demand table keyed ``pk``/``sk`` with TTL for tombstones, PITR and AWS-managed SSE.

    No secondary index: every read addresses items by key (a single segment by its
    device, kind and file name), and an index would cost a write unit per segment write.
    Its stream (new and old images) is what the aggregation consumer reads
    (:mod:`infra.aggregation`): :attr:`stream_arn`.
    """

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        # Only the shape is taken from the definition; the physical name stays generated
        # so CloudFormation can replace the table when a key change requires it.
        definition = read_model_table_definition("unused")
        stream = definition.get("StreamSpecification") or {}
        if not stream.get("StreamEnabled"):
            raise ValueError("video_index.core.table_schema defines no stream for the read model")
        key_types = {k["KeyType"]: k["AttributeName"] for k in definition["KeySchema"]}
        if (key_types.get("HASH"), key_types.get("RANGE")) != (PARTITION_KEY, SORT_KEY):
            raise ValueError("video_index.core.table_schema key constants and definition disagree")

        self.table = keyed_table(
            self,
            "Table",
            definition,
            stream=_STREAM_VIEW_TYPES[stream["StreamViewType"]],
            time_to_live_attribute=TTL_ATTRIBUTE,
            # DESTROY is deliberate: every item is derived from the segment bucket and the
            # table is rebuildable from S3 alone (docs/invariants.md). Retaining it would only
            # leave an orphan that a redeploy cannot adopt. The annotations table, which
            # is primary data, is the one that must be retained.
            removal_policy=RemovalPolicy.DESTROY,
        )
        stream_arn = self.table.table_stream_arn
        if stream_arn is None:  # pragma: no cover - a table with a stream has its ARN
            raise ValueError("the read-model table has no stream ARN")
        #: The stream's ARN (a token): the consumer's event source and its read grant.
        self.stream_arn: str = stream_arn
        if definition.get("GlobalSecondaryIndexes"):
            raise ValueError("video_index.core.table_schema defines an index this table lacks")
        Wiring.of(self).provide(
            ENV_TABLE,
            self,
            self.table.table_name,
            table_grants(self.table.table_arn, "ReadModel", READ_MODEL_ACTIONS),
        )
