"""What the timeline and the clock figures look like in answers (docs/api.md)."""

from __future__ import annotations

from video_index.core.clock import ClockFigures
from video_index.core.timeunits import iso_ms
from video_index.query.gaps import Gap
from video_index.query.models import (
    ClockOut,
    CopiesOut,
    DeletionOut,
    GapOut,
    OverlapOut,
    RangeOut,
    RangesOut,
)
from video_index.query.timeline import Copies, TimelineAnswer


def clock_out(figures: ClockFigures | None, tolerance_ms: int) -> ClockOut | None:
    if figures is None:
        return None
    return ClockOut(
        ahead_ms=figures.ahead_ms,
        ahead=figures.is_ahead(tolerance_ms),
        upload_delay_ms=figures.upload_delay_ms,
        files=figures.files,
        since=iso_ms(figures.since_ms),
    )


def ranges_out(device: str, start_ms: int, end_ms: int, answer: TimelineAnswer) -> RangesOut:
    return RangesOut(
        device=device,
        from_=iso_ms(start_ms),
        to=iso_ms(end_ms),
        ranges=[RangeOut(start=iso_ms(s), end=iso_ms(e)) for s, e in answer.ranges],
        overlaps=[
            OverlapOut(
                start=iso_ms(overlap.start_ms),
                end=iso_ms(overlap.end_ms),
                played=_copies(overlap.played),
                set_aside=_copies(overlap.set_aside),
            )
            for overlap in answer.overlaps
        ],
        gaps=[gap_out(gap) for gap in answer.gaps],
        explained_until=iso_ms(answer.explained_until_ms),
    )


def _copies(copies: Copies) -> CopiesOut:
    def moment(epoch_ms: int | None) -> str | None:
        return iso_ms(epoch_ms) if epoch_ms is not None else None

    return CopiesOut(
        files=copies.files,
        received_from=moment(copies.received_from_ms),
        received_to=moment(copies.received_to_ms),
    )


def gap_out(gap: Gap) -> GapOut:
    deletion = gap.deletion
    return GapOut(
        start=iso_ms(gap.start_ms),
        end=iso_ms(gap.end_ms),
        reason=gap.reason.value,
        deletion=(
            DeletionOut(
                deletion_id=deletion.deletion_id,
                created_by=deletion.created_by,
                created_at=deletion.created_at,
            )
            if deletion is not None
            else None
        ),
    )
