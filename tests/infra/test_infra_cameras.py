"""Camera identities in the template (docs/cameras.md): what IAM's policy variables and
S3's conditional-write keys do is AWS's to evaluate, so these exact statements are the
proof for the cases moto cannot evaluate (tests/upload/test_camera_principals.py has the
others)."""

from __future__ import annotations

from typing import Any

from tests.infra.template import Synth, joined

THING = "${credentials-iot:ThingName}"


def _bucket_policy_statements(synth: Synth) -> list[dict[str, Any]]:
    (policy,) = synth.template.find_resources(
        "AWS::S3::BucketPolicy", {"Properties": {"Bucket": synth.ref(synth.stack.storage.bucket)}}
    ).values()
    statements: list[dict[str, Any]] = policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def test_the_camera_role_is_only_for_the_iot_credentials_provider(synth: Synth) -> None:
    # Given the camera role
    role = synth.props(synth.stack.cameras.role)
    # Then only AWS IoT's credentials provider may assume it, and it has no managed policy
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "credentials.iot.amazonaws.com"},
        }
    ]
    assert "ManagedPolicyArns" not in role


def test_a_camera_may_write_and_head_only_its_own_keys_under_v1(synth: Synth) -> None:
    # Given every IAM statement of the camera role
    statements = synth.policy_statements(synth.stack.cameras.role)
    bucket = synth.logical_id(synth.stack.storage.bucket)
    # Then there is exactly one: put (and abort its multipart), head its own keys
    (statement,) = statements
    assert statement["Effect"] == "Allow"
    assert "Condition" not in statement
    assert statement["Action"] == ["s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject"]
    # And only on v1/<kind>/<its thing name>/ for each kind: no delete, no list, no other
    # device's keys, no renditions or exports, nothing outside v1/
    assert [joined(r) for r in statement["Resource"]] == [
        f"${{{bucket}.Arn}}/v1/video/{THING}/*",
        f"${{{bucket}.Arn}}/v1/sensor/{THING}/*",
        f"${{{bucket}.Arn}}/v1/analysis/{THING}/*",
    ]


def test_the_role_alias_and_iot_policy_let_a_certificate_assume_only_that_role(
    synth: Synth,
) -> None:
    # Given the role alias and the IoT policy attached to each camera's certificate
    cameras = synth.stack.cameras
    alias_id = synth.stack.get_logical_id(cameras.role_alias)
    alias = synth.resources[alias_id]["Properties"]
    iot_policy = synth.resources[synth.stack.get_logical_id(cameras.iot_policy)]["Properties"]
    # Then the alias names the camera role, with one-hour credentials
    assert alias["RoleArn"] == synth.arn(cameras.role)
    assert alias["CredentialDurationSeconds"] == 3600
    # And a certificate may only exchange itself at that alias
    assert iot_policy["PolicyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "iot:AssumeRoleWithCertificate",
                "Resource": {"Fn::GetAtt": [alias_id, "RoleAliasArn"]},
            }
        ],
    }


def test_the_bucket_denies_a_camera_any_object_creation_without_if_none_match(
    synth: Synth,
) -> None:
    # Given the segment bucket's policy
    statements = _bucket_policy_statements(synth)
    bucket = synth.logical_id(synth.stack.storage.bucket)
    # Then one statement denies the camera role a PutObject or CompleteMultipartUpload
    # without If-None-Match (parts and CreateMultipartUpload exempt, as S3 documents)
    (statement,) = [s for s in statements if s.get("Sid") == "CamerasNeverOverwrite"]
    assert statement == {
        "Sid": "CamerasNeverOverwrite",
        "Effect": "Deny",
        "Principal": {"AWS": synth.arn(synth.stack.cameras.role)},
        "Action": "s3:PutObject",
        "Resource": {"Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, "/*"]]},
        "Condition": {
            "Null": {"s3:if-none-match": "true"},
            "Bool": {"s3:ObjectCreationOperation": "true"},
        },
    }


def test_no_other_principal_is_held_to_conditional_writes(synth: Synth) -> None:
    # Given the segment bucket's policy
    statements = _bucket_policy_statements(synth)
    # Then the only statements with an S3 conditional-write key name the camera role alone:
    # restore, undelete and the stack's roles (which CopyObject into v1/) stay outside it
    conditional = [s for s in statements if "s3:if-none-match" in str(s.get("Condition"))]
    assert [s["Principal"] for s in conditional] == [{"AWS": synth.arn(synth.stack.cameras.role)}]
    # And every other Deny is the TLS rule, for any principal
    others = [s for s in statements if s["Effect"] == "Deny" and s not in conditional]
    assert others and all(s["Principal"] == {"AWS": "*"} for s in others)
