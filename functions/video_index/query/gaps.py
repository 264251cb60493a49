"""Every gap explains itself (docs/api.md#gaps): which truth of the product says why a
stretch of a window has no video. Pure code: the facts are read by
:mod:`video_index.query.timeline`.

A gap is a stretch of ``[from, explained_until)`` no continuous range covers. It is cut
into pieces, each with one reason, claimed in this order (the first that applies wins):

1. ``deleted``: a deletion request's window (video or every kind) covers it. A request
   deletes every file that *meets* its window, so the hole it leaves reaches past the
   window's edges by up to one file: the window is widened by the longest typical file
   length read (``reach``) on each side, within the gap;
2. ``expired``: it lies before the retention cutoff (``now − retention_days``, widened by
   the same reach: the file straddling the cutoff is kept whole) and no active hold covers
   it (a held moment past retention should still be there);
3. ``archived``: in a storage class that needs a restore. No source yet: the storage tiers
   do not exist, so no piece is archived;
4. ``silent``: the camera sent nothing then — the piece meets a *silence*: a stretch longer
   than the video ``silent_after`` (the threshold of ``silent_since`` and the SilentCameras
   alarm) in which S3 received no file of any kind from the camera, by the read model's
   arrival history;
5. ``missing``: none of those. The camera kept uploading around it (no silence), yet the
   footage is not there: lost on the way, or removed outside the product.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from video_index.core.ranges import merge_ranges

Span = tuple[int, int]


class Reason(StrEnum):
    DELETED = "deleted"
    EXPIRED = "expired"
    ARCHIVED = "archived"
    SILENT = "silent"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Deletion:
    """A deletion request's window, as its window item in the deletions table records it."""

    deletion_id: str
    from_ms: int
    to_ms: int
    #: Who asked and when (None for a window recorded before they were kept on it: ``GET
    #: /deletions/{id}`` has them).
    created_by: str | None = None
    created_at: str | None = None

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> Deletion:
        by, at = item.get("created_by"), item.get("created_at")
        return cls(
            deletion_id=str(item["deletion_id"]),
            from_ms=int(item["from_ms"]),
            to_ms=int(item["to_ms"]),
            created_by=str(by) if by is not None else None,
            created_at=str(at) if at is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Gap:
    start_ms: int
    end_ms: int
    reason: Reason
    deletion: Deletion | None = None


@dataclass(frozen=True, slots=True)
class StoredFacts:
    """What the product recorded about a device's window, besides its arrivals."""

    #: The video (or every-kind) deletion windows in force.
    deletions: Sequence[Deletion]
    #: The retention cutoff: footage that ended at or before it is removed by the job.
    cutoff_ms: int
    #: The device's active holds (kept past retention).
    held: Sequence[Span]
    #: How far past a window's edge (or the cutoff) a removed file may reach.
    reach_ms: int = 0
    #: Stretches in a storage class that needs a restore (none until storage tiers exist).
    archived: Sequence[Span] = ()


def gaps_in(ranges: Iterable[Span], start_ms: int, end_ms: int) -> list[Span]:
    """The stretches of ``[start, end)`` no range covers."""
    gaps: list[Span] = []
    at = start_ms
    for low, high in sorted(ranges):
        if low > at:
            gaps.append((at, min(low, end_ms)))
        at = max(at, high)
        if at >= end_ms:
            break
    if at < end_ms:
        gaps.append((at, end_ms))
    return [(low, high) for low, high in gaps if low < high]


def split(pieces: Iterable[Span], spans: Iterable[Span]) -> tuple[list[Span], list[Span]]:
    """The parts of ``pieces`` inside the union of ``spans``, and the parts outside."""
    union = merge_ranges(spans, 0)
    inside: list[Span] = []
    outside: list[Span] = []
    for start, end in pieces:
        at = start
        for low, high in union:
            if high <= at or low >= end:
                continue
            if low > at:
                outside.append((at, low))
            inside.append((max(low, at), min(high, end)))
            at = min(high, end)
        if at < end:
            outside.append((at, end))
    return inside, outside


def explain_stored(gaps: Sequence[Span], facts: StoredFacts) -> tuple[list[Gap], list[Span]]:
    """The pieces the stored facts explain (deleted, expired, archived), and the rest."""
    explained: list[Gap] = []
    rest = list(gaps)
    reach = facts.reach_ms
    for deletion in sorted(facts.deletions, key=lambda d: (d.from_ms, d.deletion_id)):
        inside, rest = split(rest, [(deletion.from_ms - reach, deletion.to_ms + reach)])
        explained += [Gap(s, e, Reason.DELETED, deletion) for s, e in inside]
    if rest and rest[0][0] < facts.cutoff_ms + reach:
        _, lapsed = split([(rest[0][0], facts.cutoff_ms + reach)], facts.held)
        inside, rest = split(rest, lapsed)
        explained += [Gap(s, e, Reason.EXPIRED) for s, e in inside]
    inside, rest = split(rest, facts.archived)
    explained += [Gap(s, e, Reason.ARCHIVED) for s, e in inside]
    return sorted(explained, key=lambda g: g.start_ms), sorted(rest)


def silences(
    arrivals: Iterable[Span], low_ms: int, high_ms: int, silent_after_ms: int
) -> list[Span]:
    """The stretches of ``(low, high)`` longer than ``silent_after_ms`` in which nothing
    arrived. What lies outside the read is unknown, so its edges count as arrivals: a
    silence is claimed only as far as the read shows it."""
    found: list[Span] = []
    last = low_ms
    for start, end in merge_ranges(arrivals, 0):
        if end < low_ms or start > high_ms:
            continue
        if start - last > silent_after_ms:
            found.append((last, start))
        last = max(last, end)
    if high_ms - last > silent_after_ms:
        found.append((last, high_ms))
    return found


def silent_or_missing(pieces: Iterable[Span], silent: Sequence[Span]) -> list[Gap]:
    """Each piece is ``silent`` when it meets a silence, else ``missing``."""
    return [
        Gap(s, e, Reason.SILENT if any(a < e and b > s for a, b in silent) else Reason.MISSING)
        for s, e in pieces
    ]
