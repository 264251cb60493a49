"""Deletion jobs end, and say how (docs/deletion.md), on ``video-index local``: over HTTP with
the real deletion queue, worker, holds table and ingest.

* A window holding zero-length sensor and analysis files (the demo's sidecars) is deleted
  whole, the readings included, and an erasure of it after a delete, a re-upload, a
  withdrawal and an undelete finishes (the outside check that never finished).
* A job that cannot run ends ``failed`` with its reason, and its request stays in force:
  ingest deletes a re-upload into the window again (the documented choice).
"""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.local.test_deletion_local import (
    FIRST,
    JOB_TIMEOUT,
    call,
    cli,
    delete_window,
    versions_of,
)
from tests.support.local_stack import (
    EVENT_TIMEOUT,
    RunningStack,
    indexed,
    iso,
    poll,
    put_segments,
    start_local,
    stop,
)
from video_index.core.keys import SegmentKey, format_key, segment_id


def put_reading(stack: RunningStack, device: str, kind: str, start: datetime) -> str:
    """A zero-length ``kind`` file (a sensor reading, an analysis result) at ``start``."""
    body = json.dumps({"device": device, "kind": kind, "at": iso(start)}).encode()
    key = format_key(
        SegmentKey(
            kind=kind,
            device=device,
            start=start,
            duration_ms=0,
            id=segment_id(kind, device, start, 0, body),
            ext="json",
        )
    )
    stack.client("s3").put_object(Bucket=stack.ready["bucket"], Key=key, Body=body)
    return key


def seed(stack: RunningStack, device: str) -> tuple[list[str], list[str]]:
    """Six 10-second video segments and a sensor and an analysis reading every 10 s beside
    them: (video keys, reading keys)."""
    video = put_segments(stack, device, FIRST, 6)
    readings = [
        put_reading(stack, device, kind, FIRST + timedelta(seconds=10 * n, milliseconds=500))
        for n in range(6)
        for kind in ("sensor", "analysis")
    ]
    return video, readings


def listed_keys(stack: RunningStack, device: str) -> set[str]:
    window = {"from": iso(FIRST - timedelta(hours=1)), "to": iso(FIRST + timedelta(hours=1))}
    keys: set[str] = set()
    for kind in ("video", "sensor", "analysis"):
        _, page = stack.get(f"/devices/{device}/segments", limit="1000", kind=kind, **window)
        keys |= {item["key"] for item in page["items"]}
    return keys


def wait_listed(stack: RunningStack, device: str, expected: set[str]) -> None:
    poll(lambda: listed_keys(stack, device), lambda k: k == expected, "listed", EVENT_TIMEOUT)


def test_a_window_with_zero_length_readings_is_deleted_whole(local_stack: RunningStack) -> None:
    # Given video with zero-length sensor and analysis readings beside it, indexed
    device = "cam-sidecars"
    video, readings = seed(local_stack, device)
    wait_listed(local_stack, device, set(video + readings))
    # When the window of the first three video segments is deleted over HTTP
    job = delete_window(local_stack, device, FIRST, FIRST + timedelta(seconds=30))
    # Then the job is done and deleted the three segments and the six readings inside
    gone = set(video[:3] + readings[:6])
    assert (job["state"], job["deleted"], job["total"], job["error"]) == ("done", 9, 9, None)
    for key in video + readings:
        assert versions_of(local_stack, key) == ([True, False] if key in gone else [False])
    wait_listed(local_stack, device, set(video + readings) - gone)


def test_delete_reupload_withdraw_undelete_then_erase_finishes(local_stack: RunningStack) -> None:
    # Given a device's video and readings, indexed
    device = "cam-outside-check"
    video, readings = seed(local_stack, device)
    everything = set(video + readings)
    wait_listed(local_stack, device, everything)
    low, high = FIRST, FIRST + timedelta(minutes=1)
    # When the window is deleted, a segment uploaded again (and deleted again by ingest)
    job = delete_window(local_stack, device, low, high)
    assert job["deleted"] == len(everything)
    put_segments(local_stack, device, FIRST, 1)
    poll(
        lambda: versions_of(local_stack, video[0]),
        lambda versions: versions == [True, False, True, False],
        "the upload deleted again",
        EVENT_TIMEOUT,
    )
    # And the request withdrawn and the window undeleted
    status, withdrawn = call(local_stack, "DELETE", f"/deletions/{job['deletion_id']}")
    assert (status, withdrawn["state"]) == (200, "withdrawn")
    window = ("--device", device, "--from", iso(low), "--to", iso(high))
    undone = cli(local_stack, "undelete", *window, "--json")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    wait_listed(local_stack, device, everything)
    # Then erasing the window finishes, and leaves no version of any of its keys
    erased = delete_window(local_stack, device, low, high, erase="true")
    assert (erased["state"], erased["deleted"]) == ("done", len(everything))
    for key in everything:
        assert versions_of(local_stack, key) == []
    wait_listed(local_stack, device, set())


def job_of(stack: RunningStack, deletion_id: str) -> dict[str, Any]:
    _, ended = poll(
        lambda: call(stack, "GET", f"/deletions/{deletion_id}"),
        lambda answer: answer[1]["state"] not in ("queued", "running"),
        "the deletion job ends",
        JOB_TIMEOUT,
    )
    return dict(ended)


def lockable(stack: RunningStack) -> tuple[Any, str]:
    """The stack's bucket with S3 Object Lock enabled (S3 allows it on an empty bucket):
    its S3 client and name."""
    s3, bucket = stack.client("s3"), stack.ready["bucket"]
    s3.put_object_lock_configuration(
        Bucket=bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"}
    )
    return s3, bucket


def test_a_job_that_cannot_run_ends_failed_with_its_reason_and_stays_in_force(
    tmp_path: Path,
) -> None:
    stack = start_local(tmp_path / "failing", "--visibility-timeout", "2")
    try:
        # Given three indexed segments, one of them under an S3 Object Lock legal hold (a
        # compliance lock: S3 refuses to delete that version, whoever asks)
        device = "cam-locked"
        s3, bucket = lockable(stack)
        keys = put_segments(stack, device, FIRST, 3)
        wait_listed(stack, device, set(keys))
        locked = s3.head_object(Bucket=bucket, Key=keys[0])["VersionId"]
        s3.put_object_legal_hold(
            Bucket=bucket, Key=keys[0], VersionId=locked, LegalHold={"Status": "ON"}
        )
        # When an admin erases the window over HTTP
        low, high = FIRST, FIRST + timedelta(minutes=1)
        window = {"from": iso(low), "to": iso(high), "erase": "true"}
        status, job = call(stack, "DELETE", f"/devices/{device}/segments", **window)
        assert status == 202, job
        # Then its job ends failed (not running), naming the refused key and S3's reason
        failed = job_of(stack, job["deletion_id"])
        assert failed["state"] == "failed", failed
        assert keys[0] in failed["error"] and "AccessDenied" in failed["error"]
        # And its request stays in force: a segment uploaded into the window later is
        # erased again by ingest (docs/deletion.md, "When a job fails")
        (late,) = put_segments(stack, device, FIRST + timedelta(seconds=45), 1, 5_000)
        poll(lambda: versions_of(stack, late), lambda v: v == [], "erased again", EVENT_TIMEOUT)
        # When the lock is lifted and the job retried with the CLI
        s3.put_object_legal_hold(
            Bucket=bucket, Key=keys[0], VersionId=locked, LegalHold={"Status": "OFF"}
        )
        resumed = cli(stack, "delete", "--resume", job["deletion_id"])
        # Then it finishes from its checkpoint and nothing of the window is left
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert job_of(stack, job["deletion_id"])["state"] == "done"
        for key in keys:
            assert versions_of(stack, key) == []
    finally:
        stop(stack.process)


def test_the_cli_says_a_failed_job_leaves_its_request_in_force(tmp_path: Path) -> None:
    stack = start_local(tmp_path / "failing-cli", "--visibility-timeout", "2")
    try:
        # Given a segment under a legal hold
        device = "cam-locked-cli"
        s3, bucket = lockable(stack)
        (key,) = put_segments(stack, device, FIRST, 1)
        indexed(stack, device, 1)
        version = s3.head_object(Bucket=bucket, Key=key)["VersionId"]
        s3.put_object_legal_hold(
            Bucket=bucket, Key=key, VersionId=version, LegalHold={"Status": "ON"}
        )
        # When `video-index delete --erase` runs the job in its own process
        window = ("--device", device, "--from", iso(FIRST), "--to", iso(FIRST + timedelta(1)))
        ran = cli(stack, "delete", *window, "--erase")
        # Then it exits 1 (the job failed, not bad usage), saying why and what stays
        out = " ".join((ran.stdout + ran.stderr).split())
        assert ran.returncode == 1, out
        assert "failed" in out and "AccessDenied" in out
        assert "stays in force" in out and "--resume" in out and "--withdraw" in out
    finally:
        stop(stack.process)


# --- erase means gone ---------------------------------------------------------------------


def derived_versions(stack: RunningStack, prefix: str) -> list[str]:
    """Every version and delete marker under ``prefix``: their keys."""
    listed = stack.client("s3").list_object_versions(Bucket=stack.ready["bucket"], Prefix=prefix)
    return [v["Key"] for v in listed.get("Versions", []) + listed.get("DeleteMarkers", [])]


def fetch(stack: RunningStack, path: str) -> bytes:
    """GET as a browser does (redirects followed): the bytes; a 200 or the test fails."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{stack.ready['api']}{path}", timeout=30) as response:
        assert response.status == 200, path
        data: bytes = response.read()
    return data


def export(stack: RunningStack, device: str, low: datetime, high: datetime) -> dict[str, Any]:
    """``POST /devices/{device}/exports`` and wait until its job ends."""
    body = {"from": iso(low), "to": iso(high)}
    status, job, _ = stack.call("POST", f"/devices/{device}/exports", body)
    assert status == 202, job
    _, ended = poll(
        lambda: stack.get(f"/exports/{job['export_id']}"),
        lambda answer: answer[1]["state"] in ("done", "failed"),
        "the export ends",
        JOB_TIMEOUT,
    )
    return dict(ended)


def test_an_erasure_removes_renditions_pictures_and_exports_made_from_the_footage(
    local_stack: RunningStack,
) -> None:
    # Given four 2-second progressive MP4 files (played through renditions), indexed
    device = "cam-erase-derived"
    keys = put_segments(local_stack, device, FIRST, 4, 2_000, playable=True)
    wait_listed(local_stack, device, set(keys))
    # And for each, its rendition and a picture, made as a viewer makes them
    for n, key in enumerate(keys):
        name = key.rsplit("/", 1)[1]
        fetch(local_stack, f"/devices/{device}/media/{name}?part=init")  # the redirect followed
        at = iso(FIRST + timedelta(seconds=2 * n, milliseconds=500))
        fetch(local_stack, f"/devices/{device}/frame?t={at}&width=64")
        assert len(derived_versions(local_stack, f"renditions/{key}/")) >= 3, key
    # And an export of the first two files, and one of the last file only
    erased_export = export(local_stack, device, FIRST, FIRST + timedelta(seconds=4))
    kept_export = export(
        local_stack, device, FIRST + timedelta(seconds=6), FIRST + timedelta(seconds=8)
    )
    assert (erased_export["state"], kept_export["state"]) == ("done", "done")
    # When the window of the first three files is erased over HTTP
    job = delete_window(local_stack, device, FIRST, FIRST + timedelta(seconds=6), erase="true")
    assert job["deleted"] == 3
    # Then no version of anything made from them is left under renditions/<key>/
    for key in keys[:3]:
        assert derived_versions(local_stack, f"renditions/{key}/") == [], key
    # And the export made of them reads failed with the reason, its clip gone for good
    status, ended = local_stack.get(f"/exports/{erased_export['export_id']}")
    assert (status, ended["state"]) == (200, "failed"), ended
    assert job["deletion_id"] in ended["error"] and "erased" in ended["error"]
    assert derived_versions(local_stack, f"exports/{erased_export['export_id']}/clip.mp4") == []
    # And what was made from the file outside the window stays: its rendition, its export
    assert len(derived_versions(local_stack, f"renditions/{keys[3]}/")) >= 3
    status, kept = local_stack.get(f"/exports/{kept_export['export_id']}")
    assert (status, kept["state"]) == (200, "done"), kept
    assert derived_versions(local_stack, f"exports/{kept_export['export_id']}/clip.mp4")
