"""Camera identities (docs/cameras.md): one X.509 certificate per camera, exchanged for
temporary credentials of one role by AWS IoT's credentials provider.

The fleet pattern Kinesis Video Streams cameras use: the camera is an IoT thing whose
name is its ``<device>``; the credentials provider assumes :attr:`CameraIdentities.role`
through the role alias when the certificate presented (mutual TLS) is active, allowed
``iot:AssumeRoleWithCertificate`` by :attr:`CameraIdentities.iot_policy` and attached to
the thing named in ``x-amzn-iot-thingname``. The role's object ARNs carry
``${credentials-iot:ThingName}``, so one role serves the fleet and each camera reaches
its own keys only (:mod:`video_index.core.camera_policy`).

The bucket policy adds one statement naming the camera role alone: an object creation
without ``If-None-Match: *`` is denied, so a camera cannot overwrite (not even its own
footage). It names no other principal on purpose: enforcing conditional writes also
fails every ``CopyObject`` it covers, and restore and undelete copy into ``v1/``.
Provisioning (things, certificates) is ``video-index camera`` (not CloudFormation: a
certificate's private key must never pass through a template).
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_iot as iot
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.nag import logical_id
from video_index.core.camera_policy import (
    ASSUME_ROLE_WITH_CERTIFICATE,
    CAMERA_ACTIONS,
    CREDENTIAL_SECONDS,
    THING_NAME_VARIABLE,
    camera_key_patterns,
    no_overwrite_condition,
)
from video_index.core.contract import OUTPUT_CAMERA_IOT_POLICY, OUTPUT_CAMERA_ROLE_ALIAS

#: The service principal of AWS IoT's credentials provider.
CREDENTIALS_PROVIDER: Final = "credentials.iot.amazonaws.com"
#: Stack outputs `video-index camera add --stack` reads.
#: How cdk-nag prints the policy variable in a finding's id.
NAG_THING_NAME: Final = "<credentials-iot:ThingName>"


class CameraIdentities(Construct):
    """The camera role, its IoT role alias and IoT policy, and the no-overwrite rule."""

    def __init__(self, scope: Construct, construct_id: str, *, bucket: s3.Bucket) -> None:
        super().__init__(scope, construct_id)
        stack_name = Stack.of(self).stack_name
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(CREDENTIALS_PROVIDER),
            description="video-index camera: PutObject under v1/<kind>/<its thing name>/",
        )
        self.policy = iam.Policy(
            self,
            "Policy",
            roles=[self.role],
            statements=[
                iam.PolicyStatement(
                    sid="WriteOwnSegments",
                    actions=list(CAMERA_ACTIONS),
                    resources=[bucket.arn_for_objects(p) for p in camera_key_patterns()],
                )
            ],
        )
        self.role_alias = iot.CfnRoleAlias(
            self,
            "RoleAlias",
            role_alias=f"{stack_name}-camera",
            role_arn=self.role.role_arn,
            credential_duration_seconds=CREDENTIAL_SECONDS,
        )
        self.iot_policy = iot.CfnPolicy(
            self,
            "IotPolicy",
            policy_name=f"{stack_name}-camera",
            policy_document={
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": ASSUME_ROLE_WITH_CERTIFICATE,
                        "Resource": self.role_alias.attr_role_alias_arn,
                    }
                ],
            },
        )
        self.no_overwrite = iam.PolicyStatement(
            sid="CamerasNeverOverwrite",
            effect=iam.Effect.DENY,
            principals=[iam.ArnPrincipal(self.role.role_arn)],
            actions=["s3:PutObject"],
            resources=[bucket.arn_for_objects("*")],
            conditions=no_overwrite_condition(),
        )
        bucket.add_to_resource_policy(self.no_overwrite)
        Validations.of(self.policy).acknowledge(
            *(
                Acknowledgment(
                    id=(
                        f"AwsSolutions-IAM5[Resource::<{logical_id(bucket)}.Arn>/"
                        f"{pattern.replace(THING_NAME_VARIABLE, NAG_THING_NAME)}]"
                    ),
                    reason=(
                        "One role for the fleet: the credentials provider resolves the thing "
                        "name, so each camera reaches only its own device's keys of one kind; "
                        "the trailing wildcard is one key per segment."
                    ),
                )
                for pattern in camera_key_patterns()
            )
        )
        self.role_alias_output = CfnOutput(
            scope,
            OUTPUT_CAMERA_ROLE_ALIAS,
            description="IoT role alias cameras exchange their certificate at (docs/cameras.md)",
            value=self.role_alias.ref,
        )
        self.iot_policy_output = CfnOutput(
            scope,
            OUTPUT_CAMERA_IOT_POLICY,
            description="IoT policy `video-index camera add` attaches to a camera's certificate",
            value=self.iot_policy.ref,
        )
