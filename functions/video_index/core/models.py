"""Stored item shapes (what the read model keeps), separate from API response shapes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from video_index.core.projection import ObjectState


class SegmentRecord(BaseModel):
    """A segment item: the last state of one S3 key the read model has applied.

    ``seq`` is the key's highest applied S3 sequencer, right-padded so string order
    is S3's order; ``ver`` increases by one on every write, which makes every write
    an optimistic compare-and-set on the state it was computed from.
    """

    model_config = ConfigDict(frozen=True)

    present: bool
    size: int = 0
    etag: str = ""
    seq: str = ""
    ver: int = 0
    start: int
    end: int
    id: str
    #: Set once a write came from a HEAD without a sequencer: its ``seq`` no longer
    #: orders it against later events, so every later event for the key asks S3 too.
    observed: bool = False
    expires_at: int | None = None
    #: Media facts of a present video object (docs/playback.md), derived from its first
    #: bytes at ingest: its container (``mpegts``, ``fmp4``, ``mp4-progressive``,
    #: ``unknown``) and, for fragmented MP4, where its init ends and the decode time (ms)
    #: of its first fragment. None for other kinds and for items written before the facts
    #: existed.
    container: str | None = None
    init_end: int | None = None
    decode_start_ms: int | None = None
    #: When S3 received the present object (epoch ms; docs/read-model.md): the event's
    #: ``eventTime``, or ``LastModified`` where the state came from S3 itself. The stream
    #: consumer derives the camera's clock figures and its arrival history from it.
    rcv: int | None = None

    @property
    def state(self) -> ObjectState:
        return (
            ObjectState(self.present, self.size, self.etag, self.rcv)
            if self.present
            else ObjectState(present=False)
        )

    def to_attributes(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    @classmethod
    def from_attributes(cls, item: dict[str, Any]) -> SegmentRecord:
        return cls.model_validate(
            {k: int(v) if isinstance(v, Decimal) else v for k, v in item.items()}
        )


def received_of(old: SegmentRecord | None, new: ObjectState) -> int | None:
    """When S3 received ``new``'s object, for its segment item: what the change says, else
    what the item held for the same object (a HEAD of an emulator without ``LastModified``)."""
    if not new.present:
        return None
    if new.received_ms is not None:
        return new.received_ms
    return old.rcv if old is not None and old.present and old.state == new else None
