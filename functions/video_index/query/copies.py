"""One copy of each moment (docs/playback.md#overlapping-copies): pure code.

A camera whose clock jumps back (a reboot without a time source, a wrong NTP answer)
records footage under moments it already recorded: two files, two keys, both kept — each
is a distinct truth S3 holds. A player must still play each moment once, so a file that
shares more than the gap tolerance (or all of itself) with the files kept is set aside,
file by file, by this rule:

* the copy whose key **agrees with its arrival** wins: S3 received it at or after its end
  (within the clock tolerance), and the soonest after it. The footage recorded before the
  jump arrived on time; the footage recorded after it arrived long after the moments its
  key names (an hour late, for a jump of an hour). And when a clock that ran ahead is set
  back, the files made while it ran ahead arrived *before* their end: they lose to the
  files made after the correction;
* a file whose arrival is unknown (an item written before receipts were kept) ranks last;
  ties go to the file name, so the choice never depends on the order of a listing.

A file is played whole or not at all (a playlist lists files): where two copies are cut
at different moments, a stretch of less than one file may go unplayed rather than be
played twice.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

from video_index.core.timeunits import iso_ms
from video_index.query.entries import Entry

Span = tuple[int, int]


def rank(entry: Entry, tolerance_ms: int) -> tuple[int, int, str]:
    """Lower plays first: arrival agreeing with the key, then least late; ahead, then
    least ahead; unknown arrival last; the file name breaks ties."""
    if entry.received_ms is None:
        return (2, 0, entry.filename)
    lateness = entry.received_ms - entry.end_ms
    if lateness >= -tolerance_ms:
        return (0, lateness, entry.filename)
    return (1, -lateness, entry.filename)


@dataclass
class Choice:
    """The files to play (by start) and each file set aside, with one it overlaps."""

    kept: list[Entry] = field(default_factory=list)
    set_aside: list[tuple[Entry, Entry]] = field(default_factory=list)

    def notes(self) -> list[str]:
        """One playlist comment per file set aside (docs/playback.md)."""
        return [
            f"video-index: {_said(aside)} overlaps {_said(played)}, which plays instead"
            for aside, played in self.set_aside
        ]


def _said(entry: Entry) -> str:
    received = iso_ms(entry.received_ms) if entry.received_ms is not None else "unknown"
    return f"{entry.filename} (received {received})"


def one_copy_per_moment(entries: Iterable[Entry], tolerance_ms: int) -> Choice:
    """Choose among overlapping files (more than ``tolerance_ms``, or all of one, in common) by
    :func:`rank`; files that overlap nothing are all kept."""
    choice = Choice()
    kept = _Kept()
    for entry in sorted(entries, key=lambda e: rank(e, tolerance_ms)):
        length = entry.end_ms - entry.start_ms
        if kept.overlap(entry.start_ms, entry.end_ms) > min(tolerance_ms, length - 1):
            choice.set_aside.append((entry, kept.owner(entry.start_ms, entry.end_ms)))
        else:
            kept.add(entry)
            choice.kept.append(entry)
    choice.kept.sort(key=lambda e: (e.start_ms, e.filename))
    choice.set_aside.sort(key=lambda pair: (pair[0].start_ms, pair[0].filename))
    return choice


class _Kept:
    """The files kept so far: their union (disjoint spans, by start) and the files by start."""

    def __init__(self) -> None:
        self.union: list[Span] = []
        self.starts: list[tuple[int, str]] = []
        self.files: list[Entry] = []
        self.longest_ms = 0

    def overlap(self, start_ms: int, end_ms: int) -> int:
        """How much of ``[start, end)`` the kept files cover (ms)."""
        covered = 0
        for low, high in reversed(self.union[: bisect_left(self.union, (end_ms, end_ms))]):
            if high <= start_ms:  # disjoint and sorted: every earlier span ends earlier still
                break
            covered += min(high, end_ms) - max(low, start_ms)
        return covered

    def owner(self, start_ms: int, end_ms: int) -> Entry:
        """The kept file sharing the most of ``[start, end)`` (one that meets it exists)."""
        first = bisect_left(self.starts, (start_ms - self.longest_ms, ""))
        last = bisect_left(self.starts, (end_ms, ""))
        meeting = self.files[first:last]
        return max(meeting, key=lambda f: min(f.end_ms, end_ms) - max(f.start_ms, start_ms))

    def add(self, entry: Entry) -> None:
        at = bisect_left(self.starts, (entry.start_ms, entry.filename))
        self.starts.insert(at, (entry.start_ms, entry.filename))
        self.files.insert(at, entry)
        self.longest_ms = max(self.longest_ms, entry.end_ms - entry.start_ms)
        low, high = entry.start_ms, entry.end_ms
        kept = [(s, e) for s, e in self.union if e < low or s > high]
        joined = [(s, e) for s, e in self.union if not (e < low or s > high)]
        low = min([low, *(s for s, _ in joined)])
        high = max([high, *(e for _, e in joined)])
        self.union = sorted([*kept, (low, high)])
