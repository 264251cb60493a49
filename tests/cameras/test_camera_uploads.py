"""A camera end to end (docs/cameras.md): provisioned by `video-index camera add`, its
uploader exchanges its certificate at the stand-in credentials endpoint over mutual TLS,
refreshes the credentials mid-upload, and is refused once revoked."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.cameras.conftest import BUCKET, CameraWorld
from video_index.cameras.identity import CameraIdentity
from video_index.cli.main import main
from video_index.upload import upload_segment
from video_index.upload.credentials import CredentialsRefused, camera_session
from video_index.upload.transfer import MiB

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _add(world: CameraWorld, name: str, out: Path) -> CameraIdentity:
    code = main(["camera", "add", name, "--out", str(out), "--ready-file", str(world.ready_file)])
    assert code == 0
    return CameraIdentity.load(out)


class Clock:
    """The credentials' clock (botocore's time_fetcher), moved by the test."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def _s3(identity: CameraIdentity, world: CameraWorld, clock: Clock) -> Any:
    return camera_session(identity, time_fetcher=clock).client(
        "s3", endpoint_url=world.moto.endpoint, config=_path_style()
    )


def _path_style() -> Any:
    from botocore.config import Config

    return Config(s3={"addressing_style": "path"}, proxies={})


def test_camera_add_writes_what_the_camera_needs(world: CameraWorld, tmp_path: Path) -> None:
    # When camera cam-a is added
    identity = _add(world, "cam-a", tmp_path / "cam-a")
    # Then its directory holds its certificate, a private key only its owner reads, the CA,
    # and names its thing, the endpoint, role alias and bucket
    assert identity.thing_name == "cam-a"
    assert identity.endpoint == world.endpoint.endpoint
    assert identity.bucket == BUCKET
    assert identity.private_key_file.stat().st_mode & 0o077 == 0
    assert identity.ca_file is not None and identity.ca_file.is_file()
    # And `camera list` shows it with one active certificate
    listed = _list(world)
    assert [(c["camera"], c["active"], len(c["certificates"])) for c in listed] == [
        ("cam-a", True, 1)
    ]
    # And adding it again is refused (exit 1) without touching the directory
    assert (
        main(
            [
                "camera",
                "add",
                "cam-a",
                "--out",
                str(tmp_path / "again"),
                "--ready-file",
                str(world.ready_file),
            ]
        )
        == 1
    )


def _list(world: CameraWorld) -> list[dict[str, Any]]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["camera", "list", "--json", "--ready-file", str(world.ready_file)]) == 0
    listed: list[dict[str, Any]] = json.loads(out.getvalue())
    return listed


def test_an_upload_refreshes_the_credentials_mid_upload(world: CameraWorld, tmp_path: Path) -> None:
    # Given camera cam-a and its uploader's S3 client on a clock the test moves
    identity = _add(world, "cam-a", tmp_path / "cam-a")
    clock = Clock()
    world.endpoint.service.clock = clock
    s3 = _s3(identity, world, clock)
    # And the clock jumps to 50 minutes later (10 minutes before the credentials expire)
    # as the second part of a multipart upload is about to be signed
    parts: list[int] = []

    def second_part_late(params: dict[str, Any], **_: Any) -> None:
        parts.append(params["PartNumber"])
        if params["PartNumber"] == 2:
            clock.now += timedelta(minutes=50)

    s3.meta.events.register("provide-client-params.s3.UploadPart", second_part_late)
    assert world.endpoint.service.requests == 1
    # When an 11 MiB segment goes up in three parts
    result = upload_segment(
        s3,
        BUCKET,
        b"{}" + b" " * (11 * MiB),
        kind="sensor",
        device="cam-a",
        start=START,
        duration_ms=1000,
        ext="json",
        multipart_threshold=5 * MiB,
        part_size=5 * MiB,
    )
    # Then it is uploaded, and the certificate was exchanged once more in the middle (the
    # new credentials last another hour: the third part needs no exchange)
    assert result.status == "uploaded"
    assert parts == [1, 2, 3]
    assert world.endpoint.service.requests == 2
    head = world.s3.head_object(Bucket=BUCKET, Key=result.key)  # type: ignore[attr-defined]
    assert head["ContentLength"] == 2 + 11 * MiB


def test_a_revoked_camera_gets_no_more_credentials(world: CameraWorld, tmp_path: Path) -> None:
    # Given camera cam-a, which uploads one segment
    identity = _add(world, "cam-a", tmp_path / "cam-a")
    clock = Clock()
    s3 = _s3(identity, world, clock)
    first = upload_segment(
        s3, BUCKET, b"{}", kind="sensor", device="cam-a", start=START, duration_ms=0, ext="json"
    )
    assert first.status == "uploaded"
    # When the operator revokes it
    assert main(["camera", "revoke", "cam-a", "--ready-file", str(world.ready_file)]) == 0
    # Then its next credential request is refused (403): once the credentials it holds are
    # within 10 minutes of their expiry, the refresh must succeed or the request fails
    clock.now += timedelta(minutes=55)
    with pytest.raises(CredentialsRefused) as refused:
        upload_segment(
            s3,
            BUCKET,
            b"[]",
            kind="sensor",
            device="cam-a",
            start=START,
            duration_ms=0,
            ext="json",
        )
    assert refused.value.status == 403
    # And the upload command reports it with exit code 3
    segment = tmp_path / "s.json"
    segment.write_text("{}")
    code = main(
        [
            "upload",
            str(segment),
            "--camera",
            str(identity.directory),
            "--kind",
            "sensor",
            "--start",
            "2026-11-30T12:00:00Z",
            "--duration-ms",
            "0",
        ]
    )
    assert code == 3
    assert _list(world)[0]["active"] is False


def test_a_camera_cannot_claim_another_things_name(world: CameraWorld, tmp_path: Path) -> None:
    # Given cameras cam-a and cam-b
    a = _add(world, "cam-a", tmp_path / "cam-a")
    _add(world, "cam-b", tmp_path / "cam-b")
    # When cam-a's certificate asks for cam-b's credentials
    forged = CameraIdentity(
        thing_name="cam-b",
        endpoint=a.endpoint,
        role_alias=a.role_alias,
        bucket=a.bucket,
        region=a.region,
        directory=a.directory,
        has_ca=True,
    )
    # Then the endpoint refuses: the certificate is not attached to that thing
    with pytest.raises(CredentialsRefused) as refused:
        camera_session(forged)
    assert refused.value.status == 403


def test_the_credential_exchange_adds_one_request_per_50_minutes(
    world: CameraWorld, tmp_path: Path
) -> None:
    # Given camera cam-a uploading one sensor segment every 5 minutes for 3 hours, on a
    # clock the endpoint (credentials last 1 h) and the uploader share
    identity = _add(world, "cam-a", tmp_path / "cam-a")
    clock = Clock()
    world.endpoint.service.clock = clock
    s3 = _s3(identity, world, clock)
    uploads = 36
    for n in range(uploads):
        result = upload_segment(
            s3,
            BUCKET,
            b"{}",
            kind="sensor",
            device="cam-a",
            start=START + timedelta(minutes=5 * n),
            duration_ms=0,
            ext="json",
        )
        assert result.status == "uploaded"
        clock.now += timedelta(minutes=5)
    # Then the certificate was exchanged at 0, 50, 100 and 150 minutes: botocore refreshes
    # on the first request within 15 minutes of the expiry (docs/cameras.md: ~1/upload rate)
    assert world.endpoint.service.requests == 4
