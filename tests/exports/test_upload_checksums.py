"""The uploader sends each object's SHA-256 and S3 verifies it (docs/uploading.md#checksums).

AWS: "If the checksum value calculated by S3 matches your provided value, the request is
accepted. If the values don't match, the request is rejected" (S3 User Guide, *Checking
object integrity for data uploads*): 400 ``BadDigest``. moto stores whatever the client
says; :mod:`video_index.local.s3_fidelity` makes it refuse as S3 does (held both ways in
tests/aws/test_s3_contract.py). A multipart upload with SHA-256 gets a *composite* checksum
(a checksum of the parts' checksums, ``<base64>-<parts>``): SHA-256 has no full-object type
for multipart uploads, so an export hashes such an object from its bytes.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from video_index.aws.clients import S3_CONFIG
from video_index.local import s3_fidelity
from video_index.upload import upload_segment
from worlds.media import clip, fmp4_with

BUCKET = "checksum-uploads"
START = datetime(2026, 11, 29, 10, tzinfo=UTC)


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        undo = s3_fidelity.install()
        try:
            client = boto3.client("s3", region_name="us-east-1", config=S3_CONFIG)
            client.create_bucket(Bucket=BUCKET)
            yield client
        finally:
            undo()


def _sent_checksums(s3: Any) -> list[tuple[bytes, bytes]]:
    """The checksum each PutObject/UploadPart request declares: its algorithm and the
    trailer that carries the value (the SDK streams the body aws-chunked, the checksum of
    what it sent after it)."""
    seen: list[tuple[bytes, bytes]] = []

    def note(request: Any, **_: Any) -> None:
        headers = request.headers
        seen.append((headers.get("x-amz-sdk-checksum-algorithm"), headers.get("x-amz-trailer")))

    s3.meta.events.register("before-send.s3.PutObject", note)
    s3.meta.events.register("before-send.s3.UploadPart", note)
    return seen


def _b64(body: bytes) -> str:
    return base64.b64encode(hashlib.sha256(body).digest()).decode()


def test_a_single_put_sends_the_sha256_and_s3_keeps_it(s3: Any) -> None:
    # Given a segment
    content = clip("ts")
    sent = _sent_checksums(s3)
    # When the uploader puts it
    result = upload_segment(s3, BUCKET, content, kind="video", device="cam-1", start=START,
                            duration_ms=1_000, ext="ts")  # fmt: skip
    # Then its request carried a SHA-256, which S3 verified and answers back, full-object
    assert sent == [(b"SHA256", b"x-amz-checksum-sha256")]
    got = s3.get_object(Bucket=BUCKET, Key=result.key, ChecksumMode="ENABLED")
    assert got["ChecksumSHA256"] == _b64(content)
    assert got.get("ChecksumType", "FULL_OBJECT") == "FULL_OBJECT"


def test_a_body_whose_sha256_does_not_match_is_refused_by_s3(s3: Any) -> None:
    # Given a segment and a SHA-256 that is not its own (one bit of the body's flipped: what
    # a corruption between hashing and sending gives)
    content = clip("ts")
    changed = bytearray(content)
    changed[len(changed) // 2] ^= 0x01
    # When it is put with that checksum
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=BUCKET, Key="v1/x", Body=content, ChecksumSHA256=_b64(changed))
    # Then S3 refuses it as BadDigest (400) and stores nothing
    assert refused.value.response["Error"]["Code"] == "BadDigest"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def test_a_multipart_upload_sends_each_parts_sha256_and_gets_a_composite(s3: Any) -> None:
    # Given a segment above a (small) multipart threshold: two parts
    part = 5 * 1024 * 1024
    content = fmp4_with(b"multipart", part + 2)
    sent = _sent_checksums(s3)
    # When the uploader puts it
    result = upload_segment(
        s3, BUCKET, content, kind="video", device="cam-1", start=START, duration_ms=1_000,
        ext="mp4", multipart_threshold=part, part_size=part,
    )  # fmt: skip
    # Then each part carried its own SHA-256
    assert sent == [(b"SHA256", b"x-amz-checksum-sha256")] * 2
    # And the object's checksum is the composite of the parts' (not the object's SHA-256)
    got = s3.get_object(Bucket=BUCKET, Key=result.key, ChecksumMode="ENABLED")
    parts = hashlib.sha256(
        hashlib.sha256(content[:part]).digest() + hashlib.sha256(content[part:]).digest()
    ).digest()
    assert got["ChecksumSHA256"] == f"{base64.b64encode(parts).decode()}-2"
    assert got["ChecksumType"] == "COMPOSITE"
