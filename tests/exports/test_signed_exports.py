"""Signed exports (docs/playback.md#signed-exports): a manifest beside every clip, signed by
the export signing key (moto's KMS), verified offline by ``video-index verify``.

The world: two 2-second MPEG-TS files of one camera 8 seconds apart (a gap the index lists
as ``missing``) and a third uploaded without a checksum (an older tool), exported through
the API and the export worker. What a changed byte should be named by is computed here with
PyAV, from the clip itself: the packet the byte lies in and the keyframes around it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import pytest

from tests.support.tables import TableFactory
from video_index.aws.kms import SigningKey
from video_index.aws.objects import ObjectStore
from video_index.cli.main import main
from video_index.media.exports import Exports, clip_key, manifest_key
from video_index.media.worker import ExportWorker
from worlds import events as ev
from worlds.api_world import ApiWorld, at, iso, make_world
from worlds.media import clip

DEVICE = "cam-signed"
#: The files' starts (seconds after 10:00 on the 29th) and whether each was sent with its
#: SHA-256 checksum.
FILES = ((0, True), (10, True), (12, False))


@dataclass
class Exported:
    world: ApiWorld
    job: dict[str, Any]
    clip: Path
    manifest: Path
    public_key: Path
    keys: list[str]


@pytest.fixture
def exported(aws: None, new_table: TableFactory, tmp_path: Path) -> Exported:
    dynamodb, table = new_table()
    world = make_world(dynamodb, table)
    keys = [
        world.put(
            "video",
            DEVICE,
            at(29, 10, 0, second),
            2_000,
            media="ts",
            body=clip("ts", 2.0, label=f"{DEVICE}-{second}"),
            checksum=checksum,
        ).key
        for second, checksum in FILES
    ]
    settings_key = world.services.signing_key
    assert settings_key is not None
    queued: list[str] = []
    world.services.exports = Exports(
        ObjectStore(world.s3, ev.BUCKET),
        enqueue=queued.append,
        max_bytes=10**8,
        signer=lambda: settings_key,
    )
    window = {"from": iso(at(29, 10)), "to": iso(at(29, 10, 1)), "tz": "Europe/Berlin"}
    status, job, _ = world.call("POST", f"/devices/{DEVICE}/exports", body=json.dumps(window))
    assert status == 202, job
    answer = ExportWorker(world.services.exports).handle(
        ev.sqs_event(ev.sqs_record(json.dumps({"export_id": job["export_id"]}))), None
    )
    assert answer == {"batchItemFailures": []}
    status, done, _ = world.get(f"/exports/{job['export_id']}")
    assert status == 200 and done["state"] == "done", done
    status, key, _headers = world.get("/exports/public-key")
    assert status == 200, key
    paths = tmp_path / "clip.mp4", tmp_path / "manifest.json", tmp_path / "key.pem"
    paths[0].write_bytes(_object(world, clip_key(job["export_id"])))
    paths[1].write_bytes(_object(world, manifest_key(job["export_id"])))
    paths[2].write_text(key["pem"])
    return Exported(world, done, *paths, keys)


def _object(world: ApiWorld, key: str) -> bytes:
    return bytes(world.s3.get_object(Bucket=ev.BUCKET, Key=key)["Body"].read())


def _verify(exported: Exported, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(
        [
            "verify",
            str(exported.clip),
            str(exported.manifest),
            "--public-key",
            str(exported.public_key),
        ]
    )
    return code, " ".join(capsys.readouterr().out.split())


def test_an_untouched_export_verifies(
    exported: Exported, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an export as the product made it
    # When it is verified offline against the published key
    code, out = _verify(exported, capsys)
    # Then it verifies
    assert code == 0, out
    assert out.startswith("OK clip.mp4") and "FAILED" not in out
    # And the job's answer carries a presigned URL of the manifest
    assert exported.job["manifest_url"].startswith("https://")
    assert manifest_key(exported.job["export_id"]) in exported.job["manifest_url"]


def test_the_manifest_lists_sources_hashes_gaps_and_who_exported(exported: Exported) -> None:
    # Given the export's manifest
    manifest = json.loads(exported.manifest.read_text())
    clip_bytes = exported.clip.read_bytes()
    # Then it names the device, the window, its zone and who exported it
    assert manifest["device"] == DEVICE
    assert manifest["window"] == {
        "from": "2026-11-29T10:00:00.000Z",
        "to": "2026-11-29T10:01:00.000Z",
    }
    assert manifest["time_zone"] == "Europe/Berlin"
    assert manifest["exported_by"] == exported.job["created_by"]
    # And each source with its version and SHA-256: S3's checksum where the upload sent one,
    # computed from the bytes for the file uploaded without
    sources = manifest["sources"]
    assert [s["key"] for s in sources] == exported.keys
    for source, (second, checksum) in zip(sources, FILES, strict=True):
        body = clip("ts", 2.0, label=f"{DEVICE}-{second}")
        assert source["sha256"] == hashlib.sha256(body).hexdigest()
        assert source["sha256_from"] == ("s3-checksum" if checksum else "computed")
        assert source["version_id"] == "null"  # the test bucket is not versioned
    # And the gap between the first and second file (10:00:02-10:00:10), and the rest of
    # the window after the last file, as the ranges answer lists them
    ranges = exported.world.get(
        f"/devices/{DEVICE}/ranges", f"from={iso(at(29, 10))}&to={iso(at(29, 10, 1))}"
    )[1]
    assert manifest["gaps"] == ranges["gaps"]
    assert next((g["start"], g["end"]) for g in manifest["gaps"]) == (
        "2026-11-29T10:00:02.000Z",
        "2026-11-29T10:00:10.000Z",
    )
    # And the clip's SHA-256; fragments tile the file, the first being the header
    assert manifest["clip"]["sha256"] == hashlib.sha256(clip_bytes).hexdigest()
    ranges_of = [tuple(f["range"]) for f in manifest["fragments"]]
    assert ranges_of[0][0] == 0 and ranges_of[-1][1] == len(clip_bytes)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges_of))
    assert manifest["fragments"][0]["part"] == "header"


def _packets(data: bytes) -> list[tuple[int, int, float, bool]]:
    """(byte position, size, presentation time in s, keyframe) of every video packet, by PyAV."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        return [
            (p.pos, p.size, float(p.pts * stream.time_base), p.is_keyframe)
            for p in container.demux(stream)
            if p.pts is not None and p.pos is not None and p.pos >= 0
        ]


@pytest.mark.parametrize("which", [0.3, 0.8])
def test_one_byte_flipped_in_the_media_fails_naming_its_moment(
    exported: Exported, capsys: pytest.CaptureFixture[str], which: float
) -> None:
    # Given the clip with one byte flipped inside a packet, chosen part-way through the file
    data = bytearray(exported.clip.read_bytes())
    packets = _packets(bytes(data))
    position, size, pts, _ = packets[int(len(packets) * which)]
    data[position + size // 2] ^= 0x01
    exported.clip.write_bytes(bytes(data))
    # The moment that byte shows, found here: the keyframe group of that packet (PyAV)
    keys = [p[2] for p in packets if p[3]]
    group_start = max(k for k in keys if k <= pts)
    group_end = min((k for k in keys if k > pts), default=None)
    # When it is verified
    code, out = _verify(exported, capsys)
    # Then it fails, naming the one fragment, whose clip time is that keyframe group's
    assert code == 1, out
    assert out.count("FAILED changed:") == 1, out
    named = out.split("clip time ")[1].split(" s")[0]
    start_s, end_s = (float(x) for x in named.split("-"))
    assert start_s == pytest.approx(group_start, abs=0.001)
    if group_end is not None:
        assert end_s == pytest.approx(group_end, abs=0.041)
    # And the wall-clock moment: the source file's start plus the offset into it
    manifest = json.loads(exported.manifest.read_text())
    source = max(
        (s for s in manifest["sources"] if s["clip_from_ms"] <= group_start * 1000 + 1),
        key=lambda s: s["clip_from_ms"],
    )
    assert (
        f"the moment {_plus(source['start'], group_start * 1000 - source['clip_from_ms'])}" in out
    )


def _plus(moment: str, ms: float) -> str:
    from datetime import datetime, timedelta

    shifted = datetime.fromisoformat(moment.replace("Z", "+00:00")) + timedelta(
        milliseconds=round(ms)
    )
    return iso(shifted)


def test_one_byte_flipped_in_the_header_names_the_header(
    exported: Exported, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the clip with one byte flipped in its moov (before the first packet, by PyAV)
    data = bytearray(exported.clip.read_bytes())
    first = min(p[0] for p in _packets(bytes(data)))
    moov = bytes(data).index(b"moov")
    assert moov < first
    data[moov + 40] ^= 0x01
    exported.clip.write_bytes(bytes(data))
    # When it is verified
    code, out = _verify(exported, capsys)
    # Then it fails naming the header
    assert code == 1
    assert "FAILED changed: the header" in out


def test_an_edited_manifest_fails_its_signature(
    exported: Exported, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the manifest with one fact changed (who exported)
    manifest = json.loads(exported.manifest.read_text())
    manifest["exported_by"] = "someone-else"
    exported.manifest.write_text(json.dumps(manifest))
    # When it is verified with the untouched clip
    code, out = _verify(exported, capsys)
    # Then its signature fails (and the clip still matches its hashes)
    assert code == 1
    assert "FAILED signature:" in out and "FAILED changed" not in out


def test_the_signature_is_ecdsa_p256_over_the_canonical_manifest(exported: Exported) -> None:
    # Given the manifest and the published key
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    manifest = json.loads(exported.manifest.read_text())
    signature = manifest.pop("signature")
    # When the canonical bytes are made as docs/playback.md says (written out here)
    body = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    message = f"video-index-export-manifest/1 sha256={hashlib.sha256(body.encode()).hexdigest()}"
    # Then the key's ECDSA SHA-256 signature over that message verifies
    key = load_pem_public_key(exported.public_key.read_bytes())
    assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
    key.verify(base64.b64decode(signature["value"]), message.encode(), ec.ECDSA(hashes.SHA256()))
    assert signature["algorithm"] == "ECDSA_SHA_256"


def test_the_public_key_needs_no_account(exported: Exported) -> None:
    # When the public key is asked for without a caller
    from worlds.api_world import resolve

    response = resolve(ev.http_request("/exports/public-key"))
    # Then it is answered, with the key id and algorithm
    assert response["statusCode"] == 200, response
    body = json.loads(response["body"])
    assert body["algorithm"] == "ECDSA_SHA_256" and body["key_id"].startswith("arn:aws:kms:")
    assert body["pem"].startswith("-----BEGIN PUBLIC KEY-----")


def test_a_worker_without_the_signing_key_refuses_naming_the_setting(
    aws: None, new_table: TableFactory
) -> None:
    # Given the export worker's settings without the key
    import boto3

    from video_index.aws.clients import Clients
    from video_index.core.errors import ConfigurationError
    from video_index.core.functions import EXPORT
    from video_index.core.settings import Settings

    environ = {"VIDEO_INDEX_BUCKET": ev.BUCKET}
    # When the function is built from them
    # Then it refuses to start, naming the setting
    with pytest.raises(ConfigurationError, match="VIDEO_INDEX_EXPORT_SIGNING_KEY"):
        Settings.for_function(EXPORT, environ)
    # And a worker made without one refuses every job, naming it, before reading anything
    exports = Exports(ObjectStore(boto3.client("s3"), ev.BUCKET), enqueue=str, max_bytes=1)
    with pytest.raises(ConfigurationError, match="VIDEO_INDEX_EXPORT_SIGNING_KEY"):
        exports.run("0" * 32)
    assert Clients is not None and SigningKey is not None


def test_an_export_in_an_unknown_zone_is_a_400_naming_tz(
    aws: None, new_table: TableFactory
) -> None:
    # Given a world with a file
    dynamodb, table = new_table()
    world = make_world(dynamodb, table)
    world.put("video", DEVICE, at(29, 10), 2_000, media="ts")
    window = {"from": iso(at(29, 10)), "to": iso(at(29, 11)), "tz": "Mars/Olympus"}
    # When an export names a zone that does not exist
    status, body, _ = world.call("POST", f"/devices/{DEVICE}/exports", body=json.dumps(window))
    # Then it is refused naming tz
    assert status == 400, body
    assert body["error"]["parameter"] == "tz"
