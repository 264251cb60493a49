"""A moto server with the local camera resources and the stand-in credentials endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from video_index.local.aws import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, client, isolated_session
from video_index.local.cameras import start_cameras
from video_index.local.credentials import LocalCredentialsEndpoint
from video_index.local.stack import MotoServer

BUCKET = "camera-footage"


@dataclass
class CameraWorld:
    moto: MotoServer
    endpoint: LocalCredentialsEndpoint
    ready_file: Path
    s3: object


@pytest.fixture
def world(tmp_path: Path) -> Iterator[CameraWorld]:
    # Given a moto server with the bucket, the camera role, alias and IoT policy, and the
    # stand-in credentials endpoint with its CA, described by a ready file
    moto = MotoServer().start()
    session = isolated_session()
    s3 = client(session, "s3", moto.endpoint)
    s3.create_bucket(Bucket=BUCKET)
    endpoint, entries = start_cameras(session, moto.endpoint, BUCKET, tmp_path / "ca")
    ready = {
        "s3": moto.endpoint,
        "bucket": BUCKET,
        "region": REGION,
        "aws_access_key_id": ACCESS_KEY_ID,
        "aws_secret_access_key": SECRET_ACCESS_KEY,
        **entries,
    }
    ready_file = tmp_path / "ready.json"
    ready_file.write_text(json.dumps(ready))
    try:
        yield CameraWorld(moto, endpoint, ready_file, s3)
    finally:
        endpoint.stop()
        moto.stop()
