"""Answers to the API's questions from the read model, independent of HTTP (docs/api.md).

Each method states the DynamoDB requests it spends; the bounds are those of
docs/read-model.md. For the recent window (``fresh_window_ms``) segment answers
merge an S3 listing of the matching hour prefixes, so an object uploaded a
second ago is served although its event may still be queued; and a single
segment is checked against S3 before it is handed out (read repair).

Calendars, ranges and totals read what the stream consumer aggregates (bucket
and device items); ranges take their recent part from the segment answers
instead, since the aggregates follow the segment items a little behind
(query/ranges.py).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Final, Protocol

from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS
from video_index.core.cursors import decode_cursor, encode_cursor
from video_index.core.errors import BadInput, NotFound
from video_index.core.keys import (
    MAX_DURATION_MS,
    InvalidKeyError,
    SegmentKey,
    ValidKey,
    classify_key,
    format_start,
    hour_prefix,
    parse_key,
    validate_device,
)
from video_index.core.layout import (
    CONTROL_PK,
    RETIRED_SK,
    bucket_hour_ms,
    bucket_pk,
    bucket_sk,
    devices_pk,
    segment_pk,
    segment_sk,
)
from video_index.core.silence import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_SILENT_AFTER_SECONDS,
    silent_since_ms,
)
from video_index.core.timeunits import HOUR_MS, QUARTERS, from_epoch_ms
from video_index.query.activity import HourCounts
from video_index.query.calendar import CalendarDay, HourFigures, hours_to_read, month_calendar
from video_index.query.entries import Entry, KindTotals, Page, totals_of
from video_index.query.ranges import (
    Coverage,
    CoverageRead,
    CoverageSources,
    hour_floor,
    whole_ranges,
)

FILENAME_RE: Final = re.compile(
    r"^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z_[0-9]{1,9}_[a-z0-9]{1,64}\.[a-z0-9]{1,4}$"
)
#: Sort-key bound above every file name that starts with a given start ("~" > "_").
_AFTER_START: Final = "~"
GENERATION_TTL_SECONDS: Final = 10.0


@dataclass
class _GenerationCache:
    """The serving generation, re-read at most every few seconds (not a request per query).

    A rebuild drops the old generation only well after the switch, so a cached
    value is always a complete generation.
    """

    store: ReadModelStore
    clock: Callable[[], float]
    ttl_seconds: float = 10.0
    value: int | None = None
    read_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self) -> int:
        with self.lock:
            now = self.clock()
            if self.value is None or now - self.read_at > self.ttl_seconds:
                self.value = self.store.generations()[0]
                self.read_at = now
            return self.value


class ReadRepair(Protocol):
    """The write path, as a read that finds the read model stale reaches it: correct the
    entry of one segment from what S3 holds now (ingest's
    :meth:`~video_index.ingest.ingestor.Ingestor.repair`, handed in by
    :mod:`video_index.app.services`, so query never imports ingest)."""

    def repair(self, segment: SegmentKey) -> object: ...


class Queries:
    def __init__(
        self,
        store: ReadModelStore,
        objects: ObjectStore,
        repair: ReadRepair,
        *,
        gap_tolerance_ms: int,
        fresh_window_ms: int,
        clock: Callable[[], float] = time.time,
        generation_ttl_seconds: float = GENERATION_TTL_SECONDS,
        silent_after: Mapping[str, int] = DEFAULT_SILENT_AFTER_SECONDS,
        retention_days: Mapping[str, int] = DEFAULT_RETENTION_DAYS,
        clock_tolerance_ms: int = DEFAULT_CLOCK_TOLERANCE_SECONDS * 1000,
    ) -> None:
        self._store = store
        self._objects = objects
        self._repair = repair
        self.gap_tolerance_ms = gap_tolerance_ms
        self._fresh_window_ms = fresh_window_ms
        self._clock = clock
        self._generation = _GenerationCache(store, clock, generation_ttl_seconds)
        self.silent_after = silent_after
        self.retention_days = retention_days
        self.clock_tolerance_ms = clock_tolerance_ms

    def generation(self) -> int:
        return self._generation.get()

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # -- devices -------------------------------------------------------------------------

    def device_totals(self, device: str) -> dict[str, KindTotals]:
        """Per kind: segments, bytes, duration, first and last start. One GetItem of
        the device item, which the stream consumer keeps (``n:/b:/d:/f:/l:<kind>``)."""
        return totals_of(self._store.get(devices_pk(self.generation()), device) or {})

    def retired(self) -> set[str]:
        """The devices an operator retired (never silent): one GetItem of a control item,
        outside every generation, so a rebuild keeps it (docs/operations.md)."""
        return set((self._store.get(CONTROL_PK, RETIRED_SK) or {}).get("devices", ()))

    def device(self, device: str) -> tuple[dict[str, KindTotals], bool]:
        """One device's totals and whether it is retired: one BatchGetItem of both items."""
        item_key, retired_key = (devices_pk(self.generation()), device), (CONTROL_PK, RETIRED_SK)
        items = self._store.get_many([item_key, retired_key])
        retired = device in set(items.get(retired_key, {}).get("devices", ()))
        return totals_of(items.get(item_key, {})), retired

    def silent_since(self, totals: dict[str, KindTotals], retired: bool) -> int | None:
        """When the device fell silent (epoch ms), None while it uploads (or is retired)."""
        return silent_since_ms(
            {kind: t.last_start_ms for kind, t in totals.items()},
            self.now_ms(),
            self.silent_after,
            retired=retired,
        )

    def devices(self, limit: int, cursor: str | None) -> tuple[list[str], str | None]:
        after = decode_cursor(cursor, {"after": str})["after"] if cursor else None
        if after is not None:
            _check_device(after, "cursor")
        names, last = self._store.query_partition(
            devices_pk(self.generation()), after=after, limit=limit, attributes=("sk",)
        )
        devices = [item["sk"] for item in names]
        return devices, encode_cursor({"after": last}) if last else None

    # -- calendar ------------------------------------------------------------------------

    def calendar(self, device: str, year: int, month: int, tz: Any) -> list[CalendarDay]:
        """One Query: the video bucket items of the local month (≤ 746 items, one page)."""
        first, last = hours_to_read(year, month, tz)
        items = self._store.query_range(
            bucket_pk(self.generation(), device),
            bucket_sk("video", first),
            bucket_sk("video", last),
        )
        return month_calendar(year, month, tz, (_hour_figures(item) for item in items))

    def activity_hours(
        self, device: str, kind: str, first_ms: int, last_ms: int
    ) -> list[HourCounts]:
        """One Query: the bucket items of one kind for the UTC hours ``[first, last]``
        (≤ 745 small items for 31 days: one page)."""
        return [_hour_counts(item) for item in self.hour_items(device, kind, first_ms, last_ms)]

    def hour_items(
        self, device: str, kind: str, first_ms: int, last_ms: int
    ) -> Iterator[dict[str, Any]]:
        """The bucket items of one kind for the UTC hours ``[first, last]``: one Query."""
        return self._store.query_range(
            bucket_pk(self.generation(), device),
            bucket_sk(kind, first_ms),
            bucket_sk(kind, last_ms),
        )

    # -- segments and ranges -------------------------------------------------------------

    def window_entries(self, device: str, kind: str, start_ms: int, end_ms: int) -> Iterator[Entry]:
        """Present entries of one kind intersecting ``[start_ms, end_ms)``, by start.

        Read model for what is older than the fresh window, an S3 listing of the
        hour prefixes inside it. Requests: one per MB of segment items.
        """
        yield from self._entries(device, kind, start_ms, end_ms, after=None)

    def _entries(
        self, device: str, kind: str, start_ms: int, end_ms: int, after: str | None
    ) -> Iterator[Entry]:
        low_ms = start_ms - MAX_DURATION_MS[kind]
        split = max(low_ms, min(end_ms, self._fresh_from_ms()))
        if split > low_ms:
            low = format_start(from_epoch_ms(low_ms))
            if after is not None and after >= low:
                low = after + "\0"
            high = format_start(from_epoch_ms(split - 1)) + _AFTER_START
            if low <= high:
                pk = segment_pk(self.generation(), device, kind)
                for item in self._store.query_range(pk, low, high):
                    if item.get("present"):
                        entry = Entry.of_item(device, kind, item)
                        if entry.intersects(start_ms, end_ms):
                            yield entry
        if split < end_ms:
            for entry in self._listed(device, kind, split, end_ms):
                if (after is None or entry.filename > after) and entry.intersects(start_ms, end_ms):
                    yield entry

    def _fresh_from_ms(self) -> int:
        return self.now_ms() - self._fresh_window_ms

    def _listed(self, device: str, kind: str, start_ms: int, end_ms: int) -> Iterator[Entry]:
        """Current objects whose start lies in ``[start_ms, end_ms)``, from S3 itself."""
        hour = start_ms - start_ms % HOUR_MS
        while hour < end_ms:
            prefix = hour_prefix(kind, device, from_epoch_ms(hour))
            found: list[Entry] = []
            for obj in self._objects.list(prefix):
                classified = classify_key(obj.key)
                if isinstance(classified, ValidKey):
                    segment = classified.segment
                    if start_ms <= segment.start_ms < end_ms:
                        found.append(Entry.of_key(segment, obj.size, obj.etag, obj.received_ms))
            yield from sorted(found, key=lambda e: e.filename)
            hour += HOUR_MS

    def segments_page(
        self,
        device: str,
        kinds: Iterable[str],
        start_ms: int,
        end_ms: int,
        limit: int,
        cursor: str | None,
    ) -> Page:
        """Entries of the window, ``limit`` at a time, merged across kinds by start.

        The cursor holds only the last file name returned per kind: the partition
        always comes from the route's device and kind, and a file name outside
        the window is refused, so a cursor cannot reach another device or key.
        """
        kinds = list(kinds)
        positions = self._positions(cursor, kinds, start_ms, end_ms)
        merged: list[Entry] = []
        for kind in kinds:
            if positions.get(kind) == "":
                continue  # this kind is exhausted
            entries = self._entries(device, kind, start_ms, end_ms, positions.get(kind))
            merged.extend(islice(entries, limit + 1))
        merged.sort(key=lambda e: (e.start_ms, e.kind, e.filename))
        page, rest = merged[:limit], merged[limit:]
        if not rest:
            return Page(page, None)
        state: dict[str, str] = {}
        for kind in kinds:
            if positions.get(kind) == "" or not any(e.kind == kind for e in rest):
                state[kind] = ""  # exhausted
                continue
            returned = [e.filename for e in page if e.kind == kind]
            if returned:
                state[kind] = returned[-1]
            elif kind in positions:
                state[kind] = positions[kind]
        return Page(page, encode_cursor({"after": state}))

    def _positions(
        self, cursor: str | None, kinds: list[str], start_ms: int, end_ms: int
    ) -> dict[str, str]:
        if cursor is None:
            return {}
        raw = decode_cursor(cursor, {"after": dict})["after"]
        positions: dict[str, str] = {}
        for kind, name in raw.items():
            if kind not in kinds or not isinstance(name, str):
                raise BadInput("cursor", "does not belong to this query")
            if name and not FILENAME_RE.fullmatch(name):
                raise BadInput("cursor", "is not a cursor this API issued")
            if name:
                start = name.split("_", 1)[0]
                low = format_start(from_epoch_ms(start_ms - MAX_DURATION_MS[kind]))
                high = format_start(from_epoch_ms(end_ms))
                if not low <= start <= high:
                    raise BadInput("cursor", "points outside the requested window")
            positions[kind] = name
        return positions

    def ranges(self, device: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
        """Whole continuous ranges intersecting the window (not clipped to it)."""
        return self.coverage(device, start_ms, end_ms).ranges

    def coverage(self, device: str, start_ms: int, end_ms: int) -> Coverage:
        """Whole continuous ranges intersecting the window, with the overlaps read.

        The video buckets' hour coverage (and overlaps ``o``), and the segment entries
        for the recent part (from the hour the fresh window starts in): one bucket Query
        for a day whose ranges end within a day of it, plus one segment Query when the
        window reaches the recent part; more while a range runs on (query/ranges.py).
        """
        generation = self.generation()
        read = CoverageRead(self.gap_tolerance_ms)

        def hours(low_ms: int, high_ms: int) -> list[tuple[int, int]]:
            items = self._store.query_range(
                bucket_pk(generation, device),
                bucket_sk("video", low_ms),
                bucket_sk("video", high_ms - HOUR_MS),
            )
            return read.hours(items)

        def recent(low_ms: int, high_ms: int) -> list[tuple[int, int]]:
            entries = self.window_entries(device, "video", low_ms, high_ms)
            return read.files([(entry.start_ms, entry.end_ms) for entry in entries])

        sources = CoverageSources(hours, recent, hour_floor(self._fresh_from_ms()))
        return read.result(whole_ranges(sources, start_ms, end_ms, self.gap_tolerance_ms))

    # -- single segment ------------------------------------------------------------------

    def find(self, segment: SegmentKey) -> Entry | None:
        """The present entry of this key in the serving generation: one GetItem (the
        key's device, kind and file name are the item's partition and sort key)."""
        pk = segment_pk(self.generation(), segment.device, segment.kind)
        item = self._store.get(pk, segment_sk(segment))
        if item and item.get("present"):
            return Entry.of_item(segment.device, segment.kind, item)
        return None

    def present_keys(self, segments: list[SegmentKey]) -> set[str]:
        """The keys of ``segments`` whose segment the serving generation holds: one
        BatchGetItem per 100."""
        return self._store.present_segments(self.generation(), segments)

    def segment(self, segment: SegmentKey) -> Entry:
        """The segment of this key, checked against S3 (one GetItem, one HEAD).

        An entry whose object is gone (its event never arrived) is corrected now,
        through the same code path ingest uses, and answered :class:`NotFound`.
        """
        entry = self.find(segment)
        if entry is None:
            raise NotFound(
                "name", f"no {segment.kind} segment {segment.filename} for device {segment.device}"
            )
        if not self._objects.head(entry.key).present:
            self._repair.repair(parse_key(entry.key))
            raise NotFound("name", f"segment {segment.filename} no longer exists")
        return entry


def _hour_figures(item: dict[str, Any]) -> HourFigures:
    _, hour_ms = bucket_hour_ms(item["sk"])

    def four(prefix: str) -> tuple[int, int, int, int]:
        a, b, c, d = (int(item.get(f"{prefix}{q}", 0)) for q in range(QUARTERS))
        return a, b, c, d

    return HourFigures(hour_ms, four("n"), four("b"), four("d"), four("c"))


def _hour_counts(item: dict[str, Any]) -> HourCounts:
    figures = _hour_figures(item)
    return HourCounts(figures.hour_start_ms, figures.n, figures.b)


def _check_device(device: str, parameter: str) -> str:
    try:
        return validate_device(device)
    except InvalidKeyError as exc:
        raise BadInput(parameter, exc.reason) from None
