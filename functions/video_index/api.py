"""HTTP routes (SPEC §6) on the Powertools resolver: parse and validate, call
:mod:`video_index.queries`, shape the answer. No DynamoDB or S3 code here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Final

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Query

from video_index.api_models import (
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
from video_index.api_services import ApiServices
from video_index.calendar import CalendarError, parse_month, parse_zone
from video_index.keys import (
    KINDS,
    InvalidKeyError,
    parse_key,
    to_epoch_ms,
    validate_device,
    validate_id,
    validate_kind,
)
from video_index.objects import ObjectStoreError
from video_index.playlist import CONTENT_TYPE, MAX_WINDOW_MS, PlaylistSegment, build_playlist
from video_index.queries import Entry, KindTotals, QueryError, iso_ms
from video_index.store import StoreError

logger = Logger(child=True)

MAX_WINDOW_DAYS: Final = 31
MAX_PARAMETER_LENGTH: Final = 4096
OVERLAY_KINDS: Final = ("sensor", "analysis")


app = APIGatewayHttpResolver(enable_validation=True)
_services: Callable[[], ApiServices] | None = None


def configure(services: Callable[[], ApiServices]) -> None:
    """Tell the routes where their services come from (built lazily by the handler)."""
    global _services
    _services = services


def services() -> ApiServices:
    if _services is None:
        raise RuntimeError("video_index.api.configure() was not called")
    return _services()


# -- errors: always a JSON body naming the parameter ------------------------------------


def _error(status: int, message: str, parameter: str | None = None) -> Response[Any]:
    return Response(
        status_code=status,
        content_type="application/json",
        body={"error": {"parameter": parameter, "message": message}},
    )


@app.exception_handler(QueryError)
def _query_error(exc: QueryError) -> Response[Any]:
    return _error(400, exc.message, exc.parameter)


class NotFoundError(LookupError):
    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message


@app.exception_handler(NotFoundError)
def _not_found_error(exc: NotFoundError) -> Response[Any]:
    return _error(404, exc.message, exc.parameter)


@app.exception_handler(RequestValidationError)
def _validation_error(exc: RequestValidationError) -> Response[Any]:
    first = exc.errors()[0] if exc.errors() else {}
    location = [str(part) for part in first.get("loc", ())]
    parameter = location[-1] if location else None
    return _error(400, str(first.get("msg", "invalid request")), parameter)


@app.exception_handler(StoreError)
def _store_error(exc: StoreError) -> Response[Any]:
    logger.exception("read model unavailable")
    return _error(503, "the read model is unavailable, retry later")


@app.exception_handler(ObjectStoreError)
def _object_store_error(exc: ObjectStoreError) -> Response[Any]:
    logger.exception("S3 unavailable")
    return _error(503, "the segment store is unavailable, retry later")


@app.not_found
def _not_found(_: Exception) -> Response[Any]:
    return _error(404, "no such route")


# -- parameter parsing ------------------------------------------------------------------


def _device(device: str) -> str:
    try:
        return validate_device(device)
    except InvalidKeyError as exc:
        raise QueryError("device", exc.reason) from None


def _instant(value: str | None, parameter: str) -> int:
    if value is None or value == "":
        raise QueryError(parameter, "is required (ISO 8601 with offset, e.g. 2026-11-30T12:00:00Z)")
    if len(value) > 64:
        raise QueryError(parameter, "is too long for a time")
    try:
        moment = datetime.fromisoformat(value.replace(" ", "+"))
    except ValueError:
        raise QueryError(parameter, f"{value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise QueryError(parameter, "must carry a UTC offset (e.g. Z or +01:00)")
    try:
        millis = to_epoch_ms(moment)
    except OverflowError:
        raise QueryError(parameter, "is out of range") from None
    if not 0 <= millis < 253_402_300_800_000:
        raise QueryError(parameter, "must lie between 1970 and 9999")
    return millis


def _window(start: str | None, end: str | None, max_ms: int) -> tuple[int, int]:
    start_ms, end_ms = _instant(start, "from"), _instant(end, "to")
    if start_ms >= end_ms:
        raise QueryError("to", "must be after from")
    if end_ms - start_ms > max_ms:
        raise QueryError("to", f"window is longer than {max_ms // 3_600_000} hours")
    return start_ms, end_ms


def _kinds(kind: str | None, allowed: tuple[str, ...]) -> list[str]:
    if kind is None or kind == "":
        return list(allowed)
    try:
        validate_kind(kind)
    except InvalidKeyError as exc:
        raise QueryError("kind", exc.reason) from None
    if kind not in allowed:
        raise QueryError("kind", f"must be one of {', '.join(allowed)}")
    return [kind]


def _segment_out(entry: Entry, url: str | None = None) -> SegmentOut:
    return SegmentOut(
        key=entry.key,
        kind=entry.kind,
        device=entry.device,
        id=entry.id,
        start=iso_ms(entry.start_ms),
        end=iso_ms(entry.end_ms),
        duration_ms=entry.duration_ms,
        size=entry.size,
        etag=entry.etag,
        url=url,
    )


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


Text = Annotated[str | None, Query(max_length=MAX_PARAMETER_LENGTH)]
Limit = Annotated[int, Query(ge=1, le=1000)]


# -- routes -----------------------------------------------------------------------------


@app.get("/devices")
def list_devices(
    limit: Annotated[int, Query(ge=1, le=100)] = 50, cursor: Text = None
) -> DevicePage:
    queries = services().queries
    names, next_cursor = queries.devices(limit, cursor)
    return DevicePage(
        items=[_totals_out(name, queries.device_totals(name)) for name in names],
        next_cursor=next_cursor,
    )


@app.get("/devices/<device>")
def get_device(device: str) -> DeviceOut:
    device = _device(device)
    return _totals_out(device, services().queries.device_totals(device))


@app.get("/devices/<device>/calendar")
def get_calendar(device: str, month: Text = None, tz: Text = "UTC") -> CalendarOut:
    device = _device(device)
    try:
        year, month_number = parse_month(month or "")
        zone = parse_zone(tz or "")
    except CalendarError as exc:
        raise QueryError("month" if str(exc).startswith("month") else "tz", str(exc)) from None
    try:
        days = services().queries.calendar(device, year, month_number, zone)
    except CalendarError as exc:
        raise QueryError("tz", str(exc)) from None
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


@app.get("/devices/<device>/ranges")
def get_ranges(
    device: str,
    from_: Annotated[str | None, Query(alias="from", max_length=64)] = None,
    to: Annotated[str | None, Query(max_length=64)] = None,
) -> RangesOut:
    device = _device(device)
    start_ms, end_ms = _window(from_, to, MAX_WINDOW_DAYS * 86_400_000)
    spans = services().queries.ranges(device, start_ms, end_ms)
    return RangesOut(
        device=device,
        from_=iso_ms(start_ms),
        to=iso_ms(end_ms),
        ranges=[RangeOut(start=iso_ms(s), end=iso_ms(e)) for s, e in spans],
    )


@app.get("/devices/<device>/segments")
def list_segments(
    device: str,
    from_: Annotated[str | None, Query(alias="from", max_length=64)] = None,
    to: Annotated[str | None, Query(max_length=64)] = None,
    kind: Annotated[str | None, Query(max_length=16)] = None,
    limit: Limit = 100,
    cursor: Text = None,
) -> SegmentPage:
    device = _device(device)
    start_ms, end_ms = _window(from_, to, MAX_WINDOW_DAYS * 86_400_000)
    page = services().queries.segments_page(
        device, _kinds(kind, KINDS), start_ms, end_ms, limit, cursor
    )
    return SegmentPage(items=[_segment_out(e) for e in page.items], next_cursor=page.next_cursor)


@app.get("/devices/<device>/segments/<segment_id>")
def get_segment(device: str, segment_id: str) -> SegmentOut:
    device = _device(device)
    try:
        validate_id(segment_id)
    except InvalidKeyError as exc:
        raise QueryError("id", exc.reason) from None
    svc = services()
    entry = svc.queries.find(device, segment_id)
    if entry is None:
        raise NotFoundError("id", f"no segment {segment_id} for device {device}")
    if not svc.objects.head(entry.key).present:
        # The object is gone but its event never arrived: correct the read model now,
        # through the same code path ingest uses.
        svc.ingestor.repair(parse_key(entry.key))
        raise NotFoundError("id", f"segment {segment_id} no longer exists")
    return _segment_out(entry, svc.presign(entry.key))


@app.get("/devices/<device>/playlist.m3u8")
def get_playlist(
    device: str,
    from_: Annotated[str | None, Query(alias="from", max_length=64)] = None,
    to: Annotated[str | None, Query(max_length=64)] = None,
) -> Response[str]:
    device = _device(device)
    start_ms, end_ms = _window(from_, to, MAX_WINDOW_MS)
    svc = services()
    entries = svc.queries.window_entries(device, "video", start_ms, end_ms)
    body = build_playlist(
        (PlaylistSegment(e.start_ms, e.duration_ms, svc.presign(e.key)) for e in entries),
        svc.queries.gap_tolerance_ms,
    )
    return Response(status_code=200, content_type=CONTENT_TYPE, body=body)


@app.get("/devices/<device>/overlays")
def list_overlays(
    device: str,
    from_: Annotated[str | None, Query(alias="from", max_length=64)] = None,
    to: Annotated[str | None, Query(max_length=64)] = None,
    kind: Annotated[str | None, Query(max_length=16)] = None,
    limit: Limit = 100,
    cursor: Text = None,
) -> SegmentPage:
    device = _device(device)
    start_ms, end_ms = _window(from_, to, MAX_WINDOW_MS)
    svc = services()
    page = svc.queries.segments_page(
        device, _kinds(kind, OVERLAY_KINDS), start_ms, end_ms, limit, cursor
    )
    return SegmentPage(
        items=[_segment_out(e, svc.presign(e.key)) for e in page.items],
        next_cursor=page.next_cursor,
    )


@app.get("/openapi.json")
def openapi() -> Response[str]:
    return Response(
        status_code=200,
        content_type="application/json",
        body=app.get_openapi_json_schema(title="video-index", version="1"),
    )
