"""Deletion end to end on ``video-index local`` (docs/deletion.md): over HTTP, with the
real deletion queue and worker, S3 events (the versioned local bucket), ingest, and the
``undelete`` / ``restore`` / ``rebuild`` commands as other programs.

Each test uses devices of its own on the session stack; the restore test empties a
bucket, so it runs on a stack of its own.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.support.local_stack import (
    CLI,
    EVENT_TIMEOUT,
    ROOT,
    RunningStack,
    child_env,
    iso,
    poll,
    put_segments,
    queue_depth,
    start_local,
    stop,
)

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
#: Two days ago, on the hour: older than the API's fresh window (answers come from the
#: read model, which follows the delete events).
FIRST = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=2)
JOB_TIMEOUT = 60.0


def call(stack: RunningStack, method: str, path: str, **query: str) -> tuple[int, Any]:
    url = f"{stack.ready['api']}{path}" + (f"?{urlencode(query)}" if query else "")
    request = urllib.request.Request(url, method=method)
    try:
        with _OPENER.open(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def state_of(stack: RunningStack, device: str) -> dict[str, Any]:
    """What the API answers about ``device``: its segments, totals and month calendar."""
    window = {"from": iso(FIRST - timedelta(hours=2)), "to": iso(FIRST + timedelta(hours=2))}
    _, segments = stack.get(f"/devices/{device}/segments", limit="1000", **window)
    _, totals = stack.get(f"/devices/{device}")
    _, calendar = stack.get(f"/devices/{device}/calendar", month=f"{FIRST:%Y-%m}", tz="UTC")
    return {"segments": segments["items"], "totals": _footage(totals), "calendar": calendar}


def _footage(totals: dict[str, Any]) -> dict[str, Any]:
    """A device's totals without its clock: the clock counts every file S3 received
    (docs/operations.md#camera-clocks), and a restored copy is one more arrival, so it is
    the history of uploads rather than the footage there is."""
    kinds = {
        kind: {k: v for k, v in numbers.items() if k != "clock"}
        for kind, numbers in totals.get("kinds", {}).items()
    }
    return {k: v for k, v in totals.items() if k != "clock"} | {"kinds": kinds}


def indexed(stack: RunningStack, device: str, count: int) -> dict[str, Any]:
    return poll(
        lambda: state_of(stack, device),
        lambda state: (
            len(state["segments"]) == count
            and state["totals"].get("kinds", {}).get("video", {}).get("segments", 0) == count
        ),
        f"{count} segments of {device} indexed",
        EVENT_TIMEOUT,
    )


def delete_window(
    stack: RunningStack, device: str, low: datetime, high: datetime, **options: str
) -> dict[str, Any]:
    """``DELETE /devices/{device}/segments`` and wait until its job is done."""
    window = {"from": iso(low), "to": iso(high)}
    status, job = call(stack, "DELETE", f"/devices/{device}/segments", **window, **options)
    assert status == 202, job
    _, done = poll(
        lambda: call(stack, "GET", f"/deletions/{job['deletion_id']}"),
        lambda answer: answer[1]["state"] not in ("queued", "running"),
        "the deletion job ends",
        JOB_TIMEOUT,
    )
    assert done["state"] == "done", done
    return dict(done)


def versions_of(stack: RunningStack, key: str) -> list[bool]:
    """The key's versions, newest first: True for a delete marker."""
    listed = stack.client("s3").list_object_versions(Bucket=stack.ready["bucket"], Prefix=key)
    entries = [(v["LastModified"], v["IsLatest"], False) for v in listed.get("Versions", [])]
    entries += [(m["LastModified"], m["IsLatest"], True) for m in listed.get("DeleteMarkers", [])]
    return [marker for _, _, marker in sorted(entries, key=lambda e: (not e[1], -e[0].timestamp()))]


def cli(stack: RunningStack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args, "--ready-file", str(stack.ready_file)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _expected(before: dict[str, Any], gone: set[str]) -> tuple[int, int, int]:
    """Segments, bytes and video ms of ``before`` without the keys in ``gone``."""
    kept = [s for s in before["segments"] if s["key"] not in gone]
    return len(kept), sum(s["size"] for s in kept), sum(s["duration_ms"] for s in kept)


def test_deleting_a_window_over_http_deletes_it_and_the_api_follows_exactly(
    local_stack: RunningStack,
) -> None:
    # Given twelve 10-second segments of a device, indexed
    device = "cam-delete-http"
    keys = put_segments(local_stack, device, FIRST, 12)
    before = indexed(local_stack, device, 12)
    # When the window from the 3rd segment's middle to the 8th's start is deleted
    job = delete_window(
        local_stack, device, FIRST + timedelta(seconds=25), FIRST + timedelta(seconds=70)
    )
    gone = set(keys[2:7])
    # Then the job deleted exactly the five segments that meet the window
    assert (job["deleted"], job["remaining"], job["total"]) == (5, 0, 5)
    for key in keys:
        assert versions_of(local_stack, key) == ([True, False] if key in gone else [False])
    # And the API follows: segments, totals and calendar exactly without them
    count, size, video_ms = _expected(before, gone)
    after = indexed(local_stack, device, count)
    assert [s["key"] for s in after["segments"]] == [k for k in keys if k not in gone]
    assert after["totals"]["kinds"]["video"]["bytes"] == size
    assert after["totals"]["kinds"]["video"]["duration_ms"] == video_ms
    (day,) = [d for d in after["calendar"]["days"] if d["date"] == f"{FIRST:%Y-%m-%d}"]
    assert (day["segments"], day["bytes"], day["video_ms"]) == (count, size, video_ms)
    # And deleting the same window again changes nothing
    again = delete_window(
        local_stack, device, FIRST + timedelta(seconds=25), FIRST + timedelta(seconds=70)
    )
    assert (again["deleted"], again["total"]) == (0, 0)
    for key in gone:
        assert versions_of(local_stack, key) == [True, False]
    assert state_of(local_stack, device) == after


def test_an_erasure_leaves_no_version_and_the_api_follows(local_stack: RunningStack) -> None:
    device = "cam-erase-http"
    keys = put_segments(local_stack, device, FIRST, 6)
    indexed(local_stack, device, 6)
    job = delete_window(local_stack, device, FIRST, FIRST + timedelta(seconds=30), erase="true")
    assert (job["erase"], job["deleted"], job["versions_deleted"]) == (True, 3, 3)
    for key in keys[:3]:
        assert versions_of(local_stack, key) == []
    assert [s["key"] for s in indexed(local_stack, device, 3)["segments"]] == keys[3:]


def test_a_deleted_segment_uploaded_again_never_shows_up_until_the_request_is_withdrawn(
    local_stack: RunningStack,
) -> None:
    # Given a deleted window
    device = "cam-resurrect"
    (key,) = put_segments(local_stack, device, FIRST, 1)
    indexed(local_stack, device, 1)
    job = delete_window(local_stack, device, FIRST, FIRST + timedelta(minutes=1))
    indexed(local_stack, device, 0)
    # When the camera uploads the same segment again (a retried upload)
    put_segments(local_stack, device, FIRST, 1)
    # Then it is deleted again, and the API never shows it meanwhile
    deadline = time.monotonic() + EVENT_TIMEOUT
    while versions_of(local_stack, key)[0] is not True or time.monotonic() < deadline - 25:
        assert state_of(local_stack, device)["segments"] == []
        assert time.monotonic() < deadline, "the upload was not deleted again"
        time.sleep(0.25)
    assert versions_of(local_stack, key) == [True, False, True, False]
    assert state_of(local_stack, device)["segments"] == []
    # When the request is withdrawn, an upload stays
    status, withdrawn = call(local_stack, "DELETE", f"/deletions/{job['deletion_id']}")
    assert status == 200 and withdrawn["state"] == "withdrawn"
    put_segments(local_stack, device, FIRST, 1)
    indexed(local_stack, device, 1)
    # (the positive signal that nothing is left to delete it: every event consumed, so no
    # delivery of the upload's, first or repeated, is still to come)
    poll(
        lambda: queue_depth(local_stack, "queue_url"),
        lambda depth: depth == 0,
        "the ingest queue drained",
        EVENT_TIMEOUT,
    )
    assert versions_of(local_stack, key)[0] is False


def test_undelete_after_a_delete_brings_back_exactly_what_was_there(
    local_stack: RunningStack,
) -> None:
    # Given eight indexed segments, five of them deleted over HTTP
    device = "cam-undelete"
    put_segments(local_stack, device, FIRST, 8)
    before = indexed(local_stack, device, 8)
    low, high = FIRST + timedelta(seconds=20), FIRST + timedelta(seconds=70)
    delete_window(local_stack, device, low, high)
    indexed(local_stack, device, 3)
    # When undelete is asked while the request is in force, it refuses (exit 1)
    window = ("--device", device, "--from", iso(low), "--to", iso(high))
    refused = cli(local_stack, "undelete", *window, "--json")
    assert refused.returncode == 1 and "withdraw" in refused.stdout
    # When it is told to withdraw the request
    done = cli(local_stack, "undelete", *window, "--withdraw", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert len(report["restored"]) == 5 and report["not_restorable"] == []
    # Then the API shows exactly what was there before
    poll(lambda: state_of(local_stack, device), lambda s: s == before, "undeleted", EVENT_TIMEOUT)


def test_undelete_of_an_erased_window_reports_nothing_restorable(
    local_stack: RunningStack,
) -> None:
    device = "cam-undelete-erased"
    put_segments(local_stack, device, FIRST, 4)
    indexed(local_stack, device, 4)
    low, high = FIRST, FIRST + timedelta(seconds=20)
    delete_window(local_stack, device, low, high, erase="true")
    window = ("--device", device, "--from", iso(low), "--to", iso(high))
    done = cli(local_stack, "undelete", *window, "--withdraw", "--json")
    report = json.loads(done.stdout)
    assert report["restored"] == [] and len(report["withdrawn"]) == 1
    assert len(indexed(local_stack, device, 2)["segments"]) == 2


def test_removing_a_delete_marker_brings_a_segment_back_locally_too(
    local_stack: RunningStack,
) -> None:
    # Given a segment deleted with a plain delete (a delete marker)
    device = "cam-marker"
    (key,) = put_segments(local_stack, device, FIRST, 1)
    indexed(local_stack, device, 1)
    s3, bucket = local_stack.client("s3"), local_stack.ready["bucket"]
    marker = s3.delete_object(Bucket=bucket, Key=key)["VersionId"]
    indexed(local_stack, device, 0)
    # When the marker itself is removed (S3 notifies ObjectRemoved:Delete; moto does not,
    # the local stack sends it)
    s3.delete_object(Bucket=bucket, Key=key, VersionId=marker)
    # Then the read model follows
    indexed(local_stack, device, 1)


def test_restore_from_a_replica_and_rebuild_gives_back_the_api_of_before(
    tmp_path: Path,
) -> None:
    stack = start_local(tmp_path / "restore", "--visibility-timeout", "2")
    try:
        # Given two devices indexed, and a replica holding what replication copied
        devices = ("cam-restore-a", "cam-restore-b")
        for device in devices:
            put_segments(stack, device, FIRST, 5)
        before = {device: indexed(stack, device, 5) for device in devices}
        s3, bucket = stack.client("s3"), stack.ready["bucket"]
        replica = "video-index-local-replica"
        s3.create_bucket(Bucket=replica)
        s3.put_bucket_versioning(Bucket=replica, VersioningConfiguration={"Status": "Enabled"})
        for obj in s3.list_objects_v2(Bucket=bucket, Prefix="v1/")["Contents"]:
            s3.copy_object(
                Bucket=replica, Key=obj["Key"], CopySource={"Bucket": bucket, "Key": obj["Key"]}
            )
        # When the bucket is emptied (every version), and the read model follows
        listed = s3.list_object_versions(Bucket=bucket)["Versions"]
        doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in listed]
        s3.delete_objects(Bucket=bucket, Delete={"Objects": doomed})
        for device in devices:
            indexed(stack, device, 0)
        # And restore copies back from the replica, then a rebuild re-projects
        restored = cli(stack, "restore", "--from-bucket", replica, "--json")
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert json.loads(restored.stdout)["copied"] == 10
        rebuilt = cli(
            stack, "rebuild", "start", "--settle-seconds", "1", "--drop-grace-seconds", "0"
        )
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
        # Then the API equals what it was before the loss
        for device in devices:
            poll(
                lambda d=device: state_of(stack, d),  # type: ignore[misc]
                lambda state, d=device: state == before[d],  # type: ignore[misc]
                f"{device} restored",
                EVENT_TIMEOUT,
            )
        # And a second restore copies nothing
        again = json.loads(cli(stack, "restore", "--from-bucket", replica, "--json").stdout)
        assert (again["copied"], again["identical"]) == (0, 10)
    finally:
        stop(stack.process)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_an_unknown_deletion_is_404(local_stack: RunningStack, method: str) -> None:
    assert call(local_stack, method, "/deletions/" + "f" * 32)[0] == 404
