"""The read routes of the HTTP API (docs/api.md): parse, call the query layer, shape.

No DynamoDB or S3 code here: answers come from :class:`~video_index.query.queries.Queries`,
errors are mapped once in :mod:`video_index.api.resolver`.
"""

from __future__ import annotations

from itertools import islice
from typing import Annotated, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from video_index.annotations.model import Annotation
from video_index.annotations.service import Annotations
from video_index.annotations.shapes import annotation_out
from video_index.api import params
from video_index.api.caller import current_caller
from video_index.api.context import Presign, optional_service, service
from video_index.api.cursors import opened, sealed
from video_index.api.errors import responses
from video_index.core.access import Role, allow
from video_index.core.audit import (
    NOT_AUDITED,
    OVERLAYS_READ,
    PLAYLIST_READ,
    SEGMENT_READ,
    SEGMENTS_LIST,
)
from video_index.core.errors import BadInput
from video_index.core.keys import KINDS, MAX_FILE_NAME_LENGTH
from video_index.core.service_limits import PAGE_BUDGET_BYTES, answer_bytes
from video_index.core.timeunits import iso_ms
from video_index.query.activity import activity, hours_to_read, parse_step, step_bounds
from video_index.query.calendar import parse_zone
from video_index.query.copies import one_copy_per_moment
from video_index.query.devices import calendar_out, device_out
from video_index.query.entries import Entry, KindTotals
from video_index.query.models import (
    ActivityOut,
    ActivityStepOut,
    CalendarOut,
    DeviceOut,
    DevicePage,
    RangesOut,
    SegmentOut,
    SegmentPage,
)
from video_index.query.playback import playlist_segments
from video_index.query.playlist import (
    CONTENT_TYPE,
    MAX_PLAYLIST_FILES,
    MAX_WINDOW_MS,
    build_playlist,
)
from video_index.query.queries import Queries
from video_index.query.shapes import ranges_out
from video_index.query.timeline import Timeline

OVERLAY_KINDS: Final = ("sensor", "analysis")
#: The annotations an entry carries at most (each up to ~48 KB of JSON); an entry with
#: more says ``annotations_truncated`` and the annotations route lists them all.
MAX_JOINED_ANNOTATIONS: Final = 20
#: The ranges one answer lists at most: ~70 bytes each, and as many gaps of ~120 bytes
#: (each with its reason) between them: ~4.8 MB.
MAX_RANGES: Final = 25_000
#: The single-segment route's path parameters, bounded in the document; their rules
#: (docs/keys.md) are checked by :func:`video_index.api.params.segment`, naming the one
#: broken (a schema pattern would answer the same 400 with a less helpful message).
SegmentDevice = Annotated[str, Path(max_length=64)]
SegmentKind = Annotated[str, Path(max_length=16)]
SegmentName = Annotated[str, Path(max_length=MAX_FILE_NAME_LENGTH)]

router = Router()  # type: ignore[no-untyped-call]


def _segment_out(
    entry: Entry, url: str | None = None, annotations: list[Annotation] | None = None
) -> SegmentOut:
    return SegmentOut(
        key=entry.key,
        kind=entry.kind,
        device=entry.device,
        id=entry.id,
        name=entry.filename,
        start=iso_ms(entry.start_ms),
        end=iso_ms(entry.end_ms),
        duration_ms=entry.duration_ms,
        size=entry.size,
        etag=entry.etag,
        url=url,
        container=entry.container,
        playable=entry.playable if entry.kind == "video" else None,
        annotations=(
            [annotation_out(a) for a in annotations[:MAX_JOINED_ANNOTATIONS]]
            if annotations is not None
            else None
        ),
        annotations_truncated=(
            len(annotations) > MAX_JOINED_ANNOTATIONS if annotations is not None else None
        ),
    )


def _joined(device: str, entries: list[Entry]) -> dict[str, list[Annotation]] | None:
    """The annotations of each entry (by key): one Query for all of them (the join,
    docs/annotations.md); None when annotations are off."""
    annotations = optional_service(Annotations)
    return annotations.for_entries(device, entries) if annotations is not None else None


def _totals_out(device: str, totals: dict[str, KindTotals], retired: bool) -> DeviceOut:
    return device_out(service(Queries), device, totals, retired)


@router.get(
    "/devices", openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED), responses=responses()
)
def list_devices(
    limit: Annotated[int, Query(ge=1, le=100)] = 50, cursor: params.Text = None
) -> DevicePage:
    queries = service(Queries)
    names, position = queries.devices(limit, opened(cursor, "devices"))
    retired = queries.retired()
    # Only the caller's devices: a page may hold fewer than ``limit`` (docs/access.md). The
    # position is the last name read, maybe one the caller may not see: sealed, it is
    # opaque (docs/api.md#pages-and-cursors).
    caller = current_caller()
    names = [name for name in names if caller.sees(name)]
    return DevicePage(
        items=[_totals_out(name, queries.device_totals(name), name in retired) for name in names],
        next_cursor=sealed(position, "devices"),
    )


@router.get(
    "/devices/<device>",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def get_device(device: str) -> DeviceOut:
    device = params.device(device)
    return _totals_out(device, *service(Queries).device(device))


@router.get(
    "/devices/<device>/calendar",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def get_calendar(device: str, month: params.Text = None, tz: params.Text = "UTC") -> CalendarOut:
    return calendar_out(service(Queries), params.device(device), month, tz)


@router.get(
    "/devices/<device>/activity",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def get_activity(
    device: str,
    from_: params.FromTime = None,
    to: params.Time = None,
    kind: params.KindText = None,
    step: params.Text = None,
    tz: params.Text = "UTC",
) -> ActivityOut:
    """Files of one kind (video by default) starting in each step of ``[from, to)`` (≤ 31
    days), zeros included, in the zone ``tz`` (docs/api.md#activity): one Query."""
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    (chosen,) = params.kinds(kind or "video", KINDS)
    every = parse_step(step)
    zone = parse_zone(tz or "")
    bounds = step_bounds(start_ms, end_ms, every, zone)
    hours = service(Queries).activity_hours(device, chosen, *hours_to_read(bounds))
    steps = activity(start_ms, end_ms, every, zone, hours)
    return ActivityOut(
        device=device,
        kind=chosen,
        step=every,
        tz=str(tz),
        items=[
            ActivityStepOut(
                start=iso_ms(s.start_ms), end=iso_ms(s.end_ms), count=s.count, bytes=s.bytes
            )
            for s in steps
        ],
    )


@router.get(
    "/devices/<device>/ranges",
    openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
    responses=responses(),
)
def get_ranges(device: str, from_: params.FromTime = None, to: params.Time = None) -> RangesOut:
    """The window's whole ranges, its overlaps and a reason for every gap (docs/api.md)."""
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    answer = service(Timeline).answer(device, start_ms, end_ms)
    spans = answer.ranges
    fitting = MAX_RANGES
    if len(spans) <= MAX_RANGES:
        out = ranges_out(device, start_ms, end_ms, answer)
        size = answer_bytes(out.model_dump(mode="json", by_alias=True))
        if size <= PAGE_BUDGET_BYTES:
            return out
        fitting = max(1, len(spans) * PAGE_BUDGET_BYTES // size - 1)  # gaps told at length
    raise BadInput(
        "to",
        f"the window holds more continuous ranges and gaps than one answer lists (6 MB); "
        f"ask for a shorter window, e.g. to={iso_ms(spans[fitting - 1][1])}",
    )


@router.get(
    "/devices/<device>/segments",
    openapi_extensions=allow(Role.VIEWER, audit=SEGMENTS_LIST),
    responses=responses(),
)
def list_segments(
    device: str,
    from_: params.FromTime = None,
    to: params.Time = None,
    kind: params.KindText = None,
    limit: params.Limit = 100,
    cursor: params.Text = None,
) -> SegmentPage:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    kinds = params.kinds(kind, KINDS)
    queries = service(Queries)
    purpose = f"segments/{device}"
    position = opened(cursor, purpose)
    page = queries.segments_page(device, kinds, start_ms, end_ms, limit, position)
    joined = _joined(device, page.items)
    items: list[SegmentOut] = []
    used = 0
    for entry in page.items:
        item = _segment_out(entry, annotations=joined.get(entry.key, []) if joined else None)
        used += answer_bytes(item.model_dump(mode="json")) + 1
        if used > PAGE_BUDGET_BYTES and items:
            # Heavy annotations: a shorter page of the entries built so far, with its cursor.
            shorter = queries.segments_page(device, kinds, start_ms, end_ms, len(items), position)
            return SegmentPage(items=items, next_cursor=sealed(shorter.next_cursor, purpose))
        items.append(item)
    return SegmentPage(items=items, next_cursor=sealed(page.next_cursor, purpose))


@router.get(
    "/devices/<device>/segments/<kind>/<name>",
    openapi_extensions=allow(Role.VIEWER, audit=SEGMENT_READ),
    responses=responses(404),
)
def get_segment(device: SegmentDevice, kind: SegmentKind, name: SegmentName) -> SegmentOut:
    """One segment by its kind and key file name (an entry's ``kind`` and ``name``): one
    GetItem in the serving generation's partition of the device and kind, one HEAD."""
    device = params.device(device)
    segment = params.segment(device, kind, name)
    queries, presign = service(Queries), service(Presign)
    entry = queries.segment(segment)
    joined = _joined(device, [entry])
    return _segment_out(
        entry, presign(entry.key), joined.get(entry.key, []) if joined is not None else None
    )


@router.get(
    "/devices/<device>/playlist.m3u8",
    openapi_extensions=allow(Role.VIEWER, audit=PLAYLIST_READ),
    responses=responses(
        ok={
            "description": "An HLS VOD media playlist (RFC 8216)",
            "content": {CONTENT_TYPE: {"schema": {"type": "string"}}},
        }
    ),
)
def get_playlist(
    device: str, from_: params.FromTime = None, to: params.Time = None
) -> Response[str]:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, MAX_WINDOW_MS)
    entries = service(Queries).window_entries(device, "video", start_ms, end_ms)
    # One file past the limit is enough to refuse: a long window is never read whole.
    listed = list(islice(entries, MAX_PLAYLIST_FILES + 1))
    if len(listed) > MAX_PLAYLIST_FILES:
        raise BadInput("to", _too_many_files(start_ms, listed[-1].start_ms))
    # Each moment once: of files that overlap (a clock that jumped back), one copy plays
    # and the playlist says which (docs/playback.md#overlapping-copies).
    choice = one_copy_per_moment(listed, service(Queries).gap_tolerance_ms)
    body = build_playlist(playlist_segments(choice.kept), comments=choice.notes())
    return Response(status_code=200, content_type=CONTENT_TYPE, body=body)


def _too_many_files(start_ms: int, first_over_ms: int) -> str:
    """The refusal of a window holding more files than a playlist lists, with the ``to`` that
    would fit (the start of the first file past the limit), when there is one."""
    message = (
        f"the window holds more than {MAX_PLAYLIST_FILES} video files, the most one playlist "
        "lists (an answer is at most 6 MB): ask for a shorter window"
    )
    return message + (f", e.g. to={iso_ms(first_over_ms)}" if first_over_ms > start_ms else "")


@router.get(
    "/devices/<device>/overlays",
    openapi_extensions=allow(Role.VIEWER, audit=OVERLAYS_READ),
    responses=responses(),
)
def list_overlays(
    device: str,
    from_: params.FromTime = None,
    to: params.Time = None,
    kind: params.KindText = None,
    limit: params.Limit = 100,
    cursor: params.Text = None,
) -> SegmentPage:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, MAX_WINDOW_MS)
    queries, presign = service(Queries), service(Presign)
    purpose = f"overlays/{device}"
    page = queries.segments_page(
        device, params.kinds(kind, OVERLAY_KINDS), start_ms, end_ms, limit, opened(cursor, purpose)
    )
    return SegmentPage(
        items=[_segment_out(e, presign(e.key)) for e in page.items],
        next_cursor=sealed(page.next_cursor, purpose),
    )
