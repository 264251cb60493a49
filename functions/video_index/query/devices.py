"""The device answers (``GET /devices``, ``/devices/{d}``, ``/devices/{d}/calendar``) built
from the query layer: one shape for the HTTP routes and the ``video-index devices`` and
``calendar`` commands, so the command line shows what the API shows."""

from __future__ import annotations

from collections.abc import Iterator

from video_index.core.clock import combined
from video_index.core.errors import BadInput
from video_index.core.timeunits import iso_ms
from video_index.query.calendar import CalendarError, parse_month, parse_zone
from video_index.query.entries import KindTotals
from video_index.query.models import CalendarDayOut, CalendarOut, DeviceOut, KindTotalsOut
from video_index.query.queries import Queries
from video_index.query.shapes import clock_out

#: Device names one Query page of the devices partition asks for when all are listed.
NAMES_PAGE = 1000


def device_out(
    queries: Queries, device: str, totals: dict[str, KindTotals], retired: bool
) -> DeviceOut:
    """A device's totals per kind, each kind's retention, silence and camera clock, and the
    device's."""

    def since(chosen: dict[str, KindTotals]) -> str | None:
        moment = queries.silent_since(chosen, retired)
        return iso_ms(moment) if moment is not None else None

    tolerance = queries.clock_tolerance_ms
    return DeviceOut(
        device=device,
        kinds={
            kind: KindTotalsOut(
                segments=t.segments,
                bytes=t.bytes,
                duration_ms=t.duration_ms,
                first_start=iso_ms(t.first_start_ms) if t.first_start_ms is not None else None,
                last_start=iso_ms(t.last_start_ms) if t.last_start_ms is not None else None,
                retention_days=queries.retention_days.get(kind),
                silent_since=since({kind: t}),
                clock=clock_out(t.clock, tolerance),
            )
            for kind, t in sorted(totals.items())
        },
        silent_since=since(totals),
        retired=retired,
        clock=clock_out(combined(t.clock for t in totals.values()), tolerance),
    )


def calendar_out(queries: Queries, device: str, month: str | None, tz: str | None) -> CalendarOut:
    """The month's days in the zone ``tz`` (``month`` ``YYYY-MM``; a bad one: BadInput)."""
    year, month_number = parse_month(month or "")
    zone = parse_zone(tz or "")
    try:
        days = queries.calendar(device, year, month_number, zone)
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


def device_names(queries: Queries) -> Iterator[str]:
    """Every device the read model knows (it has had footage), in name order."""
    cursor: str | None = None
    while True:
        names, cursor = queries.devices(NAMES_PAGE, cursor)
        yield from names
        if cursor is None:
            return
