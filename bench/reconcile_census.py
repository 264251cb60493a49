"""The reconcile benchmark's retention census: the instant it is judged at, the holds, and
the counts it must report (docs/holds.md, "Reconcile: held or forgotten").

Reconcile runs as deployed, with a holds table, so every run also counts the objects
past retention (``ops/retention_census.py``). The instant is fixed (not today's date):
five days after the report, as when the retention job has stopped for five days, so a
sixth of the world is past its 30 days (cutoff 2026-11-06 03:17 UTC) and most of that
is overdue (ended more than two days before the cutoff). Three holds keep some of it:
a whole day of one device, a window of another straddling the cutoff, and a released
one that keeps nothing.

The expected counts are worked out here from the world's segments and the windows
below by the rule docs/holds.md states ("a segment is held when its own
``[start, end)`` overlaps an active hold's ``[from, to)``"; overdue: past retention
by more than two days and held by nothing), not by the product's census.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from bench.reconcile_world import DAYS, DEVICES, DURATION_MS, World, device_name

#: The census instant: five days after the report was made (reconcile_setup.CREATED).
NOW: Final = datetime(2026, 12, 6, 3, 17, tzinfo=UTC)
RETENTION_DAYS: Final = {"video": 30, "sensor": 90, "analysis": 90}
GRACE_DAYS: Final = 2
CUTOFF_MS: Final = int((NOW - timedelta(days=RETENTION_DAYS["video"])).timestamp() * 1000)
OVERDUE_MS: Final = CUTOFF_MS - GRACE_DAYS * 86_400_000


@dataclass(frozen=True)
class HoldSpec:
    device: int
    start: datetime
    end: datetime
    released: bool = False

    @property
    def window(self) -> tuple[int, int]:
        return int(self.start.timestamp() * 1000), int(self.end.timestamp() * 1000)


HOLDS: Final = (
    HoldSpec(3, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC)),
    HoldSpec(4, datetime(2026, 11, 5, 12, tzinfo=UTC), datetime(2026, 11, 7, tzinfo=UTC)),
    HoldSpec(5, datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 4, tzinfo=UTC), True),
)


def write_holds(dynamodb: Any, table: str) -> None:
    """The holds table (as the stack makes it) with :data:`HOLDS` in it."""
    from video_index.aws.holds import HoldStore
    from video_index.core.table_schema import holds_table_definition
    from video_index.holds.service import Holds

    dynamodb.create_table(**holds_table_definition(table))
    dynamodb.get_waiter("table_exists").wait(TableName=table)
    holds = Holds(HoldStore(dynamodb, table), clock=lambda: NOW.timestamp())
    for spec in HOLDS:
        hold = holds.create(device_name(spec.device), *spec.window, "bench", "bench")
        if spec.released:
            holds.release(hold.hold_id, "bench", is_admin=False)


def expected_census(world: World) -> tuple[int, int]:
    """(held, overdue) the report must give for ``world`` at :data:`NOW`."""
    active: dict[int, list[tuple[int, int]]] = {}
    for spec in HOLDS:
        if not spec.released:
            active.setdefault(spec.device, []).append(spec.window)
    held = overdue = 0
    for device, start in _expired_starts(world):
        end = start + DURATION_MS
        if any(start < to and end > frm for frm, to in active.get(device, ())):
            held += 1
        elif end <= OVERDUE_MS:
            overdue += 1
    return held, overdue


def _expired_starts(world: World) -> Iterator[tuple[int, int]]:
    """(device, start ms) of every segment ending at or before the cutoff."""
    for device in range(DEVICES):
        for day in range(DAYS):
            segments = world.segments(device * DAYS + day)
            if segments and segments[0].start_ms + DURATION_MS > CUTOFF_MS:
                break  # days are in order: none later can be expired
            for segment in segments:
                if segment.start_ms + DURATION_MS <= CUTOFF_MS:
                    yield device, segment.start_ms
