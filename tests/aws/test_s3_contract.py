"""What the product relies on from S3, stated from AWS's documentation and checked against
the engine the suite runs on (moto, in-process), beside the DynamoDB contract.

Each test quotes the documentation page and names the product code that relies on it.
Where moto's S3 differs, :mod:`video_index.local.s3_fidelity` makes it behave as S3 (the
local stack, the deletion and bulk tests and benchmarks install it); each such behaviour
is checked both ways here:

* **with the patch**, the engine behaves as AWS documents (exactly once: a patch must
  never double what moto sends);
* **without it**, moto still shows the deviation the patch exists for. The day a moto
  release fixes it, that test fails and says so: the patch would then double the
  behaviour (or hide a change), and must go.

Access control (HEAD needs ``s3:GetObject``) runs with moto's IAM enforcement on, as the
camera principals' tests do (tests/cameras/test_camera_principals.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws, settings
from moto.core.authorization import ActionAuthenticatorMixin

from video_index.local import s3_fidelity

REGION = "us-east-1"
BUCKET = "contract-segments"
KEY = "v1/video/cam-1/2026/03/02/08/20260302T080000.000Z_10000_0123456789abcdef.mp4"


@dataclass(frozen=True)
class Bucket:
    """A versioned bucket notifying an SQS queue of every creation and removal."""

    s3: Any
    sqs: Any
    queue_url: str

    def events(self) -> list[str]:
        """The event names delivered since the last call (the queue drained)."""
        names: list[str] = []
        while True:
            messages = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10
            ).get("Messages", [])
            if not messages:
                return names
            for message in messages:
                records = json.loads(message["Body"]).get("Records", [])
                names += [record["eventName"] for record in records]
                self.sqs.delete_message(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )


def _versioned_bucket() -> Bucket:
    s3 = boto3.client("s3", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    queue_url = sqs.create_queue(QueueName="contract-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    configuration = {
        "QueueArn": arn["Attributes"]["QueueArn"],
        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
    }
    s3.put_bucket_notification_configuration(
        Bucket=BUCKET, NotificationConfiguration={"QueueConfigurations": [configuration]}
    )
    bucket = Bucket(s3, sqs, queue_url)
    bucket.events()  # moto's s3:TestEvent
    return bucket


@pytest.fixture
def s3_like_s3() -> Iterator[Bucket]:
    """The engine as the product's tests run it: moto with :mod:`s3_fidelity` installed."""
    with mock_aws():
        bucket = _versioned_bucket()
        undo = s3_fidelity.install()
        try:
            yield bucket
        finally:
            undo()


@pytest.fixture
def moto_as_is() -> Iterator[Bucket]:
    """moto without the patch: where it still deviates from S3."""
    with mock_aws():
        yield _versioned_bucket()


def _two_versions(bucket: Bucket) -> tuple[str, str]:
    first = bucket.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"one")["VersionId"]
    second = bucket.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"two")["VersionId"]
    assert bucket.events() == ["ObjectCreated:Put", "ObjectCreated:Put"]
    return first, second


_DROP_THE_PATCH = (
    "moto now sends this notification itself: s3_fidelity's patch would send it twice; "
    "remove that part of video_index/local/s3_fidelity.py"
)


# --- notifications of deletes in a versioned bucket ---------------------------------------


def test_a_delete_without_a_version_notifies_delete_marker_created(s3_like_s3: Bucket) -> None:
    """Event notification types
    (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-how-to-event-types-and-destinations.html):
    "You can request notification when an object is deleted or a versioned object is
    permanently deleted by using the s3:ObjectRemoved:Delete event type. Or you can request
    notification when a delete marker is created for a versioned object by using
    s3:ObjectRemoved:DeleteMarkerCreated." A DELETE without ``versionId`` in a versioned
    bucket creates a delete marker.

    Relied on by ingest (ingest/events.py reads ``DeleteMarkerCreated`` as "the key is
    gone") and every deletion job (deletion/, bulk/): without it the read model would keep
    serving deleted footage.
    """
    # Given a key with two versions
    _two_versions(s3_like_s3)
    # When it is deleted without a version
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=KEY)
    # Then exactly one notification says a delete marker was created
    assert s3_like_s3.events() == ["ObjectRemoved:DeleteMarkerCreated"]


def test_moto_still_sends_nothing_for_a_delete_marker(moto_as_is: Bucket) -> None:
    _two_versions(moto_as_is)
    moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY)
    assert moto_as_is.events() == [], _DROP_THE_PATCH


def test_deleting_a_version_or_a_marker_notifies_object_removed_delete(
    s3_like_s3: Bucket,
) -> None:
    """Deleting one version (or a delete marker, by its version id) while the key keeps
    others is a permanent deletion of a versioned object: ``s3:ObjectRemoved:Delete``
    (the page quoted above).

    Relied on by ingest: removing a delete marker brings the previous version back
    (undelete, docs/deletion.md), and erasure removes old versions; ingest re-reads the
    key's state (HEAD) on each such event.
    """
    # Given a key with two versions and a delete marker on top
    first, _ = _two_versions(s3_like_s3)
    marker = s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=KEY)["VersionId"]
    s3_like_s3.events()
    # When the older version is deleted, then the marker (the key comes back)
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=first)
    after_version = s3_like_s3.events()
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=marker)
    # Then each sent exactly one ObjectRemoved:Delete
    assert after_version == ["ObjectRemoved:Delete"]
    assert s3_like_s3.events() == ["ObjectRemoved:Delete"]
    assert s3_like_s3.s3.head_object(Bucket=BUCKET, Key=KEY)["ContentLength"] == 3


def test_moto_still_sends_nothing_for_a_version_deleted_while_others_remain(
    moto_as_is: Bucket,
) -> None:
    first, _ = _two_versions(moto_as_is)
    marker = moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY)["VersionId"]
    moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=first)
    moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=marker)
    assert moto_as_is.events() == [], _DROP_THE_PATCH


def test_deleting_a_keys_last_version_notifies_once_even_a_marker(s3_like_s3: Bucket) -> None:
    """The key's last version deleted: ``s3:ObjectRemoved:Delete`` once, whether it is an
    object version (moto sends that itself: the patch must not add a second) or a delete
    marker (moto fails inside its event builder: the patch gives it what it reads).

    Relied on by erasure (deletion jobs remove every version and marker of a key)."""
    # Given a key whose only version is deleted, and one whose last is a delete marker
    (version,) = [s3_like_s3.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"x")["VersionId"]]
    s3_like_s3.events()
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=version)
    assert s3_like_s3.events() == ["ObjectRemoved:Delete"]
    other = KEY.replace("cam-1", "cam-2")
    stored = s3_like_s3.s3.put_object(Bucket=BUCKET, Key=other, Body=b"y")["VersionId"]
    marker = s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=other)["VersionId"]
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=other, VersionId=stored)
    s3_like_s3.events()
    # When the marker, the last thing the key has, is deleted
    s3_like_s3.s3.delete_object(Bucket=BUCKET, Key=other, VersionId=marker)
    # Then one notification, and nothing is left of the key
    assert s3_like_s3.events() == ["ObjectRemoved:Delete"]
    listed = s3_like_s3.s3.list_object_versions(Bucket=BUCKET, Prefix=other)
    assert not listed.get("Versions") and not listed.get("DeleteMarkers")


def test_moto_still_fails_deleting_a_keys_last_delete_marker(moto_as_is: Bucket) -> None:
    stored = moto_as_is.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"y")["VersionId"]
    marker = moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY)["VersionId"]
    moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=stored)
    with pytest.raises(AttributeError, match="etag"):
        moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=marker)
    # And moto notifies a last object version itself (the patch leaves that one alone)
    version = moto_as_is.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"z")["VersionId"]
    moto_as_is.events()
    moto_as_is.s3.delete_object(Bucket=BUCKET, Key=KEY, VersionId=version)
    assert moto_as_is.events() == ["ObjectRemoved:Delete"]


# --- listing versions after a key marker ---------------------------------------------------


def _two_keys_under_two_folders(bucket: Bucket) -> None:
    for key in ("a/1", "a/2", "b/1", "b/2"):
        bucket.s3.put_object(Bucket=BUCKET, Key=key, Body=b"old")
        bucket.s3.put_object(Bucket=BUCKET, Key=key, Body=b"new")


def test_versions_after_a_key_marker_start_at_the_next_key_with_all_its_versions(
    s3_like_s3: Bucket,
) -> None:
    """API_ListObjectVersions
    (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html):
    "KeyMarker — Specifies the key to start with when listing objects in a bucket."
    API_ListObjects (…/API/API_ListObjects.html), of the same marker: "Marker is where you
    want Amazon S3 to start listing from. Amazon S3 starts listing after this specified
    key. Marker can be any key in the bucket."

    Relied on by ``ObjectStore.versions(prefix, after_key)`` (aws/objects.py): a deletion
    job resumes from its checkpoint, a folder name (``…/2026/03/02/``) that is no key,
    and must see every version of every key after it.
    """
    # Given two versions of each of four keys in two folders
    _two_keys_under_two_folders(s3_like_s3)
    # When versions are listed after the marker "a/" (no key), then after the key "a/1"
    after_folder = s3_like_s3.s3.list_object_versions(Bucket=BUCKET, KeyMarker="a/")
    after_key = s3_like_s3.s3.list_object_versions(Bucket=BUCKET, KeyMarker="a/1")
    # Then each lists every version of every key after it, in key order
    keys = [v["Key"] for v in after_folder["Versions"]]
    assert keys == ["a/1", "a/1", "a/2", "a/2", "b/1", "b/1", "b/2", "b/2"]
    assert [v["Key"] for v in after_key["Versions"]] == keys[2:]


def test_moto_still_drops_the_first_version_after_a_marker_that_is_no_key(
    moto_as_is: Bucket,
) -> None:
    _two_keys_under_two_folders(moto_as_is)
    listed = moto_as_is.s3.list_object_versions(Bucket=BUCKET, KeyMarker="a/")
    keys = [v["Key"] for v in listed["Versions"]]
    assert keys == ["a/1", "a/2", "a/2", "b/1", "b/1", "b/2", "b/2"], (
        "moto now lists every version after a KeyMarker: remove the list_object_versions "
        "patch of video_index/local/s3_fidelity.py"
    )


# --- HEAD and its permissions ------------------------------------------------------------

TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
}


@pytest.fixture
def principal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """A function making an S3 client whose role may do exactly ``actions`` in the bucket
    (its objects and itself); once the first is made, moto enforces IAM on every request."""
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"footage")
        iam = boto3.client("iam", region_name=REGION)
        sts = boto3.client("sts", region_name=REGION)
        made: list[str] = []

        def client(*actions: str) -> Any:
            name = f"contract-{len(made)}"
            made.append(name)
            role = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(TRUST))
            resources = [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]
            statement = {"Effect": "Allow", "Action": list(actions), "Resource": resources}
            policy = {"Version": "2012-10-17", "Statement": [statement]}
            iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=json.dumps(policy))
            credentials = sts.assume_role(RoleArn=role["Role"]["Arn"], RoleSessionName=name)
            return boto3.client(
                "s3",
                region_name=REGION,
                aws_access_key_id=credentials["Credentials"]["AccessKeyId"],
                aws_secret_access_key=credentials["Credentials"]["SecretAccessKey"],
                aws_session_token=credentials["Credentials"]["SessionToken"],
            )

        def enforcing(*actions: str) -> Any:
            made_client = client(*actions)
            monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
            monkeypatch.setattr(ActionAuthenticatorMixin, "request_count", 0)
            return made_client

        yield enforcing


def _head_status(client: Any, key: str) -> int:
    try:
        return int(client.head_object(Bucket=BUCKET, Key=key)["ResponseMetadata"]["HTTPStatusCode"])
    except ClientError as exc:
        return int(exc.response["ResponseMetadata"]["HTTPStatusCode"])


_HEAD = """API_HeadObject (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html),
Permissions: "To use HEAD, you must have the s3:GetObject permission." "If the object you
request doesn't exist, the error that Amazon S3 returns depends on whether you also have
the s3:ListBucket permission. If you have the s3:ListBucket permission on the bucket,
Amazon S3 returns an HTTP status code 404 Not Found error. If you don't have the
s3:ListBucket permission, Amazon S3 returns an HTTP status code 403 Forbidden error." """


def test_head_is_authorized_by_get_object(principal: Callable[..., Any]) -> None:
    """HEAD is authorized as ``s3:GetObject`` (the quote in ``_HEAD``); the IAM action list
    of S3 has no ``s3:HeadObject``.

    Relied on by the camera role (core/camera_policy.py: ``s3:GetObject`` on its own keys,
    so the uploader's conflict report can HEAD a key that answered 412) and by ingest and
    reconcile, whose roles HEAD segments with ``s3:GetObject``.

    moto 5.2.6 authorizes every S3 request by its API operation name (``s3:HeadObject``,
    ``s3:ListObjectsV2``, ``s3:CreateMultipartUpload`` …) instead of the IAM action S3
    checks: there this test and the camera principals' tests fail. moto 5.2.5 maps HEAD to
    ``s3:GetObject`` as S3 does.
    """
    assert _head_status(principal("s3:GetObject"), KEY) == 200


def test_head_is_not_authorized_by_an_action_s3_does_not_have(
    principal: Callable[..., Any],
) -> None:
    # A role granting "s3:HeadObject" (no such IAM action) may not HEAD: S3 checks GetObject
    assert _head_status(principal("s3:HeadObject", "s3:ListBucket"), KEY) == 403


def test_head_of_a_missing_key_is_404_with_list_bucket(principal: Callable[..., Any]) -> None:
    """The ``_HEAD`` quote's first case: with ``s3:ListBucket`` too, a missing key is 404.

    Relied on by ingest and reconcile (``ObjectStore.head``: 404 is "the object is gone",
    their roles hold ``s3:ListBucket`` on the bucket for this, infra/python_function.py)."""
    assert _head_status(principal("s3:GetObject", "s3:ListBucket"), KEY + ".missing") == 404


@pytest.mark.xfail(
    strict=True,
    reason="moto answers 404 for a missing key without s3:ListBucket; S3 answers 403 (drift)",
)
def test_head_of_a_missing_key_is_403_without_list_bucket(
    principal: Callable[..., Any],
) -> None:
    """The ``_HEAD`` quote's second case. KNOWN DRIFT: moto (5.2.5) answers 404, so on moto
    this is an expected failure, strictly: the day moto answers 403 it passes and the
    marker goes. The product never relies on a 404 without ``s3:ListBucket``: the camera
    HEADs only keys that answered 412 (they exist)."""
    assert _head_status(principal("s3:GetObject"), KEY + ".missing") == 403


# --- checksums on upload ------------------------------------------------------------------

#: The SHA-256 (base64) of something that is not the body put.
_NOT_THE_BODY = base64.b64encode(hashlib.sha256(b"another body").digest()).decode()


def test_a_put_whose_sha256_is_not_its_bodys_is_refused_bad_digest(s3_like_s3: Bucket) -> None:
    # "If the checksum value calculated by S3 matches your provided value, the request is
    # accepted. If the values don't match, the request is rejected." (S3 User Guide,
    # Checking object integrity for data uploads)
    with pytest.raises(ClientError) as refused:
        s3_like_s3.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"one", ChecksumSHA256=_NOT_THE_BODY)
    assert refused.value.response["Error"]["Code"] == "BadDigest"
    assert "Versions" not in s3_like_s3.s3.list_object_versions(Bucket=BUCKET)
    # And a body sent with its own SHA-256 (computed by the SDK) is kept with it
    s3_like_s3.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"one", ChecksumAlgorithm="SHA256")
    got = s3_like_s3.s3.get_object(Bucket=BUCKET, Key=KEY, ChecksumMode="ENABLED")
    assert got["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(b"one").digest()).decode()


def test_moto_still_accepts_a_put_whose_sha256_is_not_its_bodys(moto_as_is: Bucket) -> None:
    moto_as_is.s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"one", ChecksumSHA256=_NOT_THE_BODY)
    assert moto_as_is.s3.head_object(Bucket=BUCKET, Key=KEY)["ContentLength"] == 3, (
        "moto now refuses a checksum that is not the body's: remove the _get_checksum patch "
        "of video_index/local/s3_fidelity.py"
    )
