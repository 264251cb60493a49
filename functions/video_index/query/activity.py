"""Activity of one device: how many files of a kind started in each step of a window.

Pure code, like :mod:`video_index.query.calendar`: the read model already keeps, per
device, kind and UTC hour, ``n<q>`` files starting in quarter hour ``q`` and their bytes
``b<q>`` (docs/read-model.md, bucket items). A step of ``PT15M``, ``PT1H`` or ``P1D``
is a whole number of quarters in every current zone (offsets are multiples of 15
minutes), so each step's figures are sums of quarters: the route answers a 31-day
window from one Query of at most 745 bucket items (one page), whatever the step.

Steps are local to the zone ``tz``: a ``P1D`` step is a local day (23 or 25 hours on a
daylight-saving change), a ``PT1H`` step a local hour (a repeated hour is two steps, told
apart by their offsets; a skipped one is absent). A step is a run of consecutive quarters
whose local (date) / (date, hour, offset) / (quarter) is the same; the answer lists every
step intersecting ``[from, to)``, zeros included, the first one starting at or before
``from`` and the last one ending at or after ``to``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo

from video_index.core.errors import BadInput
from video_index.core.timeunits import HOUR_MS, QUARTER_MS, QUARTERS

STEPS: Final = ("PT15M", "PT1H", "P1D")
_UTC: Final = datetime.UTC


@dataclass(frozen=True, slots=True)
class HourCounts:
    """One bucket item's count figures: files starting in quarter q and their bytes."""

    hour_start_ms: int
    n: tuple[int, int, int, int]
    b: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Step:
    start_ms: int
    end_ms: int
    count: int
    bytes: int


def parse_step(text: str | None) -> str:
    if text is None or text == "":
        return "PT1H"
    if text not in STEPS:
        raise BadInput("step", f"must be one of {', '.join(STEPS)}")
    return text


def _step_key(step: str, tz: ZoneInfo) -> Callable[[int], Hashable]:
    """What a quarter's local time must share with its neighbours to be in the same step."""

    def local(ms: int) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(ms / 1000, _UTC).astimezone(tz)

    if step == "P1D":
        return lambda ms: local(ms).date()
    if step == "PT1H":
        return lambda ms: (lambda t: (t.date(), t.hour, t.utcoffset()))(local(ms))
    return lambda ms: ms


def step_bounds(start_ms: int, end_ms: int, step: str, tz: ZoneInfo) -> list[int]:
    """The boundaries of the steps intersecting ``[start_ms, end_ms)``: ``[b0, b1, …, bn]``
    with ``b0 <= start_ms < … < end_ms <= bn``, each a UTC quarter-hour instant."""
    key = _step_key(step, tz)
    first = start_ms - start_ms % QUARTER_MS
    # Walk back to the first quarter of the step holding ``start_ms`` (≤ 25 hours back).
    while key(first - QUARTER_MS) == key(first):
        first -= QUARTER_MS
    bounds = [first]
    quarter = first
    current = key(first)
    while True:
        quarter += QUARTER_MS
        following = key(quarter)
        if following != current:
            bounds.append(quarter)
            current = following
            if quarter >= end_ms:
                return bounds


def activity(
    start_ms: int, end_ms: int, step: str, tz: ZoneInfo, hours: Iterable[HourCounts]
) -> list[Step]:
    """Every step of the window with the files starting in it (``hours``: bucket items of
    one kind, any order; quarters outside the steps are ignored)."""
    bounds = step_bounds(start_ms, end_ms, step, tz)
    count = [0] * (len(bounds) - 1)
    size = [0] * (len(bounds) - 1)
    index = {
        quarter: i
        for i in range(len(bounds) - 1)
        for quarter in range(bounds[i], bounds[i + 1], QUARTER_MS)
    }
    for hour in hours:
        if hour.hour_start_ms % HOUR_MS:
            raise ValueError(f"hour_start_ms {hour.hour_start_ms} is not a UTC hour start")
        for q in range(QUARTERS):
            i = index.get(hour.hour_start_ms + q * QUARTER_MS)
            if i is not None:
                count[i] += hour.n[q]
                size[i] += hour.b[q]
    return [Step(bounds[i], bounds[i + 1], count[i], size[i]) for i in range(len(bounds) - 1)]


def hours_to_read(bounds: list[int]) -> tuple[int, int]:
    """First and last UTC hour start whose bucket items hold the steps' quarters."""
    first, last_quarter = bounds[0], bounds[-1] - QUARTER_MS
    return first - first % HOUR_MS, last_quarter - last_quarter % HOUR_MS
