"""A window's timeline (``GET /devices/{d}/ranges``, docs/api.md#ranges): its whole ranges,
the overlaps a clock that jumped back left, and a reason for every gap.

The facts come from the product's own truths, each read once and only when a gap needs
it (docs/api.md#gaps gives the count):

* the ranges and overlaps: the video buckets' coverage (query/ranges.py), 1–2 requests;
* ``deleted``: the device's deletion windows in force, one Query of its ``win#`` partition
  in the deletions table (when the window has a gap);
* ``expired``: the retention setting, and the device's active holds, one Query of the
  holds table (when a gap lies before the retention cutoff);
* ``silent`` or ``missing``: the arrival history (``a``) of the device's buckets, one
  Query per kind (3) over the hours around the gaps left (when there are any);
* the copies of each overlap: the files from the first overlap to the last, one segment
  Query per MB of them (when the window has overlaps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from video_index.core.holding import HeldWindows
from video_index.core.keys import KINDS
from video_index.core.layout import ARRIVALS
from video_index.core.ranges import merge_ranges, unflatten
from video_index.core.timeunits import DAY_MS
from video_index.query.copies import one_copy_per_moment
from video_index.query.entries import Entry
from video_index.query.gaps import (
    Deletion,
    Gap,
    StoredFacts,
    explain_stored,
    gaps_in,
    silences,
    silent_or_missing,
)
from video_index.query.queries import Queries
from video_index.query.ranges import hour_ceil, hour_floor

Span = tuple[int, int]


class DeletionWindows(Protocol):
    """The deletions table's window items of a device (``video_index.aws.deletions``)."""

    def windows(self, device: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Copies:
    """The files of one copy of an overlap, and when S3 received them."""

    files: int
    received_from_ms: int | None
    received_to_ms: int | None

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> Copies:
        received = [e.received_ms for e in entries if e.received_ms is not None]
        return cls(len(entries), min(received, default=None), max(received, default=None))


@dataclass(frozen=True, slots=True)
class Overlap:
    start_ms: int
    end_ms: int
    played: Copies
    set_aside: Copies


@dataclass(frozen=True, slots=True)
class TimelineAnswer:
    ranges: list[Span]
    overlaps: list[Overlap]
    gaps: list[Gap]
    #: Gaps are explained up to here: the last ``silent_after`` before now may still fill.
    explained_until_ms: int


class Timeline:
    def __init__(
        self,
        queries: Queries,
        deletions: DeletionWindows | None,
        holds: HeldWindows | None,
        *,
        retention_days: Mapping[str, int] | None = None,
        silent_after: Mapping[str, int] | None = None,
    ) -> None:
        """Over ``queries`` (and its clock and settings, unless given): without a deletions
        table no request was ever recorded, without holds nothing is held."""
        self._queries = queries
        self._deletions = deletions
        self._holds = holds
        retention = retention_days if retention_days is not None else queries.retention_days
        silence = silent_after if silent_after is not None else queries.silent_after
        self._retention_ms = retention["video"] * DAY_MS
        self._silent_after_ms = silence.get("video", 0) * 1000

    def answer(self, device: str, start_ms: int, end_ms: int) -> TimelineAnswer:
        coverage = self._queries.coverage(device, start_ms, end_ms)
        now_ms = self._queries.now_ms()
        until = max(start_ms, min(end_ms, now_ms - self._silent_after_ms))
        gaps = gaps_in(coverage.ranges, start_ms, until)
        explained: list[Gap] = []
        if gaps:
            facts = self._stored_facts(device, gaps, now_ms, coverage.file_ms)
            explained, rest = explain_stored(gaps, facts)
            if rest:
                explained += silent_or_missing(rest, self._silences(device, rest, now_ms))
        overlaps = [(max(s, start_ms), min(e, end_ms)) for s, e in coverage.overlaps]
        overlaps = [(s, e) for s, e in overlaps if s < e]
        return TimelineAnswer(
            ranges=coverage.ranges,
            overlaps=self._copies(device, overlaps) if overlaps else [],
            gaps=sorted(explained, key=lambda gap: gap.start_ms),
            explained_until_ms=until,
        )

    def _stored_facts(
        self, device: str, gaps: list[Span], now_ms: int, reach_ms: int
    ) -> StoredFacts:
        low, high = gaps[0][0], gaps[-1][1]
        deletions = [
            Deletion.of_item(item)
            for item in (self._deletions.windows(device) if self._deletions else [])
            if item.get("kind") in (None, "video")
            and int(item["from_ms"]) - reach_ms < high
            and int(item["to_ms"]) + reach_ms > low
        ]
        cutoff = now_ms - self._retention_ms
        held: list[Span] = []
        if self._holds is not None and low < cutoff + reach_ms:
            windows = self._holds.windows(device, low, min(high, cutoff + reach_ms))
            held = [(hold.from_ms, hold.to_ms) for hold in windows]
        return StoredFacts(deletions, cutoff, held, reach_ms)

    def _silences(self, device: str, pieces: list[Span], now_ms: int) -> list[Span]:
        """Silences around ``pieces`` from every kind's arrival history: the hours from
        ``silent_after`` before the first to ``silent_after`` after the last (or now)."""
        pad = self._silent_after_ms
        if pad <= 0:  # the check is off: no camera is ever silent
            return []
        low = hour_floor(pieces[0][0] - pad)
        high = min(hour_ceil(pieces[-1][1] + pad), now_ms)
        arrivals: list[Span] = []
        for kind in KINDS:
            for item in self._queries.hour_items(device, kind, low, high - 1):
                arrivals += unflatten(item.get(ARRIVALS, ()))
        return silences(merge_ranges(arrivals, 0), low, high, self._silent_after_ms)

    def _copies(self, device: str, overlaps: list[Span]) -> list[Overlap]:
        """Which copy plays in each overlap (query/copies.py), from the files meeting it."""
        files = self._queries.window_entries(device, "video", overlaps[0][0], overlaps[-1][1])
        choice = one_copy_per_moment(files, self._queries.gap_tolerance_ms)
        found = []
        for start, end in overlaps:
            played = [e for e in choice.kept if e.intersects(start, end)]
            aside = [e for e, _ in choice.set_aside if e.intersects(start, end)]
            found.append(Overlap(start, end, Copies.of(played), Copies.of(aside)))
        return found
