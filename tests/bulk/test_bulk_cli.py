"""``video-index restore --stack`` and ``video-index delete --stack``: each starts its
machine, follows its map's units and reports (a fake stack: no AWS)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console

from video_index.aws.executions import Execution
from video_index.cli import bulk as bulk_cli
from video_index.cli import follow as follow_cli
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE
from video_index.cli.main import main


@dataclass
class FakeMachine:
    outputs: list[dict[str, Any]]
    started: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0

    def start(self, name: str, payload: dict[str, Any]) -> Execution:
        self.started.append(payload)
        return Execution(arn=f"arn:exec:{name}", name=name, status="RUNNING")

    def describe(self, arn: str) -> Execution:
        self.polls += 1
        if self.polls < 3:
            return Execution(arn=arn, name="x", status="RUNNING")
        return Execution(arn=arn, name="x", status="SUCCEEDED", output=self.outputs[0])


class FakeStepFunctions:
    def __init__(self) -> None:
        self.calls = 0

    def list_map_runs(self, executionArn: str) -> dict[str, Any]:
        self.calls += 1
        return {"mapRuns": [{"mapRunArn": "arn:map"}]} if self.calls > 1 else {"mapRuns": []}

    def describe_map_run(self, mapRunArn: str) -> dict[str, Any]:
        return {"itemCounts": {"succeeded": 3, "failed": 1, "total": 8}}


@dataclass
class FakeStack:
    machine: FakeMachine
    stepfunctions: FakeStepFunctions = field(default_factory=FakeStepFunctions)
    machines: list[str] = field(default_factory=list)

    def executions(self, output: str) -> FakeMachine:
        self.machines.append(output)
        return self.machine

    def client(self, service: str) -> FakeStepFunctions:
        return self.stepfunctions


def _run(monkeypatch: pytest.MonkeyPatch, report: dict[str, Any]) -> tuple[int, str, FakeStack]:
    stack = FakeStack(FakeMachine([report]))
    monkeypatch.setattr(bulk_cli, "open_stack", lambda name: stack)
    monkeypatch.setattr(follow_cli, "pause", lambda seconds: None)
    console = Console(record=True, width=200)
    args = argparse.Namespace(
        stack="vi", from_bucket="replica", manifest=None, dry_run=False, interval=0.0
    )
    code = bulk_cli.restore_deployed(args, console)
    assert stack.machines == ["RestoreStateMachineArn"]
    return code, console.export_text(), stack


def test_restore_on_the_stack_follows_units_and_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    report = {"copied": 1200, "bytes_copied": 9, "identical": 30, "withheld": 4, "held": 1}
    code, text, stack = _run(monkeypatch, {**report, "failed_batches": 0})
    assert code == EXIT_OK
    assert stack.machine.started[0]["source_bucket"] == "replica"
    assert "copied 1,200" in text and "30 identical" in text and "4 withheld" in text
    assert "4/8" in text  # units done (succeeded + failed) of the map's total


def test_failed_units_are_named_and_the_exit_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    failed = {"failed_batches": 1, "failures": [{"cause": "cam-b denied"}]}
    code, text, _ = _run(monkeypatch, {"copied": 1, **failed})
    assert code == EXIT_PROBLEM
    assert "failed units 1" in text and "cam-b denied" in text


def test_map_progress_is_planning_before_the_map_runs() -> None:
    progress = bulk_cli.map_progress(FakeStepFunctions(), "arn:exec")
    assert progress is not None and progress.phase == "planning"


def test_a_deletion_over_devices_and_a_year_runs_on_the_bulk_machine(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a stack whose bulk deletion reports 24 jobs done
    report = {"units": 24, "done": 24, "deleted": 3_150_000, "versions_deleted": 3_150_000}
    stack = FakeStack(FakeMachine([{**report, "failed_batches": 0}]))
    monkeypatch.setattr(bulk_cli, "open_stack", lambda name: stack)
    monkeypatch.setattr(follow_cli, "pause", lambda seconds: None)
    # When two cameras' year is erased on the stack
    code = main(
        ["delete", "--stack", "vi", "--device", "cam-a", "--device", "cam-b", "--from",
         "2025-01-01T00:00:00Z", "--to", "2026-01-01T00:00:00Z", "--erase", "--by", "ops-ann",
         "--interval", "0", "--new-device"]
    )  # fmt: skip
    # Then the bulk deletion machine got both devices and the whole window, in epoch ms
    assert code == EXIT_OK
    assert stack.machines == ["BulkDeleteStateMachineArn"]
    started = stack.machine.started[0]
    assert started["devices"] == ["cam-a", "cam-b"]
    assert (started["from_ms"], started["to_ms"]) == (
        int(datetime(2025, 1, 1, tzinfo=UTC).timestamp() * 1000),
        int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000),
    )
    assert (started["erase"], started["kind"], started["created_by"]) == (True, None, "ops-ann")
    assert started["run_id"].startswith("delete-")
    # And the report is said
    out = capsys.readouterr().out
    assert "24 of 24 deletion jobs done" in out and "3,150,000 keys" in out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--device", "cam-b"], "several devices need --stack"),
        (["--stack", "vi", "--dry-run"], "--stack starts a bulk deletion"),
    ],
)
def test_a_bulk_deletion_asked_wrongly_is_refused_with_its_reason(
    extra: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # When a deletion names what only the other way takes
    window = ["--device", "cam-a", "--from", "2025-01-01T00:00:00Z", "--to", "2025-02-01T00:00:00Z"]
    code = main(["delete", *window, *extra])
    # Then it is a usage error that says why, and nothing starts
    assert code == EXIT_USAGE
    assert says in capsys.readouterr().err
