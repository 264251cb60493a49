"""Response shapes of the query routes (docs/api.md); the error body:
:mod:`video_index.api.errors`; stored shapes: :mod:`video_index.core.models`."""

from __future__ import annotations

from pydantic import BaseModel

from video_index.annotations.shapes import AnnotationOut


class SegmentOut(BaseModel):
    key: str
    kind: str
    device: str
    id: str
    #: The key's file name: with ``kind``, the entry's address
    #: (``GET /devices/{device}/segments/{kind}/{name}``, an annotation's segment target).
    name: str
    start: str
    end: str
    duration_ms: int
    size: int
    etag: str
    url: str | None = None
    #: Video only: the container its first bytes show (docs/playback.md), when probed.
    container: str | None = None
    #: Video only: whether a player can play it (a file that is not what its extension
    #: says is indexed, because it exists, but never listed in a playlist).
    playable: bool | None = None
    #: The annotations that target this segment or a range intersecting it (the list and
    #: the single segment route; None where not joined or annotations are off).
    annotations: list[AnnotationOut] | None = None
    #: True when the segment has more annotations than an entry carries (20): list them
    #: with ``GET /devices/{device}/annotations`` over the entry's window.
    annotations_truncated: bool | None = None


class SegmentPage(BaseModel):
    items: list[SegmentOut]
    next_cursor: str | None


class KindTotalsOut(BaseModel):
    segments: int
    bytes: int
    duration_ms: int
    #: The oldest and newest file still indexed (retention removes the oldest).
    first_start: str | None
    last_start: str | None
    #: How long the stack keeps this kind (its lifecycle), and when this kind fell silent.
    retention_days: int | None = None
    silent_since: str | None = None


class DeviceOut(BaseModel):
    device: str
    kinds: dict[str, KindTotalsOut]
    #: When the camera stopped uploading (once every kind it uploads is silent, the latest of
    #: their silences; None while one of them uploads), and whether an operator retired it
    #: (docs/operations.md#silent-cameras).
    silent_since: str | None = None
    retired: bool = False


class DevicePage(BaseModel):
    items: list[DeviceOut]
    next_cursor: str | None


class CalendarDayOut(BaseModel):
    date: str
    has_video: bool
    segments: int
    bytes: int
    video_ms: int


class CalendarOut(BaseModel):
    device: str
    month: str
    tz: str
    days: list[CalendarDayOut]


class RangeOut(BaseModel):
    start: str
    end: str


class RangesOut(BaseModel):
    device: str
    # "from" is a Python keyword: the field is aliased.
    from_: str
    to: str
    ranges: list[RangeOut]

    model_config = {"populate_by_name": True, "alias_generator": lambda n: n.rstrip("_")}


class ActivityStepOut(BaseModel):
    start: str
    end: str
    #: Files of the kind whose start lies in the step, and their bytes.
    count: int
    bytes: int


class ActivityOut(BaseModel):
    device: str
    kind: str
    step: str
    tz: str
    items: list[ActivityStepOut]
