"""The key export manifests are signed with (docs/playback.md#signed-exports).

An asymmetric KMS key (ECC_NIST_P256, ``SIGN_VERIFY``): the export function signs each
manifest with it (``kms:Sign`` on this key and nothing else), the API function publishes
its public half (``kms:GetPublicKey`` only, ``GET /exports/public-key``). The private half
never leaves KMS; the setting ``VIDEO_INDEX_EXPORT_SIGNING_KEY`` holds the key's ARN.
Retained when the stack is deleted: manifests already handed out stay verifiable against
the key id they name.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.wiring import Wiring
from video_index.core.contract import ENV_EXPORT_SIGNING_KEY
from video_index.core.functions import Access


class ExportSigningKey(Construct):
    """The signing key, provided to the functions whose spec declares it, with one statement
    per access (sign; read the public key)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            description="video-index: signs export manifests (ECDSA P-256)",
            key_spec=kms.KeySpec.ECC_NIST_P256,
            key_usage=kms.KeyUsage.SIGN_VERIFY,
            removal_policy=RemovalPolicy.RETAIN,
        )
        Wiring.of(self).provide(
            ENV_EXPORT_SIGNING_KEY,
            self,
            self.key.key_arn,
            {
                Access.SIGN: lambda: [self._statement("SignExportManifests", "kms:Sign")],
                Access.PUBLIC_KEY: lambda: [
                    self._statement("ReadExportPublicKey", "kms:GetPublicKey")
                ],
            },
        )

    def _statement(self, sid: str, action: str) -> iam.PolicyStatement:
        return iam.PolicyStatement(sid=sid, actions=[action], resources=[self.key.key_arn])
