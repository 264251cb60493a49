"""A read model held in memory, for the largest-answer tests (tests/query/test_limits.py).

Loading and querying a day of 1 s segments (86,400 items in one partition) takes moto
minutes: its Query sorts the whole partition for every 1 MB page. These tests measure
answer sizes, not the engine (tests/query/test_api.py covers the route over moto), so
the real query layer reads this double instead: the same items, ``query_range`` in sort
order, and a count of the items it handed out. Any other store call fails the test.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from video_index.core.keys import SegmentKey
from video_index.query.queries import Queries


class MemoryReadModel:
    """Segment items of generation 1, by partition, in sort-key order."""

    def __init__(self) -> None:
        self._partitions: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
        #: Items handed out by ``query_range`` so far.
        self.items_read = 0

    def load(self, items: list[dict[str, Any]]) -> None:
        for item in sorted(items, key=lambda i: (i["pk"], i["sk"])):
            keys, values = self._partitions.setdefault(item["pk"], ([], []))
            keys.append(item["sk"])
            values.append(item)

    def generations(self) -> list[int]:
        return [1]

    def query_range(
        self, pk: str, low: str, high: str, *, descending: bool = False
    ) -> Iterator[dict[str, Any]]:
        assert not descending
        keys, values = self._partitions.get(pk, ([], []))
        for index in range(bisect.bisect_left(keys, low), bisect.bisect_right(keys, high)):
            self.items_read += 1
            yield values[index]

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the largest-answer tests do not expect store.{name}")


class NoObjects:
    """An object store the windows of these tests never reach (older than the fresh window)."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected S3 call: {name}")


def fmp4_items(device: str, start: datetime, count: int, duration_ms: int) -> list[dict[str, Any]]:
    """``count`` back-to-back fragmented-MP4 segment items from ``start``, as ingest writes
    them once it has probed the files (container and init end: the playlist lists each
    file's init and media by byte range, its longest form)."""
    items = []
    for index in range(count):
        moment = start + timedelta(milliseconds=index * duration_ms)
        segment = SegmentKey(
            kind="video",
            device=device,
            start=moment,
            duration_ms=duration_ms,
            id=f"{index:016x}",
            ext="mp4",
        )
        items.append(
            {
                "pk": f"g1#seg#{device}#video",
                "sk": segment.filename,
                "present": True,
                "size": 250_000 + index % 9_973,  # ~2 Mbit/s of 1 s files
                "etag": f"{index:032x}",
                "start": segment.start_ms,
                "end": segment.end_ms,
                "id": segment.id,
                "container": "fmp4",
                "init_end": 1_200 + index % 97,
            }
        )
    return items


def memory_queries(store: MemoryReadModel, now: datetime) -> Queries:
    """The real query layer over ``store``, at ``now``."""
    return Queries(
        store,  # type: ignore[arg-type]
        NoObjects(),  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]  # read repair: no GET of these tests needs it
        gap_tolerance_ms=1000,
        fresh_window_ms=900_000,
        clock=now.timestamp,
    )
