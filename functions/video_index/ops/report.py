"""What a reconcile run found and did: per-partition results and the run's report.

The report is written as JSON to the reports bucket and printed by the CLI
(docs/operations.md); its summary is kept in the read model's control item for
``video-index status``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

from video_index.core.errors import Conflict

#: How many sample keys a report keeps per list.
SAMPLES: Final = 10


class ReconcileRefused(Conflict):
    """The run would remove too much of the read model; see the report."""

    def __init__(self, report: ReconcileReport) -> None:
        super().__init__(report.refusal or "refused")
        self.report = report


@dataclass
class PartitionResult:
    added: int = 0
    removed: int = 0
    fixed: int = 0
    aggregates_fixed: int = 0
    samples: list[dict[str, str]] = field(default_factory=list)
    #: Objects deleted again inside a recorded deletion window (docs/deletion.md).
    enforced: int = 0
    #: Objects inside a recorded deletion window that a hold kept (docs/holds.md).
    held: int = 0

    def merge(self, other: PartitionResult) -> None:
        self.enforced += other.enforced
        self.held += other.held
        self.added += other.added
        self.removed += other.removed
        self.fixed += other.fixed
        self.aggregates_fixed += other.aggregates_fixed
        self.samples = (self.samples + other.samples)[:SAMPLES]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.fixed or self.aggregates_fixed)


@dataclass
class ReconcileReport:
    run_id: str
    source: str
    generation: int
    dry_run: bool
    forced: bool
    manifest: str | None = None
    started_at: str = ""
    finished_at: str = ""
    objects_seen: int = 0
    foreign_keys: int = 0
    invalid_keys: int = 0
    invalid_samples: list[dict[str, str]] = field(default_factory=list)
    partitions_checked: int = 0
    partitions_differing: int = 0
    partitions_repaired: int = 0
    entries_added: int = 0
    entries_removed: int = 0
    entries_fixed: int = 0
    aggregates_fixed: int = 0
    samples: list[dict[str, str]] = field(default_factory=list)
    read_model_entries: int = 0
    removal_share: float = 0.0
    refusal: str | None = None
    deletions_enforced: int = 0
    #: Objects inside a deletion window in force that a hold kept (docs/holds.md).
    deletions_held: int = 0
    #: Objects past their kind's retention inside an active hold: kept on purpose.
    past_retention_held: int = 0
    #: Objects past retention by more than two days that no hold covers: the retention
    #: job should have deleted them (it did not run, or failed). Counted only where the
    #: run knows the holds (docs/holds.md).
    past_retention_overdue: int = 0
    overdue_samples: list[str] = field(default_factory=list)

    def add(self, result: PartitionResult) -> None:
        self.deletions_enforced += result.enforced
        self.deletions_held += result.held
        self.entries_added += result.added
        self.entries_removed += result.removed
        self.entries_fixed += result.fixed
        self.aggregates_fixed += result.aggregates_fixed
        self.partitions_repaired += 1 if result.changed else 0
        self.samples = (self.samples + result.samples)[:SAMPLES]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summary(report: ReconcileReport) -> dict[str, Any]:
    keep = (
        "run_id",
        "source",
        "generation",
        "finished_at",
        "partitions_checked",
        "partitions_repaired",
        "entries_added",
        "entries_removed",
        "entries_fixed",
        "aggregates_fixed",
        "invalid_keys",
        "past_retention_held",
        "past_retention_overdue",
    )
    return {name: getattr(report, name) for name in keep}
