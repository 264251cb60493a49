"""Camera principals against an engine that enforces IAM (docs/cameras.md#which-proof):
moto authenticates and authorizes every request once its no-auth allowance
(``INITIAL_NO_AUTH_ACTION_COUNT``) is spent. The camera's credentials are those of a role
holding the camera policy with the thing name substituted — what AWS evaluates for the
deployed role with ``${credentials-iot:ThingName}``; moto resolves no policy variables and
evaluates no conditions, so the variable and ``If-None-Match`` are proven on the template
(tests/infra/test_infra_cameras.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws, settings
from moto.core.authorization import ActionAuthenticatorMixin

from video_index.core.camera_policy import camera_policy_document

BUCKET = "segments"
REGION = "us-east-1"
OWN = "v1/video/cam-a/2026/11/30/12/20261130T120000.000Z_10000_0123456789abcdef.mp4"
OTHERS = "v1/video/cam-b/2026/11/30/12/20261130T120000.000Z_10000_0123456789abcdef.mp4"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
}


@pytest.fixture
def camera_a(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An S3 client signing as camera cam-a, with IAM enforced from then on."""
    with mock_aws():
        # Given the bucket with one object of cam-b's
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=OTHERS, Body=b"b's footage")
        # And cam-a's role: the camera policy with its thing name substituted
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="camera-cam-a", AssumeRolePolicyDocument=json.dumps(TRUST))
        iam.put_role_policy(
            RoleName="camera-cam-a",
            PolicyName="camera",
            PolicyDocument=json.dumps(camera_policy_document(BUCKET, "cam-a")),
        )
        credentials = boto3.client("sts", region_name=REGION).assume_role(
            RoleArn=role["Role"]["Arn"], RoleSessionName="cam-a"
        )["Credentials"]
        # And from now on every request is authenticated and authorized
        monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
        monkeypatch.setattr(ActionAuthenticatorMixin, "request_count", 0)
        yield boto3.client(
            "s3",
            region_name=REGION,
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
        )


def _denied(call: Any, **kwargs: Any) -> bool:
    try:
        call(Bucket=BUCKET, **kwargs)
    except ClientError as exc:
        return exc.response["Error"]["Code"] == "AccessDenied"
    return False


def test_camera_a_writes_and_heads_its_own_keys(camera_a: Any) -> None:
    # When cam-a puts a segment under its own device (conditionally, as the uploader does)
    camera_a.put_object(Bucket=BUCKET, Key=OWN, Body=b"a's footage", IfNoneMatch="*")
    # Then it is stored, and cam-a may HEAD it (the conflict report reads its sha256)
    assert camera_a.head_object(Bucket=BUCKET, Key=OWN)["ContentLength"] == 11


def test_camera_a_cannot_write_or_read_camera_b_footage(camera_a: Any) -> None:
    # Then cam-a can neither add under cam-b's name, overwrite cam-b's key nor read it
    assert _denied(camera_a.put_object, Key=OTHERS.replace("0123", "9999"), Body=b"x")
    assert _denied(camera_a.put_object, Key=OTHERS, Body=b"x")
    assert _denied(camera_a.get_object, Key=OTHERS)


def test_camera_a_cannot_delete_even_its_own_footage(camera_a: Any) -> None:
    camera_a.put_object(Bucket=BUCKET, Key=OWN, Body=b"a's footage", IfNoneMatch="*")
    assert _denied(camera_a.delete_object, Key=OWN)
    assert _denied(camera_a.delete_object, Key=OTHERS)


def test_camera_a_cannot_write_outside_v1_nor_a_rendition(camera_a: Any) -> None:
    # Then nothing outside v1/: no foreign key, no rendition of its own segment, no export
    assert _denied(camera_a.put_object, Key="cam-a/notes.txt", Body=b"x")
    assert _denied(camera_a.put_object, Key=f"renditions/{OTHERS}/init.mp4", Body=b"x")
    assert _denied(camera_a.put_object, Key=f"renditions/{OWN}/init.mp4", Body=b"x")
    assert _denied(camera_a.put_object, Key="exports/e1/clip.mp4", Body=b"x")
    # And no other version prefix, no listing
    assert _denied(camera_a.put_object, Key=OWN.replace("v1/", "v2/"), Body=b"x")
    assert _denied(camera_a.list_objects_v2)
