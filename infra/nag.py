"""cdk-nag helpers shared by the constructs: logical ids as cdk-nag prints them, and the
one acknowledgment every function that reads segments needs."""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnElement, Stack
from constructs import IConstruct

from video_index.core.contract import INDEXED_PREFIX


def logical_id(construct: IConstruct) -> str:
    """Logical id of a construct's CloudFormation resource, as cdk-nag prints it."""
    default_child = construct.node.default_child
    if not isinstance(default_child, CfnElement):
        raise TypeError(f"{construct.node.path} has no CloudFormation resource")
    return Stack.of(construct).get_logical_id(default_child)


def segment_objects_acknowledgment(bucket: IConstruct, reason: str) -> Acknowledgment:
    """AwsSolutions-IAM5 for object permissions under ``v1/*`` of the segment bucket."""
    return Acknowledgment(
        id=f"AwsSolutions-IAM5[Resource::<{logical_id(bucket)}.Arn>/{INDEXED_PREFIX}*]",
        reason=(
            "Object keys are unbounded by design (one per segment); the wildcard is confined "
            f"to the indexed {INDEXED_PREFIX} prefix. {reason}"
        ),
    )


def derived_objects_acknowledgment(bucket: IConstruct, prefix: str, reason: str) -> Acknowledgment:
    """AwsSolutions-IAM5 for permissions on derived media under ``prefix*`` (outside ``v1/``)."""
    return Acknowledgment(
        id=f"AwsSolutions-IAM5[Resource::<{logical_id(bucket)}.Arn>/{prefix}*]",
        reason=(
            f"Derived media objects under {prefix} are named per source key or per job at run "
            f"time; the wildcard is confined to that prefix, outside the indexed tree. {reason}"
        ),
    )
