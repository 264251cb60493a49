"""What the annotation routes answer (docs/annotations.md), and the JSON Lines of an export."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from video_index.annotations.model import Annotation
from video_index.core.timeunits import iso_ms


class SegmentTargetOut(BaseModel):
    """A segment target: its id, and its kind and key file name (its address, ``GET
    /devices/{device}/segments/{kind}/{name}``; what a replacement sends back)."""

    segment: str
    kind: str
    name: str


class RangeTargetOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str


class AnnotationOut(BaseModel):
    """One annotation; ``ETag`` is its ``version``."""

    annotation_id: str
    device: str
    target: SegmentTargetOut | RangeTargetOut
    description: str
    status: str
    tags: list[str]
    version: int
    created_at: str
    created_by: str
    updated_at: str
    updated_by: str
    #: The interval the target covers (a segment's, or the range).
    start: str
    end: str
    #: A segment target: its object key, and whether the segment still exists.
    segment_key: str | None = None
    segment_present: bool | None = None


class AnnotationPageOut(BaseModel):
    items: list[AnnotationOut]
    next_cursor: str | None


class VersionOut(AnnotationOut):
    """One version of the history: ``deleted`` marks the version that deleted it."""

    deleted: bool = False


class HistoryOut(BaseModel):
    items: list[VersionOut]
    next_cursor: str | None


def annotation_out(annotation: Annotation) -> AnnotationOut:
    return AnnotationOut(**_fields(annotation))


def version_out(annotation: Annotation) -> VersionOut:
    return VersionOut(**_fields(annotation), deleted=annotation.deleted)


def _fields(annotation: Annotation) -> dict[str, object]:
    target = annotation.target
    ref = target.ref
    shown: SegmentTargetOut | RangeTargetOut = (
        SegmentTargetOut(segment=target.segment, kind=ref.kind, name=ref.name)
        if target.segment is not None and ref is not None
        else RangeTargetOut(from_=iso_ms(target.start_ms), to=iso_ms(target.end_ms))
    )
    return {
        "annotation_id": annotation.annotation_id,
        "device": annotation.device,
        "target": shown,
        "description": annotation.description,
        "status": annotation.status,
        "tags": list(annotation.tags),
        "version": annotation.version,
        "created_at": annotation.created_at,
        "created_by": annotation.created_by,
        "updated_at": annotation.updated_at,
        "updated_by": annotation.updated_by,
        "start": iso_ms(target.start_ms),
        "end": iso_ms(target.end_ms),
        "segment_key": target.segment_key,
        "segment_present": annotation.segment_present,
    }


def as_json(model: BaseModel) -> dict[str, object]:
    """A response body (aliases, JSON types)."""
    return model.model_dump(mode="json", by_alias=True)
