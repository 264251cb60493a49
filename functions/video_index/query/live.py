"""A camera's live edge (docs/playback.md, "Live"): ``GET /devices/{device}/live.m3u8``.

A live HLS playlist of the device's newest video files, re-fetched by a player every
target duration: no end tag, a media sequence numbered from the files' start times (so it
only moves forward), each file with its ``EXT-X-PROGRAM-DATE-TIME`` and listed exactly as
a window's playlist lists it (:mod:`video_index.query.playback`,
:func:`~video_index.query.playlist.build_live_playlist`).

A poll must be cheap and fresh: players ask every few seconds for as long as they watch,
and each file should be listed as soon as it is uploaded. The newest files the read model
has come from one Query of the device's video partition, newest first, :data:`LIVE_PAGE`
items (a second page only when deleted files' tombstones lie at the edge, at most
:data:`LIVE_MAX_PAGES`), with their media facts (a probed fMP4 by byte range, an
unplayable file left out). The read model follows an upload by ingest's batching window
(about a second), so the files uploaded since its newest one come from S3: one LIST of the
hour folder it lies in, from just after it (two folders when an hour turned since; never
more than :data:`FRESH_LOOKBACK_MS` back), listed as a window's fresh files are (by their
extension, until ingest has probed them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from video_index.api import params
from video_index.api.context import service
from video_index.api.errors import responses
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.access import Role, allow
from video_index.core.audit import LIVE_READ
from video_index.core.keys import ValidKey, classify_key, format_start, hour_prefix
from video_index.core.layout import segment_pk
from video_index.core.timeunits import HOUR_MS
from video_index.query.entries import Entry
from video_index.query.playback import playlist_segments
from video_index.query.playlist import CONTENT_TYPE, build_live_playlist

#: The newest files a live playlist lists: six 2-second files are 12 s (RFC 8216 §6.2.2
#: wants at least three target durations), six 10-second ones a minute.
LIVE_FILES: Final = 6
#: Items per page of the newest-first Query (a few spare for tombstones of deleted files).
LIVE_PAGE: Final = LIVE_FILES + 4
#: Pages read at most (only deleted files at the edge take more than one).
LIVE_MAX_PAGES: Final = 3
#: How far back S3 is listed for files the read model does not have yet.
FRESH_LOOKBACK_MS: Final = 60_000
#: Sort keys of the segment partition: file names, which start with the start's digits.
_LOWEST, _HIGHEST = "0", "~"

router = Router()  # type: ignore[no-untyped-call]


class LiveEdge:
    """The newest video files of each device: the read model's, and S3's newer ones."""

    def __init__(
        self,
        store: ReadModelStore,
        objects: ObjectStore,
        generation: Callable[[], int],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._objects = objects
        self._generation = generation
        self._clock = clock

    def newest(self, device: str, count: int = LIVE_FILES) -> list[Entry]:
        """The ``count`` newest present video entries of ``device`` (by start), oldest
        first: one Query and one LIST (two when an hour turned since the read model's
        newest file)."""
        indexed = self.indexed(device, count)
        found = {entry.filename: entry for entry in self.uploaded_since(device, indexed)}
        found.update((entry.filename, entry) for entry in indexed)  # probed: its facts
        return sorted(found.values(), key=lambda e: (e.start_ms, e.filename))[-count:]

    def indexed(self, device: str, count: int) -> list[Entry]:
        """The read model's ``count`` newest present video entries of ``device``, oldest
        first: one Query of :data:`LIVE_PAGE` items, newest first (at most
        :data:`LIVE_MAX_PAGES` when tombstones lie at the edge)."""
        pk = segment_pk(self._generation(), device, "video")
        found: list[Entry] = []
        items = self._store.query_range(pk, _LOWEST, _HIGHEST, descending=True, page=LIVE_PAGE)
        for read, item in enumerate(items, start=1):
            if item.get("present"):
                found.append(Entry.of_item(device, "video", item))
            if len(found) == count or read == LIVE_PAGE * LIVE_MAX_PAGES:
                break
        return found[::-1]

    def uploaded_since(self, device: str, indexed: list[Entry]) -> list[Entry]:
        """The video files S3 holds that start after the newest of ``indexed`` (and at most
        :data:`FRESH_LOOKBACK_MS` before now): a LIST of each hour folder from there to
        now's, from just after that start."""
        now_ms = int(self._clock() * 1000)
        low_ms = max([now_ms - FRESH_LOOKBACK_MS, *(e.start_ms + 1 for e in indexed[-1:])])
        found: list[Entry] = []
        hour_ms = low_ms - low_ms % HOUR_MS
        while hour_ms <= now_ms:
            prefix = hour_prefix("video", device, _utc(hour_ms))
            after = prefix + format_start(_utc(low_ms)) if hour_ms <= low_ms else None
            for listed in self._objects.list(prefix, start_after=after):
                classified = classify_key(listed.key)
                if isinstance(classified, ValidKey):
                    found.append(Entry.of_key(classified.segment, listed.size, listed.etag))
            hour_ms += HOUR_MS
        return found


def _utc(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC)


@router.get(
    "/devices/<device>/live.m3u8",
    openapi_extensions=allow(Role.VIEWER, audit=LIVE_READ),
    responses=responses(
        404,
        ok={
            "description": (
                "An HLS live media playlist (RFC 8216) of the device's newest video files: "
                "no end tag, the media sequence numbered from the files' starts; empty "
                "while the device has no video. Re-fetched by players every target duration."
            ),
            "content": {CONTENT_TYPE: {"schema": {"type": "string"}}},
        },
    ),
)
def get_live_playlist(device: str) -> Response[str]:
    device = params.device(device)
    body = build_live_playlist(playlist_segments(service(LiveEdge).newest(device)))
    return Response(
        status_code=200,
        content_type=CONTENT_TYPE,
        body=body,
        headers={"Cache-Control": "no-store"},
    )
