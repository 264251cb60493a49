"""The bulk state machines played in this process, in the order their ASL runs the steps
(tests, benchmarks, ``video-index local``): plan -> the Distributed Map's children, each
retried as the ASL's ``Retry`` says -> the report, which reads the map's results back
from a ``ResultWriter``-shaped manifest in the reports bucket (docs/bulk.md).

Children run one after another here; on Step Functions they run up to the map's
``MaxConcurrency`` at once, which changes nothing a unit does: units are independent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from video_index.bulk.names import (
    ACTION_DELETE_PLAN,
    ACTION_DELETE_REPORT,
    ACTION_DELETE_UNITS,
    ACTION_RESTORE_PLAN,
    ACTION_RESTORE_REPORT,
    ACTION_RESTORE_UNITS,
    DELETE_REPORTS_PREFIX,
    RESTORE_REPORTS_PREFIX,
    RESULTS_FOLDER,
)
from video_index.bulk.steps import Bulk, dispatch

#: Attempts per child, as the state machine's Retry on the unit task (1 + retries).
DEFAULT_ATTEMPTS: Final = 4

Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class LocalEngine:
    """Runs a bulk machine's steps through ``invoke`` (the Lambda's dispatch)."""

    bulk: Bulk
    invoke: Invoke | None = None
    attempts: int = DEFAULT_ATTEMPTS
    #: Called before a retry with the failure (tests advance a clock past a lease here).
    before_retry: Callable[[BaseException], None] = lambda _: None
    #: Children that failed on some attempt, by item index (what a test injected).
    retried: dict[int, int] = field(default_factory=dict)

    def _call(self, payload: dict[str, Any]) -> dict[str, Any]:
        wire = json.loads(json.dumps(payload))
        result = self.invoke(wire) if self.invoke else dispatch(self.bulk, wire)
        return dict(json.loads(json.dumps(result)))

    def restore(self, execution: dict[str, Any]) -> dict[str, Any]:
        plan = self._call({"action": ACTION_RESTORE_PLAN, **execution})
        batch_input = {
            name: plan[name] for name in ("run_id", "source_bucket", "manifest", "dry_run")
        }
        results = self._map(plan, ACTION_RESTORE_UNITS, batch_input, RESTORE_REPORTS_PREFIX)
        return self._call(
            {"action": ACTION_RESTORE_REPORT, "run_id": plan["run_id"], "results": results}
        )

    def delete(self, execution: dict[str, Any]) -> dict[str, Any]:
        plan = self._call({"action": ACTION_DELETE_PLAN, **execution})
        results = self._map(
            plan, ACTION_DELETE_UNITS, {"run_id": plan["run_id"]}, DELETE_REPORTS_PREFIX
        )
        return self._call(
            {"action": ACTION_DELETE_REPORT, "run_id": plan["run_id"], "results": results}
        )

    def _map(
        self, plan: dict[str, Any], action: str, batch_input: dict[str, Any], prefix: str
    ) -> dict[str, str]:
        """One child per item (batch size 1, as deployed); each retried; the results
        written as the ResultWriter writes them."""
        reports = self.bulk.reports
        items = reports.get_json(plan["units"]["Key"])
        succeeded: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            child = {"Items": [item], "BatchInput": batch_input}
            for attempt in range(1, self.attempts + 1):
                try:
                    output = self._call({"action": action, **child})
                except Exception as exc:  # a Lambda error: Step Functions retries the task
                    self.retried[index] = attempt
                    if attempt == self.attempts:
                        failed.append(
                            {
                                "Input": json.dumps(child),
                                "Error": type(exc).__name__,
                                "Cause": str(exc),
                                "Status": "FAILED",
                            }
                        )
                    else:
                        self.before_retry(exc)
                    continue
                succeeded.append({"Output": json.dumps(output), "Status": "SUCCEEDED"})
                break
        folder = f"{prefix}{RESULTS_FOLDER}{uuid.uuid4()}/"
        files: dict[str, list[dict[str, str]]] = {"SUCCEEDED": [], "FAILED": [], "PENDING": []}
        for status, entries in (("SUCCEEDED", succeeded), ("FAILED", failed)):
            if entries:
                key = f"{folder}{status}_0.json"
                reports.put_json(key, entries)
                files[status].append({"Key": key})
        manifest = {"DestinationBucket": reports.bucket, "ResultFiles": files}
        return reports.put_json(f"{folder}manifest.json", manifest)
