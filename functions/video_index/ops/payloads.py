"""Typed inputs and outputs of the ops steps, as Step Functions hands them over.

The state machines (``infra/ops``) build these objects with JSONata and the ops
function validates them here, so a field either side renames is a clear error
naming the field, not a ``KeyError`` deep in a step. The CLI that starts
executions builds the same models.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from video_index.core.errors import BadInput
from video_index.ops.fingerprints import Partition

Source = Literal["inventory", "list"]


class Payload(BaseModel):
    """A step payload: unknown fields are ignored (``action``, Step Functions' own)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @classmethod
    def parse(cls, event: dict[str, Any]) -> Any:
        """The payload of ``event``; :class:`BadInput` naming the first wrong field."""
        try:
            return cls.model_validate(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or cls.__name__
            raise BadInput(where, f"{first['msg']} (in the {cls.__name__} step input)") from None

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class S3Location(Payload):
    """Where a run object is: ``{"Bucket", "Key"}``, as the Distributed Map reads it."""

    Bucket: str
    Key: str


class SourceInput(Payload):
    """What to compare the read model with (reconcile and rebuild executions)."""

    source: Source = "inventory"
    #: ``s3://…/manifest.json`` of an S3 Inventory report; the newest one when absent.
    manifest: str | None = None
    #: The ``manifest.checksum`` whose arrival started the execution (inventory trigger).
    manifest_checksum: str | None = None

    def manifest_uri(self) -> str | None:
        """``manifest``, or the ``manifest.json`` beside a landed ``manifest.checksum``."""
        if self.manifest:
            return self.manifest
        if self.manifest_checksum:
            # The inventory trigger passes the object key as S3 events carry it.
            decoded = unquote_plus(self.manifest_checksum)
            return decoded.removesuffix("manifest.checksum") + "manifest.json"
        return None


class ReconcileInput(SourceInput):
    """A reconcile execution's input (``video-index reconcile --stack`` starts it with this)."""

    dry_run: bool = False
    force: bool = False


class RebuildInput(SourceInput):
    """A rebuild execution's input: from a listing unless an inventory report is named
    (``video-index rebuild start --stack`` starts it with this)."""

    source: Source = "list"


class PlanOutput(Payload):
    run_id: str
    generation: int
    partitions: S3Location
    to_repair: int
    dry_run: bool


class ReconcileBatchInput(Payload):
    run_id: str | None = None
    #: The generation to repair; the serving one when null.
    generation: int | None = None
    dry_run: bool = False


class PartitionItem(Payload):
    device: str
    kind: str
    day: str

    def partition(self) -> Partition:
        return Partition.from_dict(self.dump())


class ReconcileBatch(Payload):
    """One child execution of the repair map: a batch of partitions."""

    Items: list[PartitionItem] = Field(default_factory=list)
    BatchInput: ReconcileBatchInput = Field(default_factory=ReconcileBatchInput)


class RepairCounts(Payload):
    added: int = 0
    removed: int = 0
    fixed: int = 0
    aggregates_fixed: int = 0
    samples: list[dict[str, str]] = Field(default_factory=list)
    repaired: int = 0
    #: Objects deleted again inside deletion windows (docs/deletion.md).
    enforced: int = 0
    #: Objects inside deletion windows that a hold kept (docs/holds.md).
    held: int = 0


class ReportInput(Payload):
    run_id: str
    #: The repair map's ``ResultWriterDetails`` (``{"Bucket", "Key"}``), its outputs inline,
    #: or null when the map did not run (nothing to repair, or a dry run).
    results: S3Location | list[Any] | None = None

    @field_validator("results", mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        """The map's whole output (``{"ResultWriterDetails": {...}}``) is accepted too."""
        if isinstance(value, dict) and "ResultWriterDetails" in value:
            return value["ResultWriterDetails"]
        return value


class RebuildStartOutput(Payload):
    rebuild_id: str
    generation: int
    partitions: S3Location


class RebuildBatchInput(Payload):
    rebuild_id: str | None = None
    generation: int


class RebuildBatch(Payload):
    Items: list[PartitionItem] = Field(default_factory=list)
    BatchInput: RebuildBatchInput


class RebuildGeneration(Payload):
    rebuild_id: str | None = None
    generation: int


class RebuildDropInput(Payload):
    """The generation the switch replaced (``previous`` of the finish), if any."""

    rebuild_id: str | None = None
    generation: int | None = None


class RebuildFinishInput(RebuildGeneration):
    settle_seconds: float | None = None


class RebuildAbortInput(Payload):
    rebuild_id: str | None = None
    generation: int | None = None
    error: Any = None


# --- the distributed plan (docs/operations.md: "Reconcile at fleet scale") ---------------


class InventorySlice(Payload):
    """Part ``part`` of ``parts`` of one data file of an inventory report."""

    key: str
    size: int | None = None
    md5: str | None = None
    part: int = 0
    parts: int = 1


class ScanSegment(Payload):
    """Segment ``segment`` of a parallel Scan of the read model in ``segments`` parts."""

    segment: int
    segments: int


class FingerprintUnit(Payload):
    """One item of the fingerprint map: what one child reads and fingerprints."""

    unit: int
    #: Inventory data files, or parts of one.
    slices: list[InventorySlice] = Field(default_factory=list)
    #: Listings: every key under each prefix ...
    prefixes: list[str] = Field(default_factory=list)
    #: ... and the keys right under each of these (not in a folder below them).
    shallow: list[str] = Field(default_factory=list)
    #: A segment of the read model's Scan.
    scan: ScanSegment | None = None


class FingerprintPlan(Payload):
    """What ``reconcile-plan`` / ``rebuild-plan`` planned: the units to fingerprint and
    the shards to reduce, as lists in the reports bucket for the two maps."""

    run_id: str
    #: ``reconcile/<run id>/`` or ``rebuild/<run id>/``: where the run's objects go.
    folder: str
    source: Source
    manifest: str | None = None
    #: The read-model generation compared; null when only S3 is fingerprinted (rebuild).
    generation: int | None = None
    units: S3Location
    unit_count: int
    shards: S3Location
    shard_count: int
    dry_run: bool = False
    force: bool = False
    started_at: str = ""


class UnitBatchInput(Payload):
    folder: str
    manifest: str | None = None
    generation: int | None = None
    shard_count: int = 1


class UnitBatch(Payload):
    """One child of the fingerprint map: a batch of units."""

    Items: list[FingerprintUnit] = Field(default_factory=list)
    BatchInput: UnitBatchInput


class UnitCounts(Payload):
    """What fingerprint units saw besides fingerprints (summed by the decision)."""

    units: int = 0
    objects_seen: int = 0
    foreign_keys: int = 0
    invalid_keys: int = 0
    invalid_samples: list[dict[str, str]] = Field(default_factory=list)
    #: Objects past retention inside an active hold (kept on purpose: docs/holds.md).
    past_retention_held: int = 0
    #: Objects past retention by more than the grace days and held by nothing.
    past_retention_overdue: int = 0
    overdue_samples: list[str] = Field(default_factory=list)
    #: Read-model items scanned.
    items_scanned: int = 0
    seconds: float = 0.0


class ShardItem(Payload):
    shard: int


class ShardBatchInput(Payload):
    folder: str
    unit_count: int


class ShardBatch(Payload):
    """One child of the reduce map: a batch of shards."""

    Items: list[ShardItem] = Field(default_factory=list)
    BatchInput: ShardBatchInput


class ShardCounts(Payload):
    shards: int = 0
    partitions_checked: int = 0
    partitions_differing: int = 0
    partitions_with_objects: int = 0
    read_model_entries: int = 0
    would_remove: int = 0


def _results(value: Any) -> Any:
    if isinstance(value, dict) and "ResultWriterDetails" in value:
        return value["ResultWriterDetails"]
    return value


class DecideInput(Payload):
    """The plan and where both maps' outputs are (``ResultWriterDetails`` or inline)."""

    plan: FingerprintPlan
    unit_results: S3Location | list[Any] | None = None
    shard_results: S3Location | list[Any] | None = None

    @field_validator("unit_results", "shard_results", mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return _results(value)
