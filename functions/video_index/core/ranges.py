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
