"""Camera identities in ``video-index local`` (docs/cameras.md#locally): what the CDK stack
creates (the camera role, its IoT role alias and IoT policy), made in moto, plus the
local CA and the stand-in credentials endpoint (:mod:`.credentials`).

:func:`start_cameras` returns the endpoint and the ready-file entries that
``video-index camera add --ready-file`` and ``video-index upload --camera`` use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import ClientError

from video_index.core.camera_policy import ASSUME_ROLE_WITH_CERTIFICATE, CREDENTIAL_SECONDS
from video_index.local.aws import client
from video_index.local.camera_ca import LocalCertificateAuthority
from video_index.local.credentials import (
    _TRUST,
    CredentialsService,
    LocalCredentialsEndpoint,
)

ROLE_NAME: Final = "video-index-camera"
ROLE_ALIAS: Final = "video-index-local-camera"
IOT_POLICY: Final = "video-index-local-camera"
#: Ready-file keys (docs/local.md).
READY_ENDPOINT: Final = "camera_credentials_endpoint"
READY_ROLE_ALIAS: Final = "camera_role_alias"
READY_IOT_POLICY: Final = "camera_iot_policy"
READY_CA_DIRECTORY: Final = "camera_ca_directory"


def create_camera_resources(iot: Any, iam: Any) -> str:
    """The fleet role, role alias and IoT policy, as the stack has them; the alias ARN."""
    try:
        role_arn = iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=_TRUST)["Role"][
            "Arn"
        ]
    except ClientError:
        role_arn = iam.get_role(RoleName=ROLE_NAME)["Role"]["Arn"]
    alias_arn = str(
        iot.create_role_alias(
            roleAlias=ROLE_ALIAS, roleArn=role_arn, credentialDurationSeconds=CREDENTIAL_SECONDS
        )["roleAliasArn"]
    )
    iot.create_policy(
        policyName=IOT_POLICY,
        policyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": ASSUME_ROLE_WITH_CERTIFICATE,
                        "Resource": alias_arn,
                    }
                ],
            }
        ),
    )
    return alias_arn


def start_cameras(
    session: Any, moto_endpoint: str, bucket: str, directory: Path
) -> tuple[LocalCredentialsEndpoint, dict[str, str]]:
    """Camera resources in moto, a CA in ``directory``, the endpoint started."""
    iot = client(session, "iot", moto_endpoint)
    iam = client(session, "iam", moto_endpoint)
    sts = client(session, "sts", moto_endpoint)
    create_camera_resources(iot, iam)
    authority = LocalCertificateAuthority.create(directory)
    service = CredentialsService(iot=iot, iam=iam, sts=sts, bucket=bucket)
    endpoint = LocalCredentialsEndpoint(service, authority).start()
    return endpoint, {
        READY_ENDPOINT: endpoint.endpoint,
        READY_ROLE_ALIAS: ROLE_ALIAS,
        READY_IOT_POLICY: IOT_POLICY,
        READY_CA_DIRECTORY: str(directory),
    }
