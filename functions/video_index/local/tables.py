"""The API's device answers as terminal tables: ``video-index devices`` and ``calendar``
print them, and so does ``video-index local --demo`` (from the running API's JSON).

Each takes the JSON the API answers (``GET /devices`` items, ``GET
/devices/{d}/calendar``), so the command line and the demo show the same thing.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from typing import Any, Final

from rich.table import Table
from rich.text import Text

WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def calendar_table(answer: dict[str, Any]) -> Table:
    """A month grid: each day with video in bold green with its minutes of video."""
    year, month = (int(part) for part in answer["month"].split("-"))
    days = {date.fromisoformat(d["date"]): d for d in answer["days"]}
    table = Table(
        title=f"{answer['device']} — {calendar.month_name[month]} {year} ({answer['tz']})"
    )
    for name in WEEKDAYS:
        table.add_column(name, justify="center")
    for week in calendar.Calendar().monthdatescalendar(year, month):
        cells: list[Text] = []
        for day in week:
            figures = days.get(day)
            if day.month != month or figures is None:
                cells.append(Text(""))
            elif figures["has_video"]:
                cell = Text(str(day.day), style="bold green")
                cell.append(f"\n{figures['video_ms'] / 60_000:.0f} min", style="")
                cells.append(cell)
            else:
                cells.append(Text(str(day.day), style="dim"))
        table.add_row(*cells)
    return table


def devices_table(items: list[dict[str, Any]], title: str = "devices") -> Table:
    """One row per device and kind: files, bytes, duration, first and last start, and the
    state — uploading, silent since when (the device's, and a kind's alone), retired."""
    table = Table(title=title, title_justify="left")
    for column in (
        "device",
        "kind",
        "segments",
        "bytes",
        "duration",
        "first start",
        "last start",
        "state",
    ):
        table.add_column(column, justify="right" if column in ("segments", "bytes") else "left")
    for item in items:
        kinds = item["kinds"] or {"": None}
        for number, (kind, figures) in enumerate(sorted(kinds.items())):
            state = _state(item) if number == 0 else ""
            if figures is None:  # known, but every file is gone
                table.add_row(Text(item["device"]), "—", "0", "0", "", "", "", state)
                continue
            if figures.get("silent_since") and not item.get("silent_since"):
                state = f"{state}; {kind} silent since {figures['silent_since']}".lstrip("; ")
            table.add_row(
                Text(item["device"] if number == 0 else ""),
                kind,
                str(figures["segments"]),
                f"{figures['bytes']:,}",
                duration(timedelta(milliseconds=figures["duration_ms"])),
                figures["first_start"] or "",
                figures["last_start"] or "",
                Text(state),
            )
    return table


def _state(item: dict[str, Any]) -> str:
    if item.get("retired"):
        return "retired"
    if item.get("silent_since"):
        return f"silent since {item['silent_since']}"
    return "uploading"


def duration(span: timedelta) -> str:
    seconds = span.total_seconds()
    return (
        f"{int(seconds // 60)} min {seconds % 60:04.1f} s" if seconds >= 60 else f"{seconds:.1f} s"
    )


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
