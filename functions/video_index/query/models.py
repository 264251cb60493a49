"""Response shapes of the query routes (docs/api.md); the error body:
:mod:`video_index.api.errors`; stored shapes: :mod:`video_index.core.models`."""

from __future__ import annotations

from typing import Literal

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


class ClockOut(BaseModel):
    """The camera's clock against S3's over its last hour of arrivals
    (docs/operations.md#camera-clocks)."""

    #: How far (at least) its clock runs ahead: the most any file ended, by its key, after
    #: S3 received it; and whether that is more than the tolerance.
    ahead_ms: int
    ahead: bool
    #: The steady upload delay: the least any file took from its end to S3 (0 when ahead).
    upload_delay_ms: int
    #: The files this is from, received since ``since``.
    files: int
    since: str


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
    #: This kind's files against the camera's clock (None before a receipt was recorded).
    clock: ClockOut | None = None


class DeviceOut(BaseModel):
    device: str
    kinds: dict[str, KindTotalsOut]
    #: When the camera stopped uploading (once every kind it uploads is silent, the latest of
    #: their silences; None while one of them uploads), and whether an operator retired it
    #: (docs/operations.md#silent-cameras).
    silent_since: str | None = None
    retired: bool = False
    #: The camera's clock over all its kinds (one clock: the least lateness of any).
    clock: ClockOut | None = None


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


class CopiesOut(BaseModel):
    """One copy of an overlap: its files and when S3 received them (first, last)."""

    files: int
    received_from: str | None
    received_to: str | None


class OverlapOut(BaseModel):
    """Moments two video files or more cover (a camera clock that jumped back): the copy a
    playlist plays and the one it sets aside (docs/playback.md#overlapping-copies)."""

    start: str
    end: str
    played: CopiesOut
    set_aside: CopiesOut


class DeletionOut(BaseModel):
    """The deletion request whose window explains a gap: its id, who asked and when."""

    deletion_id: str
    created_by: str | None
    created_at: str | None


class GapOut(BaseModel):
    """A stretch of the window without video, and why (docs/api.md#gaps): ``deleted``,
    ``expired``, ``archived``, ``silent`` or ``missing``."""

    start: str
    end: str
    reason: Literal["deleted", "expired", "archived", "silent", "missing"]
    #: The request, when ``deleted``.
    deletion: DeletionOut | None = None


class RangesOut(BaseModel):
    device: str
    # "from" is a Python keyword: the field is aliased.
    from_: str
    to: str
    ranges: list[RangeOut]
    #: Where files overlap, which copy plays (within the window).
    overlaps: list[OverlapOut]
    #: Every gap inside ``[from, explained_until)``, with its reason.
    gaps: list[GapOut]
    explained_until: str

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
