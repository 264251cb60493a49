"""A reconcile report as a table (or JSON): printed by the in-process run and by the
deployed one alike."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table


def print_report(console: Console, report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, default=str, indent=2))
        return
    table = Table(
        title=f"reconcile {report['run_id']}" + (" (dry run)" if report["dry_run"] else "")
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name in (
        "source",
        "manifest",
        "generation",
        "objects_seen",
        "invalid_keys",
        "foreign_keys",
        "partitions_checked",
        "partitions_differing",
        "partitions_repaired",
        "entries_added",
        "entries_removed",
        "entries_fixed",
        "aggregates_fixed",
        "removal_share",
    ):
        table.add_row(name.replace("_", " "), str(report.get(name)))
    console.print(table)
    for sample in report.get("samples", []):
        console.print(f"  {sample['action']:<6} {sample['key']}")
