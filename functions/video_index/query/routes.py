"""The read routes of the HTTP API (docs/api.md): parse, call the query layer, shape.

No DynamoDB or S3 code here: answers come from :class:`~video_index.query.queries.Queries`,
errors are mapped once in :mod:`video_index.query.app`.
"""

from __future__ import annotations

from typing import Annotated, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from video_index.access.caller import current_caller
from video_index.annotations.model import Annotation
from video_index.annotations.shapes import annotation_out
from video_index.core.access import Role, allow
from video_index.core.errors import BadInput
from video_index.core.keys import KINDS, MAX_FILE_NAME_LENGTH
from video_index.core.timeunits import iso_ms
from video_index.media.playback import playlist_segments
from video_index.query import params
from video_index.query.calendar import CalendarError, parse_month, parse_zone
from video_index.query.context import responses, services
from video_index.query.entries import Entry, KindTotals
from video_index.query.models import (
    CalendarDayOut,
    CalendarOut,
    DeviceOut,
    DevicePage,
    KindTotalsOut,
    RangeOut,
    RangesOut,
    SegmentOut,
    SegmentPage,
)
from video_index.query.playlist import CONTENT_TYPE, MAX_WINDOW_MS, build_playlist

OVERLAY_KINDS: Final = ("sensor", "analysis")
#: The single-segment route's path parameters, bounded in the document; their rules
#: (docs/keys.md) are checked by :func:`video_index.query.params.segment`, naming the one
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
        annotations=[annotation_out(a) for a in annotations] if annotations is not None else None,
    )


def _joined(device: str, entries: list[Entry]) -> dict[str, list[Annotation]] | None:
    """The annotations of each entry (by key): one Query for all of them (the join,
    docs/annotations.md); None when annotations are off."""
    annotations = services().annotations
    return annotations.for_entries(device, entries) if annotations is not None else None


def _totals_out(device: str, totals: dict[str, KindTotals]) -> DeviceOut:
    return DeviceOut(
        device=device,
        kinds={
            kind: KindTotalsOut(
                segments=t.segments,
                bytes=t.bytes,
                duration_ms=t.duration_ms,
                first_start=iso_ms(t.first_start_ms) if t.first_start_ms is not None else None,
                last_start=iso_ms(t.last_start_ms) if t.last_start_ms is not None else None,
            )
            for kind, t in sorted(totals.items())
        },
    )


@router.get("/devices", openapi_extensions=allow(Role.VIEWER), responses=responses())
def list_devices(
    limit: Annotated[int, Query(ge=1, le=100)] = 50, cursor: params.Text = None
) -> DevicePage:
    queries = services().queries
    names, next_cursor = queries.devices(limit, cursor)
    # Only the caller's devices: a page may hold fewer than ``limit`` (docs/access.md).
    caller = current_caller()
    names = [name for name in names if caller.sees(name)]
    return DevicePage(
        items=[_totals_out(name, queries.device_totals(name)) for name in names],
        next_cursor=next_cursor,
    )


@router.get("/devices/<device>", openapi_extensions=allow(Role.VIEWER), responses=responses())
def get_device(device: str) -> DeviceOut:
    device = params.device(device)
    return _totals_out(device, services().queries.device_totals(device))


@router.get(
    "/devices/<device>/calendar", openapi_extensions=allow(Role.VIEWER), responses=responses()
)
def get_calendar(device: str, month: params.Text = None, tz: params.Text = "UTC") -> CalendarOut:
    device = params.device(device)
    year, month_number = parse_month(month or "")
    zone = parse_zone(tz or "")
    try:
        days = services().queries.calendar(device, year, month_number, zone)
    except CalendarError as exc:
        raise BadInput("tz", exc.message) from None
    return CalendarOut(
        device=device,
        month=f"{year:04d}-{month_number:02d}",
        tz=str(tz),
        days=[
            CalendarDayOut(
                date=day.date.isoformat(),
                has_video=day.has_video,
                segments=day.segments,
                bytes=day.bytes,
                video_ms=day.video_ms,
            )
            for day in days
        ],
    )


@router.get(
    "/devices/<device>/ranges", openapi_extensions=allow(Role.VIEWER), responses=responses()
)
def get_ranges(device: str, from_: params.FromTime = None, to: params.Time = None) -> RangesOut:
    device = params.device(device)
    start_ms, end_ms = params.window(from_, to, params.MAX_WINDOW_MS)
    spans = services().queries.ranges(device, start_ms, end_ms)
    return RangesOut(
        device=device,
        from_=iso_ms(start_ms),
        to=iso_ms(end_ms),
        ranges=[RangeOut(start=iso_ms(s), end=iso_ms(e)) for s, e in spans],
    )


@router.get(
    "/devices/<device>/segments", openapi_extensions=allow(Role.VIEWER), responses=responses()
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
    page = services().queries.segments_page(
        device, params.kinds(kind, KINDS), start_ms, end_ms, limit, cursor
    )
    joined = _joined(device, page.items)
    return SegmentPage(
        items=[
            _segment_out(e, annotations=joined.get(e.key, []) if joined is not None else None)
            for e in page.items
        ],
        next_cursor=page.next_cursor,
    )


@router.get(
    "/devices/<device>/segments/<kind>/<name>",
    openapi_extensions=allow(Role.VIEWER),
    responses=responses(404),
)
def get_segment(device: SegmentDevice, kind: SegmentKind, name: SegmentName) -> SegmentOut:
    """One segment by its kind and key file name (an entry's ``kind`` and ``name``): one
    GetItem in the serving generation's partition of the device and kind, one HEAD."""
    device = params.device(device)
    segment = params.segment(device, kind, name)
    svc = services()
    entry = svc.queries.segment(segment)
    joined = _joined(device, [entry])
    return _segment_out(
        entry, svc.presign(entry.key), joined.get(entry.key, []) if joined is not None else None
    )


@router.get(
    "/devices/<device>/playlist.m3u8",
    openapi_extensions=allow(Role.VIEWER),
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
    entries = services().queries.window_entries(device, "video", start_ms, end_ms)
    body = build_playlist(playlist_segments(entries))
    return Response(status_code=200, content_type=CONTENT_TYPE, body=body)


@router.get(
    "/devices/<device>/overlays", openapi_extensions=allow(Role.VIEWER), responses=responses()
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
    svc = services()
    page = svc.queries.segments_page(
        device, params.kinds(kind, OVERLAY_KINDS), start_ms, end_ms, limit, cursor
    )
    return SegmentPage(
        items=[_segment_out(e, svc.presign(e.key)) for e in page.items],
        next_cursor=page.next_cursor,
    )
