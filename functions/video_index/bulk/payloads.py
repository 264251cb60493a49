"""The bulk steps' inputs and outputs (:class:`~video_index.ops.payloads.Payload`: unknown
fields ignored, a wrong one a :class:`BadInput` naming it)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from video_index.ops.payloads import FingerprintUnit, Payload, S3Location

# -- restore -------------------------------------------------------------------------------


class RestoreInput(Payload):
    """An execution of the restore machine: copy back from ``source_bucket``."""

    source_bucket: str = Field(min_length=3)
    #: ``s3://…/manifest.json`` of the replica's S3 Inventory; a listing when absent.
    manifest: str | None = None
    run_id: str | None = None
    dry_run: bool = False


class RestoreBatchInput(Payload):
    run_id: str
    source_bucket: str
    manifest: str | None = None
    dry_run: bool = False


class RestorePlan(Payload):
    """What the plan wrote: the unit list (the map's items) and the run's settings."""

    run_id: str
    source_bucket: str
    manifest: str | None = None
    dry_run: bool = False
    units: S3Location
    unit_count: int


class RestoreBatch(Payload):
    Items: list[FingerprintUnit]
    BatchInput: RestoreBatchInput


class RestoreCounts(Payload):
    """One unit's (or, summed, the run's) outcome."""

    units: int = 0
    compared: int = 0
    copied: int = 0
    bytes_copied: int = 0
    identical: int = 0
    #: Covered by a deletion request in force and by no hold: not copied back.
    withheld: int = 0
    #: Covered by a deletion request but kept by a hold: copied back.
    held: int = 0
    seconds: float = 0.0

    def plus(self, other: RestoreCounts) -> RestoreCounts:
        return RestoreCounts(
            **{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        )


class ReportInput(Payload):
    """The last step: the plan's run and where the map's results are."""

    run_id: str
    results: S3Location | list[Any] | None = None


# -- deletion ------------------------------------------------------------------------------


class DeleteInput(Payload):
    """A deletion over many partitions: every device named, the whole window (any length)."""

    devices: list[str] = Field(min_length=1)
    from_ms: int
    to_ms: int
    kind: str | None = None
    erase: bool = False
    created_by: str = Field(min_length=1)
    run_id: str | None = None


class DeleteUnit(Payload):
    """One partition of the deletion: an ordinary deletion request and its job."""

    deletion_id: str
    device: str
    from_ms: int
    to_ms: int


class DeletePlan(Payload):
    run_id: str
    units: S3Location
    unit_count: int


class DeleteBatchInput(Payload):
    run_id: str


class DeleteBatch(Payload):
    Items: list[DeleteUnit]
    BatchInput: DeleteBatchInput


class DeleteCounts(Payload):
    units: int = 0
    done: int = 0
    deleted: int = 0
    versions_deleted: int = 0
    #: Keys a hold kept (docs/holds.md: units delete around holds, read before each batch).
    kept_held: int = 0

    def plus(self, other: DeleteCounts) -> DeleteCounts:
        return DeleteCounts(
            **{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        )
