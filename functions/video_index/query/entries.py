"""What the query layer hands to the routes: segment entries, totals, pages.

An :class:`Entry` is one segment as the API shows it (docs/api.md), whether it
came from a read-model item or from a fresh S3 listing. Cursors:
:mod:`video_index.core.cursors`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from video_index.core.clock import ClockFigures, figures
from video_index.core.keys import SegmentKey
from video_index.core.layout import RECEIVED, device_total, key_of_segment_item, segment_pk
from video_index.media.probe import Container, MediaFacts, playable


@dataclass(frozen=True, slots=True)
class Entry:
    """One segment entry, from the read model or a fresh S3 listing."""

    kind: str
    device: str
    filename: str
    start_ms: int
    end_ms: int
    size: int
    etag: str
    id: str
    #: Media facts of a video entry (docs/playback.md); None when not probed (an entry
    #: from a fresh listing, or an item written before the facts existed).
    container: str | None = None
    init_end: int | None = None
    decode_start_ms: int | None = None
    #: When S3 received the object (epoch ms), where known (docs/read-model.md: ``rcv``).
    received_ms: int | None = None

    @property
    def ext(self) -> str:
        return self.filename.rsplit(".", 1)[1]

    @property
    def facts(self) -> MediaFacts | None:
        if self.container is None:
            return None
        return MediaFacts(Container(self.container), self.init_end, self.decode_start_ms)

    @property
    def playable(self) -> bool:
        """Whether a player can play this video entry (an unprobed one: by its extension)."""
        if self.kind != "video":
            return False
        facts = self.facts
        return facts is None or playable(self.ext, facts)

    @property
    def key(self) -> str:
        return key_of_segment_item(segment_pk(0, self.device, self.kind), self.filename)

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    def intersects(self, start_ms: int, end_ms: int) -> bool:
        """Half-open overlap; a point-in-time entry (duration 0) counts where it lies."""
        if self.start_ms == self.end_ms:
            return start_ms <= self.start_ms < end_ms
        return self.start_ms < end_ms and self.end_ms > start_ms

    @classmethod
    def of_item(cls, device: str, kind: str, item: dict[str, Any]) -> Entry:
        """The entry a present segment item stands for."""
        return cls(
            kind=kind,
            device=device,
            filename=str(item["sk"]),
            start_ms=int(item["start"]),
            end_ms=int(item["end"]),
            size=int(item["size"]),
            etag=str(item["etag"]),
            id=str(item["id"]),
            container=item.get("container"),
            init_end=_int_or_none(item.get("init_end")),
            decode_start_ms=_int_or_none(item.get("decode_start_ms")),
            received_ms=_int_or_none(item.get(RECEIVED)),
        )

    @classmethod
    def of_key(
        cls, segment: SegmentKey, size: int, etag: str, received_ms: int | None = None
    ) -> Entry:
        """The entry of a listed object."""
        return cls(
            kind=segment.kind,
            device=segment.device,
            filename=segment.filename,
            start_ms=segment.start_ms,
            end_ms=segment.end_ms,
            size=size,
            etag=etag,
            id=segment.id,
            received_ms=received_ms,
        )


@dataclass(frozen=True, slots=True)
class KindTotals:
    segments: int = 0
    bytes: int = 0
    duration_ms: int = 0
    first_start_ms: int | None = None
    last_start_ms: int | None = None
    #: The kind's last hour of arrivals against the camera's clock (core/clock.py).
    clock: ClockFigures | None = None


def totals_of(item: dict[str, Any]) -> dict[str, KindTotals]:
    """Each kind's totals on a device item (``n:/b:/d:/f:/l:/k:<kind>``)."""

    def optional(name: str, kind: str) -> int | None:
        value = item.get(device_total(name, kind))
        return int(value) if value is not None else None

    totals: dict[str, KindTotals] = {}
    for name, value in item.items():
        figure, _, kind = name.partition(":")
        if figure == "n" and kind and int(value) > 0:  # n = 0: every segment is gone
            b, d, f, last = (optional(figure, kind) for figure in "bdfl")
            clock = figures(item.get(device_total("k", kind)))
            totals[kind] = KindTotals(int(value), b or 0, d or 0, f, last, clock)
    return totals


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None


def _int_or_none(value: Any) -> int | None:
    return int(value) if value is not None else None
