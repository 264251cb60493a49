"""The ``video-index`` command line: ``key check`` and ``key make`` (docs/keys.md, docs/local.md).

Commands are run through ``video_index.cli.main.main([...])``, the function the console
script calls, and judged by their exit code and what they print.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from video_index.cli.main import main
from video_index.core.keys import parse_key, segment_id
from worlds.media import clip, fmp4_with

VALID = "v1/video/cam-001/2026/11/30/12/20261130T120000.000Z_10000_3f9a1c2e7b4d5a60.mp4"
#: Folder hour 13, start 12:00: breaks the "folders agree with start" rule.
INVALID = "v1/video/cam-001/2026/11/30/13/20261130T120000.000Z_10000_3f9a1c2e7b4d5a60.mp4"
FOREIGN = "inventory/video-index-segments/video-index-daily/manifest.json"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich tables as wide as needed, so no key or reason is folded across lines."""
    monkeypatch.setenv("COLUMNS", "300")


# --- key check --------------------------------------------------------------------------


def test_key_check_valid_key_exits_0_and_shows_its_parts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the example key of docs/keys.md
    # When it is checked
    code = main(["key", "check", VALID])

    # Then it is reported valid with its parts, and the exit code is 0
    out = capsys.readouterr().out
    assert code == 0
    assert VALID in out
    assert "valid" in out
    assert "cam-001" in out
    assert "2026-11-30T12:00:00.000Z" in out
    assert "3f9a1c2e7b4d5a60" in out


def test_key_check_invalid_key_exits_1_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a valid key and a key whose hour folder disagrees with its start
    # When both are checked
    code = main(["key", "check", VALID, INVALID])

    # Then the invalid one is reported with the broken rule, and the exit code is 1
    out = capsys.readouterr().out
    assert code == 1
    assert "invalid" in out
    assert "disagree with start" in out


def test_key_check_foreign_key_is_not_an_error_but_not_indexed_either(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a key outside v1/ (an inventory report)
    # When it is checked
    code = main(["key", "check", FOREIGN])

    # Then it is called foreign, not invalid; exit 1 because it will not be indexed
    out = capsys.readouterr().out
    assert code == 1
    assert "foreign" in out
    assert "invalid" not in out


def test_key_check_json_gives_status_reason_and_segment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given one key of each fate
    # When they are checked with --json
    code = main(["key", "check", "--json", VALID, INVALID, FOREIGN])

    # Then stdout is JSON only: one entry per key, in order, with status and details
    results = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [r["key"] for r in results] == [VALID, INVALID, FOREIGN]
    assert [r["status"] for r in results] == ["valid", "invalid", "foreign"]
    assert results[0]["segment"] == {
        "kind": "video",
        "device": "cam-001",
        "start": "2026-11-30T12:00:00.000Z",
        "end": "2026-11-30T12:00:10.000Z",
        "duration_ms": 10000,
        "id": "3f9a1c2e7b4d5a60",
        "ext": "mp4",
    }
    assert "disagree with start" in results[1]["reason"]
    assert "reason" in results[2]


def test_key_check_json_all_valid_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    # Given only valid keys
    # When they are checked with --json
    code = main(["key", "check", "--json", VALID])

    # Then the exit code is 0
    assert code == 0
    assert json.loads(capsys.readouterr().out)[0]["status"] == "valid"


def test_key_check_shows_a_key_with_brackets_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a foreign key that looks like rich markup
    key = "tmp/[bold]upload[/bold].part"

    # When it is checked
    main(["key", "check", key])

    # Then it is printed as is, not interpreted
    assert key in capsys.readouterr().out


def test_key_check_without_keys_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # Given no key at all
    # When key check runs
    code = main(["key", "check"])

    # Then it is a usage error (exit 2) naming what is missing
    assert code == 2
    assert "KEY" in capsys.readouterr().err


# --- key make ---------------------------------------------------------------------------


@pytest.fixture
def segment_file(tmp_path: Path) -> Path:
    """A fragmented MP4 (what upload stores as it is)."""
    path = tmp_path / "segment-0001.mp4"
    path.write_bytes(fmp4_with(bytes(range(256)) * 4))
    return path


def make_args(path: Path, **overrides: str) -> list[str]:
    options = {
        "--kind": "video",
        "--device": "cam-001",
        "--start": "2026-11-30T12:00:00Z",
        "--duration-ms": "10000",
        **overrides,
    }
    args = ["key", "make"]
    for name, value in options.items():
        args += [name, value]
    return [*args, str(path)]


def test_key_make_prints_a_key_whose_id_is_the_segment_id_of_the_file(
    segment_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a segment file recorded by cam-001 at 12:00:00Z for 10 s
    # When the camera asks for its key
    code = main(make_args(segment_file))

    # Then one key is printed; it parses back to those facts, with the content-derived id
    out = capsys.readouterr().out
    assert code == 0
    key = out.strip()
    assert out.count("\n") == 1
    segment = parse_key(key)
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert (segment.kind, segment.device, segment.start, segment.duration_ms, segment.ext) == (
        "video",
        "cam-001",
        start,
        10000,
        "mp4",
    )
    assert segment.id == segment_id("video", "cam-001", start, 10000, segment_file.read_bytes())
    assert key.startswith("v1/video/cam-001/2026/11/30/12/20261130T120000.000Z_10000_")


def test_key_make_is_stable_and_converts_the_start_to_utc(
    segment_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the same file and instant, once in UTC and once with a +01:00 offset
    main(make_args(segment_file))
    in_utc = capsys.readouterr().out

    # When the key is made again with the offset form
    main(make_args(segment_file, **{"--start": "2026-11-30T13:00:00+01:00"}))

    # Then the key is the same: a retried upload lands on the same key
    assert capsys.readouterr().out == in_utc


def test_key_make_sensor_json_with_zero_duration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a sensor reading (a point in time) in a JSON file
    reading = tmp_path / "reading.json"
    reading.write_text('{"temperature_c": 21.5}')

    # When its key is made with duration 0
    code = main(make_args(reading, **{"--kind": "sensor", "--duration-ms": "0"}))

    # Then it is a valid sensor key with the json extension
    segment = parse_key(capsys.readouterr().out.strip())
    assert code == 0
    assert (segment.kind, segment.duration_ms, segment.ext) == ("sensor", 0, "json")


@pytest.mark.parametrize(
    ("overrides", "argument"),
    [
        ({"--start": "yesterday noon"}, "--start"),
        ({"--start": "2026-11-30T12:00:00"}, "--start"),  # no time zone
        ({"--start": "2026-11-30T12:00:00.000001Z"}, "--start"),  # finer than a millisecond
        ({"--device": "Cam_001"}, "--device"),
        ({"--device": "-cam"}, "--device"),
        ({"--kind": "audio"}, "--kind"),
        ({"--duration-ms": "ten"}, "--duration-ms"),
        ({"--duration-ms": "0"}, "--duration-ms"),  # video lasts at least 1 ms
        ({"--duration-ms": "3600001"}, "--duration-ms"),
        ({"--ext": "json"}, "--ext"),  # not a video extension
    ],
)
def test_key_make_bad_argument_exits_2_naming_it(
    segment_file: Path,
    capsys: pytest.CaptureFixture[str],
    overrides: dict[str, str],
    argument: str,
) -> None:
    # Given one bad argument
    # When key make runs
    code = main(make_args(segment_file, **overrides))

    # Then it is a usage error that names the argument, and no key is printed
    captured = capsys.readouterr()
    assert code == 2
    assert f"argument {argument}" in captured.err
    assert captured.out == ""


def test_key_make_missing_file_exits_2_naming_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a path with no file
    # When key make runs on it
    code = main(make_args(tmp_path / "missing.mp4"))

    # Then it is a usage error naming FILE
    assert code == 2
    assert "argument FILE" in capsys.readouterr().err


def test_key_make_file_extension_must_suit_the_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a video file (MPEG-TS) without an extension
    path = tmp_path / "segment"
    path.write_bytes(clip("ts"))

    # When key make runs without --ext, then with it
    without = main(make_args(path))
    err = capsys.readouterr().err
    with_ext = main(make_args(path, **{"--ext": "ts"}))

    # Then it first asks for --ext, then makes a .ts key
    assert without == 2
    assert "--ext" in err
    assert with_ext == 0
    assert capsys.readouterr().out.strip().endswith(".ts")


def test_key_make_refuses_what_upload_refuses_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a .mp4 file that is no MP4
    path = tmp_path / "segment.mp4"
    path.write_bytes(b"not a video at all")
    # When its key is asked for
    code = main(make_args(path))
    # Then it is refused like the upload would refuse it, naming FILE
    assert code == 2
    assert "argument FILE:" in capsys.readouterr().err


def test_key_make_of_a_progressive_mp4_is_the_key_upload_stores_it_under(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a progressive MP4 (which upload stores as fragmented MP4) and a bucket on moto
    path = tmp_path / "motion.mp4"
    path.write_bytes(clip("mp4"))
    monkeypatch.delenv("VIDEO_INDEX_BUCKET", raising=False)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="keys")
        # When key make runs, then the file is uploaded, then key make runs with --as-is
        assert main(make_args(path)) == 0
        made = capsys.readouterr()
        assert main(["upload", *make_args(path)[2:], "--bucket", "keys"]) == 0
        stored = [o["Key"] for o in s3.list_objects_v2(Bucket="keys")["Contents"]]
        capsys.readouterr()
        assert main([*make_args(path)[:-1], "--as-is", str(path)]) == 0
        as_is = capsys.readouterr().out.strip()
    # Then key make printed the very key the upload stored the file under, and said why
    # it is not the key of the file's own bytes (which --as-is prints)
    assert stored == [made.out.strip()]
    assert "progressive MP4" in made.err and "fragmented" in made.err
    start = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert parse_key(as_is).id == segment_id("video", "cam-001", start, 10000, path.read_bytes())
    assert as_is != stored[0]


# --- the CLI stays light --------------------------------------------------------------------


def test_importing_the_cli_loads_no_aws_sdk() -> None:
    # Given a fresh interpreter
    # When the CLI module is imported
    probe = (
        "import sys, video_index.cli.main; "
        "print(sorted(m for m in ('boto3', 'botocore', 'moto') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )

    # Then neither boto3 nor moto was imported, so no AWS configuration was read
    assert result.stdout.strip() == "[]"


def test_local_now_starts_the_api_clock_at_an_instant_and_runs_on() -> None:
    import argparse
    import time as real_time

    from video_index.cli.local import _instant, running_from

    # Given --now at a fixed instant (not today's date)
    moment = _instant("2026-10-26T09:00:00Z")
    clock = running_from(moment)
    # Then the clock reads that instant, and runs on at the real pace
    assert abs(clock() - moment.timestamp()) < 1
    offset = clock() - real_time.time()
    assert abs(clock() - real_time.time() - offset) < 0.01
    # And an instant without an offset is refused, naming what is missing
    with pytest.raises(argparse.ArgumentTypeError, match="no offset"):
        _instant("2026-10-26T09:00:00")
