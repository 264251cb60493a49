"""A camera's private key is written as a new file only its owner reads, and revoking or
rotating a camera reaches every certificate it has (docs/cameras.md).

* ``camera add``/``rotate`` create ``private.pem.key`` with ``O_CREAT|O_EXCL|O_NOFOLLOW``
  and mode 0600: an existing file (whatever its mode) or a symlink in its place is refused
  before anything is provisioned, and never written through.
* ``revoke``/``rotate`` read every page of the thing's principals. moto answers
  ``ListThingPrincipals`` in one page whatever the count, so the paging is proven with a
  botocore ``Stubber`` answering the way AWS IoT pages (``nextToken``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.cameras.conftest import CameraWorld
from video_index.cameras.identity import PRIVATE_KEY_FILE, write_identity
from video_index.cameras.provision import IssuedCertificate, revoke_camera, rotate_camera
from video_index.cli.main import main
from video_index.core.errors import BadInput

ACCOUNT = "arn:aws:iot:us-east-1:111122223333:cert/"


def _add(world: CameraWorld, name: str, out: Path) -> int:
    return main(["camera", "add", name, "--out", str(out), "--ready-file", str(world.ready_file)])


def _things(world: CameraWorld) -> list[str]:
    from video_index.cli.camera import _local

    iot = _local(world.ready_file).iot
    return [t["thingName"] for t in iot.list_things()["things"]]


def test_the_key_is_a_new_file_of_mode_0600_whatever_the_umask(
    world: CameraWorld, tmp_path: Path
) -> None:
    # Given a umask that would leave a new file readable by everyone
    previous = os.umask(0)
    try:
        # When a camera is added
        assert _add(world, "cam-mode", tmp_path / "cam") == 0
    finally:
        os.umask(previous)
    # Then its key file is the owner's only: read and write, nothing for anyone else
    key = tmp_path / "cam" / PRIVATE_KEY_FILE
    assert stat.S_IMODE(key.lstat().st_mode) == 0o600
    assert key.read_text().startswith("-----BEGIN")


def test_an_existing_key_file_is_refused_untouched_and_nothing_is_provisioned(
    world: CameraWorld, tmp_path: Path
) -> None:
    # Given a directory already holding a world-readable private.pem.key
    out = tmp_path / "cam"
    out.mkdir()
    existing = out / PRIVATE_KEY_FILE
    existing.write_text("someone else's key")
    existing.chmod(0o644)
    # When a camera is added into it, Then it is bad usage (exit 2)
    assert _add(world, "cam-existing", out) == 2
    # And the file is as it was, and no thing was made (checked before provisioning)
    assert existing.read_text() == "someone else's key"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o644
    assert "cam-existing" not in _things(world)


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_a_symlink_in_place_of_the_key_is_refused_never_followed(
    world: CameraWorld, tmp_path: Path, dangling: bool
) -> None:
    # Given private.pem.key as a symlink to a file elsewhere (or to where none is yet)
    out = tmp_path / "cam"
    out.mkdir()
    target = tmp_path / "elsewhere" / "authorized_keys"
    target.parent.mkdir()
    if not dangling:
        target.write_text("precious")
    (out / PRIVATE_KEY_FILE).symlink_to(target)
    # When a camera is added there, Then it is refused and the link's target is untouched
    assert _add(world, "cam-link", out) == 2
    assert (target.read_text() == "precious") if not dangling else not target.exists()
    # And writing the identity itself (past the early check: a link made in between)
    # refuses too, through O_EXCL|O_NOFOLLOW
    with pytest.raises(BadInput) as late:
        write_identity(
            out,
            thing_name="cam-link",
            endpoint="e",
            role_alias="r",
            bucket="b",
            region="us-east-1",
            certificate_pem="c",
            private_key_pem="k",
            ca_pem=None,
        )
    assert late.value.parameter == "out"
    assert (target.read_text() == "precious") if not dangling else not target.exists()


# --- every page of certificates ---------------------------------------------------------------


def _paged_principals(stubber: Stubber, name: str, pages: list[list[str]]) -> None:
    """``ListThingPrincipals`` answered in ``pages``, each but the last with a nextToken."""
    for index, page in enumerate(pages):
        answer: dict[str, Any] = {"principals": [ACCOUNT + cid for cid in page]}
        expected: dict[str, Any] = {"thingName": name}
        if index + 1 < len(pages):
            answer["nextToken"] = f"page-{index + 1}"
        if index:
            expected["nextToken"] = f"page-{index}"
        stubber.add_response("list_thing_principals", answer, expected)


def _active_then_deactivated(stubber: Stubber, certificate_ids: list[str]) -> None:
    for cid in certificate_ids:
        description = {
            "certificateId": cid,
            "certificateArn": ACCOUNT + cid,
            "status": "ACTIVE",
        }
        stubber.add_response(
            "describe_certificate", {"certificateDescription": description}, {"certificateId": cid}
        )
        stubber.add_response(
            "update_certificate", {}, {"certificateId": cid, "newStatus": "INACTIVE"}
        )


CERTIFICATES = [["a" * 64, "b" * 64], ["c" * 64], ["d" * 64]]


def test_revoke_deactivates_the_certificates_of_every_page() -> None:
    # Given a camera with four active certificates, listed by AWS IoT in three pages
    iot = boto3.client(
        "iot", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    stubber = Stubber(iot)
    _paged_principals(stubber, "cam-pages", CERTIFICATES)
    every = [cid for page in CERTIFICATES for cid in page]
    _active_then_deactivated(stubber, every)
    # When it is revoked
    with stubber:
        revoked = revoke_camera(iot, "cam-pages")
    # Then every page was read and every certificate deactivated, the last page's too
    assert revoked == every
    stubber.assert_no_pending_responses()


def test_rotate_deactivates_the_old_certificates_of_every_page() -> None:
    # Given the same camera, and a new certificate to rotate to
    iot = boto3.client(
        "iot", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y"
    )
    stubber = Stubber(iot)
    _paged_principals(stubber, "cam-pages", CERTIFICATES)
    new = IssuedCertificate(ACCOUNT + "e" * 64, "e" * 64, "pem", "key")
    stubber.add_response("attach_policy", {}, {"policyName": "camera", "target": new.arn})
    stubber.add_response(
        "attach_thing_principal", {}, {"thingName": "cam-pages", "principal": new.arn}
    )
    _active_then_deactivated(stubber, [cid for page in CERTIFICATES for cid in page])
    # When it is rotated
    with stubber:
        issued = rotate_camera(iot, "cam-pages", iot_policy="camera", issuer=lambda _: new)
    # Then the new certificate is attached and every old one, of every page, deactivated
    assert issued == new
    stubber.assert_no_pending_responses()
