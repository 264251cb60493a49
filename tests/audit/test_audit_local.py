"""The audit trail on a running ``video-index local`` (the session's stack), read with
``video-index audit`` — which asks the API, so that read is recorded as well."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.local_stack import RunningStack
from video_index.cli.main import main

DEVICE = "cam-audit-cli"
OTHER = "cam-audit-elsewhere"
WINDOW = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"


def _get(stack: RunningStack, path: str, user: str, role: str) -> int:
    headers = {"X-User": user, "X-Roles": role, "X-Devices": DEVICE}
    request = urllib.request.Request(stack.ready["api"] + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


def _now(stack: RunningStack) -> datetime:
    return datetime.fromtimestamp(time.time() + stack.ready["clock_offset_seconds"], UTC)


def _audit(capsys: pytest.CaptureFixture[str], stack: RunningStack, *extra: str) -> Any:
    now = _now(stack)
    window = [f"--from={(now - timedelta(hours=1)).isoformat()}"]
    window.append(f"--to={(now + timedelta(hours=1)).isoformat()}")
    capsys.readouterr()
    code = main(["audit", *window, *extra, "--json", "--ready-file", str(stack.ready_file)])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_cli_answers_the_local_stacks_audit(
    local_stack: RunningStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a viewer of one camera who lists its segments, and asks for another camera's
    assert _get(local_stack, f"/devices/{DEVICE}/segments?{WINDOW}", "vera", "viewer") == 200
    assert _get(local_stack, f"/devices/{OTHER}/playlist.m3u8?{WINDOW}", "vera", "viewer") == 404
    # When an admin runs `video-index audit` for the viewer
    began = _now(local_stack).strftime("%Y-%m-%dT%H:%M:%S")
    records = _audit(capsys, local_stack, "--principal=vera")
    # Then it answers exactly those two records
    assert sorted(
        (r["principal"], r["role"], r["action"], r["device"], r["from"], r["outcome"], r["status"])
        for r in records
    ) == [
        ("vera", "viewer", "playlist.read", OTHER, "2026-11-29T10:00:00.000Z", "denied", 404),
        ("vera", "viewer", "segments.list", DEVICE, "2026-11-29T10:00:00.000Z", "ok", 200),
    ]
    # And the admin's own read of the trail is in it on the next read (the local admin)
    reads = _audit(capsys, local_stack, "--action=audit.read", "--principal=local")
    # (the session's stack is shared: earlier tests' reads by the local admin are older)
    ours = [(r["action"], r["outcome"]) for r in reads if r["time"] >= began]
    assert ours[:1] == [("audit.read", "ok")]
