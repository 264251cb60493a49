"""Continuous ranges: maximal unions of intervals whose gaps are at most a tolerance."""

from __future__ import annotations

from collections.abc import Iterable


def merge_ranges(
    intervals: Iterable[tuple[int, int]], gap_tolerance_ms: int
) -> list[tuple[int, int]]:
    """Merge half-open ``[start, end)`` intervals (epoch ms); overlaps always merge.

    Two neighbours join when ``next.start - end_so_far <= gap_tolerance_ms``. The
    result does not depend on how the input was grouped, so ranges merged per
    page or per day can be merged again.
    """
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start - merged[-1][1] <= gap_tolerance_ms:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def clip_to_hours(start_ms: int, end_ms: int, hour_ms: int) -> list[tuple[int, int, int]]:
    """``(hour start, start, end)`` of each piece of ``[start, end)`` cut at the hours
    (``hour_ms`` long): what each hour's coverage holds of one segment."""
    pieces = []
    hour = start_ms - start_ms % hour_ms
    while hour < end_ms:
        pieces.append((hour, max(start_ms, hour), min(end_ms, hour + hour_ms)))
        hour += hour_ms
    return pieces


def flatten(runs: Iterable[tuple[int, int]]) -> list[int]:
    """``[s1, e1, s2, e2, …]``: how runs are stored in one attribute."""
    return [edge for run in runs for edge in run]


def unflatten(edges: Iterable[int]) -> list[tuple[int, int]]:
    values = [int(edge) for edge in edges]
    return list(zip(values[0::2], values[1::2], strict=True))


def add_runs(
    stored: Iterable[int], added: Iterable[tuple[int, int]], gap_tolerance_ms: int
) -> list[int]:
    """Stored runs (flattened) with intervals added: a union, so adding twice is adding
    once. Removing needs the remaining intervals (recompute with :func:`merge_ranges`)."""
    return flatten(merge_ranges([*unflatten(stored), *added], gap_tolerance_ms))


def intersections(runs: Iterable[tuple[int, int]], piece: tuple[int, int]) -> list[tuple[int, int]]:
    """The parts of ``piece`` that ``runs`` already cover (positive lengths only)."""
    start, end = piece
    return [(max(s, start), min(e, end)) for s, e in runs if max(s, start) < min(e, end)]


def add_covering(
    stored_runs: Iterable[int],
    stored_overlaps: Iterable[int],
    pieces: Iterable[tuple[int, int]],
    gap_tolerance_ms: int,
) -> tuple[list[int], list[int]]:
    """Coverage and overlaps (flattened) with ``pieces`` added one after the other.

    A piece's overlap is what the coverage held before it already covered, kept when it
    is longer than the tolerance or the whole piece: two files on the same moments (a
    clock that jumped back), not the few frames neighbouring files may share, nor a gap
    the tolerance bridged.
    """
    runs = unflatten(stored_runs)
    overlaps = unflatten(stored_overlaps)
    for piece in pieces:
        met = intersections(runs, piece)
        if sum(e - s for s, e in met) > min(gap_tolerance_ms, piece[1] - piece[0] - 1):
            overlaps += met
        runs = merge_ranges([*runs, piece], gap_tolerance_ms)
    return flatten(runs), flatten(merge_ranges(overlaps, 0))


def covering(
    pieces: Iterable[tuple[int, int]], gap_tolerance_ms: int
) -> tuple[list[int], list[int]]:
    """Coverage and overlaps of ``pieces`` counted afresh (in start order)."""
    return add_covering((), (), sorted(pieces), gap_tolerance_ms)
