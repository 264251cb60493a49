"""A reconcile report as a table (or JSON): printed by the in-process run and by the
deployed one alike. A dry run's figures read in the conditional: what it would do."""

from __future__ import annotations

import json
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

#: (field, label of a run, label of a dry run), in the order shown.
FIGURES: Final = (
    ("source", "source", "source"),
    ("manifest", "manifest", "manifest"),
    ("generation", "generation", "generation"),
    ("objects_seen", "objects seen", "objects seen"),
    ("invalid_keys", "invalid keys", "invalid keys"),
    ("foreign_keys", "foreign keys", "foreign keys"),
    ("partitions_checked", "partitions checked", "partitions checked"),
    ("partitions_differing", "partitions differing", "partitions differing"),
    ("partitions_repaired", "partitions repaired", "partitions it would repair"),
    ("entries_added", "entries added", "entries it would add"),
    ("entries_removed", "entries removed", "entries it would remove"),
    ("entries_fixed", "entries fixed", "entries it would fix"),
    ("aggregates_fixed", "aggregates fixed", "aggregates it would fix"),
    (
        "deletions_enforced",
        "objects in a deletion window deleted again",
        "objects in a deletion window it would delete again",
    ),
    ("removal_share", "removal share", "removal share"),
)
_VERBS: Final = {"add": "would add", "remove": "would remove", "fix": "would fix"}


def print_report(console: Console, report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, default=str, indent=2))
        return
    dry = bool(report["dry_run"])
    table = Table(
        title=f"reconcile {report['run_id']}"
        + (" (dry run: what it would do; nothing was written)" if dry else "")
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, label, conditional in FIGURES:
        table.add_row(conditional if dry else label, str(report.get(name)))
    console.print(table)
    for sample in report.get("samples", []):
        action = _VERBS.get(sample["action"], sample["action"]) if dry else sample["action"]
        console.print(Text(f"  {action:<12} {sample['key']}"))
