"""What a camera principal may do in the segment bucket (docs/cameras.md): one source for
the deployed role (with the policy variable) and the local credentials endpoint (with the
thing name substituted, since moto does not resolve policy variables).

A camera is an AWS IoT thing; its name is the ``<device>`` part of its keys
(docs/keys.md), so the role's object ARNs name ``v1/<kind>/<thing name>/*`` for each
kind. One ARN per kind rather than ``v1/*/<thing>/*``: ``*`` matches ``/`` in an S3 ARN,
so the wildcard form would let a camera called ``2026`` write
``v1/video/other/2026/...`` (an hour folder of every other device).

* ``s3:PutObject`` — PUT, and the multipart calls (create, part, complete) S3 authorizes
  as PutObject;
* ``s3:AbortMultipartUpload`` — the uploader aborts what it does not complete;
* ``s3:GetObject`` — only so HEAD can read the ``sha256`` of its *own* key when a
  conditional write answers 412 (the conflict report, docs/uploading.md).

Never delete, never list, never anything outside ``v1/``. The bucket policy adds that a
camera's object creation must carry ``If-None-Match: *`` (:func:`no_overwrite_condition`).
"""

from __future__ import annotations

from typing import Any, Final

from video_index.core.keys import KEY_PREFIX, KINDS

#: AWS IoT's credentials provider sets it from the ``x-amzn-iot-thingname`` header.
THING_NAME_VARIABLE: Final = "${credentials-iot:ThingName}"
#: Actions of the camera role, each on the camera's own key prefixes only.
CAMERA_ACTIONS: Final = ("s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject")
#: The IoT action a certificate needs to exchange itself for the role's credentials.
ASSUME_ROLE_WITH_CERTIFICATE: Final = "iot:AssumeRoleWithCertificate"
#: Lifetime of the temporary credentials (the role alias's; IoT's default, 15 min..12 h).
CREDENTIAL_SECONDS: Final = 3600


def camera_key_patterns(thing_name: str = THING_NAME_VARIABLE) -> list[str]:
    """The object key patterns camera ``thing_name`` may write: ``v1/<kind>/<thing>/*``."""
    return [f"{KEY_PREFIX}{kind}/{thing_name}/*" for kind in KINDS]


def no_overwrite_condition() -> dict[str, dict[str, str]]:
    """The bucket policy's Deny condition: an object creation without ``If-None-Match``.

    As S3 documents for enforcing conditional writes: ``s3:ObjectCreationOperation`` is
    true for PutObject and CompleteMultipartUpload and false for CreateMultipartUpload,
    UploadPart and UploadPartCopy, which accept no conditional header and are exempt.
    """
    return {
        "Null": {"s3:if-none-match": "true"},
        "Bool": {"s3:ObjectCreationOperation": "true"},
    }


def camera_policy_document(bucket: str, thing_name: str) -> dict[str, Any]:
    """The camera role's permissions with the thing name substituted: the session policy
    the local credentials endpoint issues, equal to what AWS evaluates for the role."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "WriteOwnSegments",
                "Effect": "Allow",
                "Action": list(CAMERA_ACTIONS),
                "Resource": [
                    f"arn:aws:s3:::{bucket}/{pattern}"
                    for pattern in camera_key_patterns(thing_name)
                ],
            }
        ],
    }
