"""An operator's day on ``make demo``'s stack, through the command line only (issue 35).

``video-index local --demo`` runs in a subprocess as ``make demo`` runs it — no
``--ready-file``: it writes its ready file at the default place, which the test points at
a folder of its own (``VIDEO_INDEX_READY_FILE``) — with ``--now`` pinned, so every
expected answer below is the test's own, worked out from the demo's recordings
(:func:`video_index.local.demo.camera_day`) at 2026-10-26T09:00:00Z. Every command is a
subprocess of ``python -m video_index.cli`` given no target at all: each finds the stack by
itself. Each is judged by its exit code and what it prints: the normal commands, and each
mistake the issue lists answered as docs/cli.md says.

One stack serves the module; the day runs first, then the Ctrl-C tests. The time each
command takes is printed (``-s``), the figures of the issue's closing note.
"""

from __future__ import annotations

import getpass
import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_docs_tables import local_md_keys
from tests.support.local_stack import ROOT, child_env, stop
from video_index.core.keys import parse_key
from video_index.media.synthetic import synthetic_clip

NOW = "2026-10-26T09:00:00Z"
CLI = (sys.executable, "-m", "video_index.cli")
DEMO_TIMEOUT = 300.0
COMMAND_TIMEOUT = 180.0
USER = f"cli:{getpass.getuser()}"
#: A whole key on one line: what piped output must never split.
KEY = re.compile(
    r"v1/[a-z]+/[a-z0-9-]+/\d{4}/\d\d/\d\d/\d\d/\d{8}T\d{6}\.\d{3}Z_\d+_[0-9a-f]{16}\.[a-z0-9]+"
)
#: The demo's entrance camera's last video starts 10 s before the stack's clock at the
#: demo; it falls silent 300 s later. The day's silence checks need that not to have come.
ENTRANCE_LOUD_FOR = timedelta(seconds=280)


@dataclass
class Result:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def text(self) -> str:
        return self.out + self.err


@dataclass
class Demo:
    """The running demo stack and how to run commands against it, as an operator would."""

    process: subprocess.Popen[bytes]
    ready_file: Path
    env: dict[str, str]
    folder: Path
    started: float
    timings: list[tuple[str, float]] = field(default_factory=list)

    @property
    def ready(self) -> dict[str, Any]:
        return dict(json.loads(self.ready_file.read_text()))

    def stack_now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.ready["clock_offset_seconds"])

    def run(self, *args: str, env: dict[str, str] | None = None) -> Result:
        began = time.monotonic()
        done = subprocess.run(
            [*CLI, *args],
            cwd=ROOT,
            env=env or self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        seconds = time.monotonic() - began
        self.timings.append((" ".join(args[:3]), seconds))
        return Result(done.returncode, done.stdout, done.stderr, seconds)

    def json(self, *args: str) -> Any:
        result = self.run(*args, "--json")
        assert result.code == 0, result.text
        return json.loads(result.out)


def _dead_pid() -> int:
    """The pid of a process that has ended."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(ended.stdout)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    folder = tmp_path_factory.mktemp("operator-day")
    ready_file = folder / "run" / "ready.json"
    env = {**child_env(), "VIDEO_INDEX_READY_FILE": str(ready_file)}
    for name in (
        "VIDEO_INDEX_STACK",
        "VIDEO_INDEX_BUCKET",
        "VIDEO_INDEX_TABLE",
        "VIDEO_INDEX_HOLDS_TABLE",
        "VIDEO_INDEX_QUEUE_URL",
        "AWS_ENDPOINT_URL_S3",
        "COLUMNS",
    ):
        env.pop(name, None)
    # Given a stale ready file at the default place: a stack killed without its shutdown
    ready_file.parent.mkdir(parents=True)
    stale_pid = _dead_pid()
    ready_file.write_text(json.dumps({"pid": stale_pid, "api": "http://127.0.0.1:9"}))
    stale = subprocess.run(
        [*CLI, "status"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )
    # Then a command says it is stale, naming the process, and uses nothing (exit 2)
    assert stale.returncode == 2, stale.stdout + stale.stderr
    assert f"process {stale_pid}, which is no longer running" in stale.stdout + stale.stderr
    # When `make demo` runs (`video-index local --demo`, the clock pinned)
    log = folder / "demo.log"
    began = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*CLI, "local", "--demo", "--now", NOW],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + DEMO_TIMEOUT
    while (
        '"pid"' not in (ready_file.read_text() if ready_file.exists() else "")
        or json.loads(ready_file.read_text())["pid"] != process.pid
    ):
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, (
            f"no ready file in {DEMO_TIMEOUT:.0f} s:\n{log.read_text()}"
        )
        time.sleep(0.2)
    demo = Demo(process, ready_file, env, folder, began)
    demo.timings.append(("make demo: ready file written", time.monotonic() - began))
    # Then it replaced the stale file, saying so
    assert f"replacing the stale ready file {ready_file} of process {stale_pid}" in log.read_text()
    try:
        yield demo
    finally:
        stop(process, signal.SIGTERM)
        print("\n--- operator's day: seconds per command ---")
        for what, seconds in demo.timings:
            print(f"{seconds:7.1f}  {what}")
        print(f"{time.monotonic() - began:7.1f}  in all, start to stop")
    # And at shutdown its ready file is gone
    assert not ready_file.exists()


# --- the day --------------------------------------------------------------------------------


def test_an_operators_day_through_the_command_line(demo: Demo) -> None:
    began = time.monotonic()
    _morning_look(demo)
    _mistakes_are_answered_plainly(demo)
    _holds_and_annotations_name_who(demo)
    _deleting_and_bringing_back(demo)
    _retiring_a_camera(demo)
    _keys_uploads_and_cameras(demo)
    _rebuild_says_what_it_waits_for(demo)
    demo.timings.append(("the day's commands, in all", time.monotonic() - began))


def _morning_look(demo: Demo) -> None:
    # The ready file holds the keys docs/local.md explains, written by the demo's process
    assert set(demo.ready) == local_md_keys()
    assert demo.ready["pid"] == demo.process.pid
    assert demo.stack_now() < datetime(2026, 10, 26, 9, tzinfo=UTC) + ENTRANCE_LOUD_FOR, (
        "the day must start within 280 s of the demo's clock (the entrance camera goes silent)"
    )
    # `status` alone finds the stack: healthy; silent are the cameras that upload nothing
    status = demo.run("status")
    assert status.code == 0, status.text
    assert "g1" in status.out
    report = demo.json("status")
    assert {s["device"]: s["silent_since"] for s in report["silent"]} == {
        "cam-parking": "2026-10-26T00:15:00.000+00:00",  # its analysis, the later of its kinds
        "cam-dock": "2026-10-26T08:20:00.000+00:00",  # last motion clip 08:15 + 300 s
    }
    # `devices`: the entrance camera uploads (recent video), its sensor alone is silent
    devices = {d["device"]: d for d in demo.json("devices")}
    assert sorted(devices) == ["cam-dock", "cam-entrance", "cam-parking"]
    entrance = devices["cam-entrance"]
    assert entrance["silent_since"] is None
    assert entrance["kinds"]["sensor"]["silent_since"] == "2026-10-25T08:18:00.000Z"
    assert entrance["kinds"]["sensor"]["segments"] == 8
    assert entrance["kinds"]["video"]["retention_days"] == 30
    table = demo.run("devices")
    assert table.code == 0
    # And piped, no row is wrapped: a device's state stands on its own line, whole
    assert any(
        "cam-parking" in line and "silent since 2026-10-26T00:15:00.000Z" in line
        for line in table.out.splitlines()
    )
    assert any(
        "cam-entrance" in line and "uploading; sensor silent since 2026-10-25T08:18:00.000Z" in line
        for line in table.out.splitlines()
    )

    # `calendar`: the parking camera recorded across UTC midnight, 25 → 26 October; in
    # Berlin (CET since the 25th, 01:00 UTC) 23:59 UTC is already the 26th
    def days(*args: str) -> set[str]:
        return {d["date"] for d in demo.json("calendar", *args)["days"] if d["has_video"]}

    assert days("cam-parking") == {"2026-10-25", "2026-10-26"}  # this month, in UTC
    assert days("cam-parking", "--tz", "Europe/Berlin", "--month", "2026-10") == {"2026-10-26"}
    assert days("cam-entrance", "--month", "2026-10") == {"2026-10-24", "2026-10-25", "2026-10-26"}
    grid = demo.run("calendar", "cam-entrance", "--tz", "Europe/Berlin")
    assert grid.code == 0 and "cam-entrance — October 2026 (Europe/Berlin)" in grid.out


def _mistakes_are_answered_plainly(demo: Demo) -> None:
    backwards = ["--from", "2026-10-26T09:00:00Z", "--to", "2026-10-26T08:00:00Z"]
    # A window the wrong way round: refused by every command, naming --to, nothing recorded
    for command in (
        ["export"],
        ["annotate", "list"],
        ["hold", "list"],
        ["hold", "add", "--reason", "x"],
        ["delete"],
        ["undelete"],
    ):
        result = demo.run(*command, "--device", "cam-entrance", *backwards)
        assert result.code == 2, (command, result.text)
        assert "argument --to: 2026-10-26T08:00:00Z is not later than --from" in result.err, command
        assert f"usage: video-index {' '.join(command[:2]).split(' --')[0]}" in result.err
    # A missing --to names --to alone
    missing = demo.run("delete", "--device", "cam-entrance", "--from", "2026-10-26T08:00:00Z")
    assert missing.code == 2
    assert "the following arguments are required: --to\n" in missing.err
    # A mistyped device: refused, naming the device it resembles and how to act anyway
    for command in (
        ["hold", "add", "--reason", "case 7"],
        ["delete", "--dry-run"],
        ["annotate", "add"],
    ):
        window = ["--from", "2026-10-26T08:00:00Z", "--to", "2026-10-26T08:10:00Z"]
        typo = demo.run(*command, "--device", "cam-entrnce", *window)
        assert typo.code == 2, (command, typo.text)
        assert (
            "--device: no device 'cam-entrnce' in the read model: did you mean cam-entrance?"
            in typo.out
        )
        assert "add --new-device" in typo.out
    never = demo.run("device", "retire", "cam-nothere")
    assert (
        never.code == 2
        and "no device 'cam-nothere' in the read model (it has no footage)." in never.out
    )
    unknown = demo.run("calendar", "cam-entrnce")
    assert unknown.code == 2 and "did you mean cam-entrance?" in unknown.out
    assert "--new-device" not in unknown.out  # a calendar of a device without footage shows nothing
    # The export's refusal recorded no job
    listed = _bucket_keys(demo, "exports/")
    assert listed == [], listed
    # Help is plain text, every option explained
    helped = demo.run("export", "--help")
    assert helped.code == 0 and "``" not in helped.out and ":mod:" not in helped.out
    assert "also download the clip to this file" in helped.out
    # A second `video-index local` does not take the running stack's place
    second = demo.run("local")
    assert second.code == 2
    assert f"another `video-index local` (process {demo.process.pid}) is running" in second.out


def _holds_and_annotations_name_who(demo: Demo) -> None:
    window = ["--from", "2026-10-26T08:00:00Z", "--to", "2026-10-26T09:00:00Z"]
    hold = demo.json("hold", "add", "--device", "cam-entrance", *window, "--reason", "case 7")
    # A camera without footage yet, deliberately
    ahead = demo.run(
        "hold", "add", "--device", "cam-gate", "--new-device", *window, "--reason", "new gate"
    )
    assert ahead.code == 0, ahead.text
    note = demo.json(
        "annotate",
        "add",
        "--device",
        "cam-entrance",
        *window,
        "--description",
        "person at the door",
    )
    # One way of naming who made a change from the command line
    assert hold["created_by"] == note["updated_by"] == USER
    listed = demo.run("annotate", "list", "--device", "cam-entrance", *window)
    assert listed.code == 0 and USER in listed.out and "person at the door" in listed.out
    holds = demo.run("hold", "list", "--device", "cam-entrance", *window)
    assert holds.code == 0 and hold["hold_id"] in holds.out and USER in holds.out


def _deleting_and_bringing_back(demo: Demo) -> None:
    # The entrance camera's first 30 s of the 24th: video files at 08:00:00, :10 and :20
    window = [
        "--device",
        "cam-entrance",
        "--from",
        "2026-10-24T08:00:00Z",
        "--to",
        "2026-10-24T08:00:30Z",
        "--kind",
        "video",
    ]
    dry = demo.run("delete", *window, "--dry-run")
    assert (
        dry.code == 0
        and "dry run: 3 keys" in dry.out
        and "would be deleted; nothing recorded" in dry.out
    )
    deleted = demo.run("delete", *window)
    assert deleted.code == 0, deleted.text
    (deletion_id,) = re.findall(r"deletion ([0-9a-f]+) recorded", deleted.out)
    assert f"deletion {deletion_id}: done, 3 keys deleted" in deleted.out
    # A dry run of an undelete that would withdraw says so, in the conditional
    would = demo.run("undelete", *window, "--dry-run", "--withdraw")
    assert would.code == 0, would.text
    assert f"deletion {deletion_id} would be withdrawn" in would.out
    assert "3 keys would come back" in would.out
    assert all(
        KEY.fullmatch(line.strip()[2:])
        for line in would.out.splitlines()
        if line.startswith("  + ")
    )
    # And withdrew nothing: an undelete without --withdraw is still refused
    refused = demo.run("undelete", *window)
    assert refused.code == 1 and deletion_id in refused.out and "--withdraw" in refused.out
    # A reconcile on the local stack needs no --source; a dry run reads in the conditional
    reconcile = demo.run("reconcile", "--dry-run")
    assert reconcile.code == 0, reconcile.text
    assert "(dry run: what it would do; nothing was written)" in reconcile.out
    assert re.search(r"│ source\s+│\s+list │", reconcile.out)
    assert "objects in a deletion window it would delete again" in reconcile.out
    assert "deleted again" not in reconcile.out.replace("would delete again", "")
    back = demo.run("undelete", *window, "--withdraw")
    assert (
        back.code == 0
        and f"deletion {deletion_id} withdrawn" in back.out
        and "3 keys came back" in back.out
    )


def _retiring_a_camera(demo: Demo) -> None:
    retired = demo.run("device", "retire", "cam-dock")
    assert retired.code == 0 and "cam-dock: retired" in retired.out
    assert [s["device"] for s in demo.json("status")["silent"]] == ["cam-parking"]
    assert demo.run("device", "unretire", "cam-dock").code == 0


def _keys_uploads_and_cameras(demo: Demo) -> None:
    # A progressive MP4 of the entrance camera: `key make` prints the key `upload` uses
    start = datetime(2026, 10, 26, 8, 30, tzinfo=UTC)
    clip = demo.folder / "motion.mp4"
    clip.write_bytes(synthetic_clip(seconds=1, container="mp4", label="motion", start=start))
    facts = [
        "--kind",
        "video",
        "--device",
        "cam-entrance",
        "--start",
        "2026-10-26T08:30:00Z",
        "--duration-ms",
        "1000",
    ]
    made = demo.run("key", "make", *facts, str(clip))
    assert made.code == 0 and "progressive MP4" in made.err
    uploaded = demo.run("upload", str(clip), *facts)  # no bucket, no endpoint: the stack's
    assert uploaded.code == 0, uploaded.text
    assert KEY.findall(uploaded.out) == [made.out.strip()]
    assert parse_key(made.out.strip()).device == "cam-entrance"
    # `camera list` is a table; --json is the only way to get JSON
    cameras = demo.run("camera", "list")
    assert (
        cameras.code == 0
        and "0 cameras" in cameras.out
        and not cameras.out.lstrip().startswith("[")
    )
    assert demo.json("camera", "list") == []


def _rebuild_says_what_it_waits_for(demo: Demo) -> None:
    rebuilt = demo.run("rebuild", "start")
    assert rebuilt.code == 0, rebuilt.text
    assert (
        "waiting up to" in rebuilt.out
        and "ingest batches that began before the rebuild must end (settle)" in rebuilt.out
    )
    assert re.search(r"waited \d+\.\d s: ingest batches", rebuilt.out)
    assert "waiting 11 s: readers must let go of the old generation" in rebuilt.out
    assert "generation 2 serves (rebuilt); generation 1 dropped" in rebuilt.out
    demo.timings.append(("  (rebuild start on the demo's stack)", rebuilt.seconds))
    assert demo.json("status")["read_model"]["generation"] == 2


def _s3(demo: Demo) -> Any:
    import boto3
    from botocore.config import Config

    ready = demo.ready
    return boto3.client(
        "s3",
        endpoint_url=ready["s3"],
        region_name=ready["region"],
        aws_access_key_id=ready["aws_access_key_id"],
        aws_secret_access_key=ready["aws_secret_access_key"],
        config=Config(proxies={}, s3={"addressing_style": "path"}),
    )


def _bucket_keys(demo: Demo, prefix: str) -> list[str]:
    listed = _s3(demo).list_objects_v2(Bucket=demo.ready["bucket"], Prefix=prefix)
    return [o["Key"] for o in listed.get("Contents", [])]


# --- Ctrl-C -----------------------------------------------------------------------------------


class Lines:
    """A command's stdout, line by line as it comes (a thread reads the pipe)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stream = process.stdout
        threading.Thread(
            target=lambda: [self.lines.put(line) for line in stream], daemon=True
        ).start()

    def until(self, pattern: str, timeout: float = COMMAND_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no line matching {pattern!r}; saw:\n{''.join(self.seen)}"
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return line


def _interrupted(demo: Demo, args: list[str], when: str) -> tuple[int, str, str]:
    """Run a command, send it SIGINT (Ctrl-C) once it prints a line matching ``when``:
    (exit code, stdout seen, stderr)."""
    # Started as a terminal starts a command in the foreground: with Ctrl-C at its default.
    # A child inherits an ignored SIGINT, and a pytest-xdist worker was seen holding it
    # ignored (SIG_IGN): the command then never saw the Ctrl-C and ran to its end.
    process = subprocess.Popen(
        ["env", "--default-signal=INT", *CLI, *args],
        cwd=ROOT,
        env=demo.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(process)
    try:
        lines.until(when)
        process.send_signal(signal.SIGINT)
        code = process.wait(COMMAND_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None
    return code, "".join(lines.seen), process.stderr.read()


def test_ctrl_c_during_rebuild_start_says_one_line_exits_130_and_status_reads_interrupted(
    demo: Demo,
) -> None:
    before = demo.json("status")["read_model"]["generation"]
    # When Ctrl-C comes while the rebuild waits (a settle made long on purpose)
    code, _, err = _interrupted(
        demo, ["rebuild", "start", "--settle-seconds", "120"], r"^waiting 1\d\d s: ingest batches"
    )
    # Then one line on stderr, no traceback, exit 130
    assert code == 130
    assert err.strip().splitlines() == [
        "rebuild interrupted: stopped by Ctrl-C before the switch: "
        f"generation {before} keeps serving, what was built is dropped"
    ]
    # And the state says interrupted, never a failure; the current generation serves
    rebuild = demo.json("status")["read_model"]["rebuild"]
    assert rebuild["phase"] == "interrupted" and "failed" not in rebuild.get("error", "")
    shown = demo.run("rebuild", "status")
    assert shown.code == 0 and shown.out.startswith(
        f"phase interrupted; generation {before} serves"
    )
    assert demo.json("status")["read_model"]["building"] is None


def test_ctrl_c_during_export_says_one_line_exits_130_and_the_job_reads_interrupted(
    demo: Demo,
) -> None:
    # Given 300 files of a camera (one clip, 1 s each) uploaded as a directory by the CLI
    folder = demo.folder / "cam-export"
    folder.mkdir(exist_ok=True)
    first = datetime(2026, 10, 26, 6, tzinfo=UTC)
    clip = synthetic_clip(seconds=1, container="fmp4", label="export")
    for n in range(300):
        (folder / f"{first + timedelta(seconds=n):%Y%m%dT%H%M%S}.000Z_1000.mp4").write_bytes(clip)
    uploaded = demo.run("upload", str(folder), "--device", "cam-export", "--kind", "video")
    assert uploaded.code == 0 and "300 files: 300 uploaded" in uploaded.out, uploaded.text[-2000:]
    _until_indexed(demo, "cam-export", 300)
    # When Ctrl-C comes while the files are being joined into the clip
    window = ["--from", "2026-10-26T06:00:00Z", "--to", "2026-10-26T06:05:00Z"]
    began = time.monotonic()
    code, out, err = _interrupted(
        demo, ["export", "--device", "cam-export", *window], r"^stream copy: 1/300 files"
    )
    demo.timings.append(("  (export of 300 files, until Ctrl-C)", time.monotonic() - began))
    # Then one line on stderr naming the job and its state, exit 130, no clip
    (export_id,) = re.findall(r"^export ([0-9a-f]{32}): 300 files", out, re.M)
    assert code == 130
    assert err.strip().splitlines() == [
        f"export {export_id} interrupted: stopped by Ctrl-C, no clip was made"
    ]
    job = json.loads(_object(demo, f"exports/{export_id}/job.json"))
    assert (job["state"], job["error"]) == ("interrupted", "stopped by Ctrl-C")
    assert _bucket_keys(demo, f"exports/{export_id}/") == [f"exports/{export_id}/job.json"]


def _until_indexed(demo: Demo, device: str, count: int) -> None:
    deadline = time.monotonic() + 120
    while True:
        found = {d["device"]: d for d in demo.json("devices")}.get(device)
        if found and found["kinds"].get("video", {}).get("segments") == count:
            return
        assert time.monotonic() < deadline, f"{device} not indexed: {found}"
        time.sleep(0.5)


def _object(demo: Demo, key: str) -> str:
    return str(_s3(demo).get_object(Bucket=demo.ready["bucket"], Key=key)["Body"].read().decode())
