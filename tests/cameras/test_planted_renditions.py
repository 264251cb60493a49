"""Derived objects are not plantable (docs/cameras.md): a rendition is served only when its
recorded provenance (the source's ETag) is the source's ETag now."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from video_index.aws.objects import ObjectStore
from video_index.media.renditions import SOURCE_ETAG_METADATA, Renditions, rendition_keys
from video_index.media.synthetic import synthetic_clip

BUCKET = "segments"
KEY = "v1/video/cam-b/2026/11/30/12/20261130T120000.000Z_2000_0123456789abcdef.mp4"
PLANTED = b"not cam-b's video"


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        # Given cam-b's progressive MP4
        client.put_object(Bucket=BUCKET, Key=KEY, Body=synthetic_clip(seconds=2, container="mp4"))
        yield client


def _plant(s3: Any, metadata: dict[str, str]) -> None:
    for key in rendition_keys(KEY):
        s3.put_object(Bucket=BUCKET, Key=key, Body=PLANTED, Metadata=metadata)


def _served(s3: Any) -> list[bytes]:
    init_key, data_key = Renditions(ObjectStore(s3, BUCKET)).ensure(KEY)
    return [s3.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in (init_key, data_key)]


@pytest.mark.parametrize(
    "metadata",
    [{}, {SOURCE_ETAG_METADATA: "0" * 32}],
    ids=["no-provenance", "wrong-provenance"],
)
def test_a_planted_rendition_is_never_served(s3: Any, metadata: dict[str, str]) -> None:
    # Given rendition objects planted under the source's rendition keys
    _plant(s3, metadata)
    # When a viewer asks for the source's rendition
    init, data = _served(s3)
    # Then what is served is made from the source, not the planted bytes
    assert PLANTED not in (init, data)
    assert b"ftyp" in init[:16] and b"moof" in data[:16]
    # And it records the source's ETag
    etag = s3.head_object(Bucket=BUCKET, Key=KEY)["ETag"].strip('"')
    for key in rendition_keys(KEY):
        assert s3.head_object(Bucket=BUCKET, Key=key)["Metadata"] == {SOURCE_ETAG_METADATA: etag}


def test_a_genuine_rendition_is_served_without_being_made_again(s3: Any) -> None:
    # Given the rendition made once
    first = _served(s3)
    versions = [s3.head_object(Bucket=BUCKET, Key=k)["LastModified"] for k in rendition_keys(KEY)]
    # When it is asked for again
    again = _served(s3)
    # Then the same objects are served, not rewritten
    assert again == first
    assert [
        s3.head_object(Bucket=BUCKET, Key=k)["LastModified"] for k in rendition_keys(KEY)
    ] == versions
