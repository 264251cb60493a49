"""What one object contributes to the aggregates: the pure core of P(S3).

Ingest, reconcile and rebuild all change aggregates only through
:func:`transition_deltas`, the difference between the contribution of a key's
old state and its new state; so every path that moves a key keeps the sums
exact.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from video_index.core.keyhash import key_hash
from video_index.core.keys import SegmentKey
from video_index.core.layout import bucket_sk
from video_index.core.timeunits import HOUR_MS, QUARTER_MS

#: bucket sort key -> attribute name -> delta
BucketDeltas = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class ObjectState:
    """A key's object as S3 reports it: present with size and etag, or absent."""

    present: bool
    size: int = 0
    etag: str = ""
    #: When S3 received the object (epoch ms): the event's ``eventTime``, or the
    #: ``LastModified`` of a HEAD or a listing; None where unknown. Not part of the state:
    #: two answers about the same object are equal whatever they say about its arrival.
    received_ms: int | None = field(default=None, compare=False)


ABSENT = ObjectState(present=False)

__all__ = ["ABSENT", "BucketDeltas", "ObjectState", "contribution", "key_hash", "transition_deltas"]


def contribution(segment: SegmentKey, size: int) -> BucketDeltas:
    """The bucket figures one present object adds."""
    out: BucketDeltas = defaultdict(dict)
    start, end = segment.start_ms, segment.end_ms
    quarter = (start % HOUR_MS) // QUARTER_MS
    home = out[bucket_sk(segment.kind, start - start % HOUR_MS)]
    home[f"n{quarter}"] = 1
    home[f"b{quarter}"] = size
    home[f"d{quarter}"] = segment.duration_ms
    home["h"] = key_hash(segment.key)
    if segment.kind == "video":
        # Coverage of quarter starts strictly inside (start, end): lets a calendar
        # in any time zone see a segment that runs past local midnight.
        boundary = start - start % QUARTER_MS + QUARTER_MS
        while boundary < end:
            q = (boundary % HOUR_MS) // QUARTER_MS
            figures = out[bucket_sk(segment.kind, boundary - boundary % HOUR_MS)]
            figures[f"c{q}"] = figures.get(f"c{q}", 0) + 1
            boundary += QUARTER_MS
    return dict(out)


def transition_deltas(segment: SegmentKey, old: ObjectState, new: ObjectState) -> BucketDeltas:
    """Bucket deltas for a key moving from ``old`` to ``new``; empty when nothing changes."""
    deltas: BucketDeltas = defaultdict(dict)
    for state, sign in ((old, -1), (new, 1)):
        if state.present:
            for sk, figures in contribution(segment, state.size).items():
                for name, value in figures.items():
                    deltas[sk][name] = deltas[sk].get(name, 0) + sign * value
    return {
        sk: nonzero
        for sk, figures in deltas.items()
        if (nonzero := {name: value for name, value in figures.items() if value})
    }
