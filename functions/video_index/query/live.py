"""A camera's live edge (docs/playback.md, "Live"): ``GET /devices/{device}/live.m3u8``.

A live HLS playlist of the device's newest video files, re-fetched by a player every
target duration: no end tag, a media sequence numbered from the files' start times (so it
only moves forward), each file with its ``EXT-X-PROGRAM-DATE-TIME`` and listed exactly as
a window's playlist lists it (:mod:`video_index.query.playback`,
:func:`~video_index.query.playlist.build_live_playlist`).

A poll must be cheap: players ask every few seconds for as long as they watch. The newest
files come from the read model alone: one Query of the device's video partition, newest
first, :data:`LIVE_PAGE` items (a second page only when deleted files' tombstones lie at
the edge, at most :data:`LIVE_MAX_PAGES`), plus the serving generation, which each warm
function re-reads at most every 10 seconds. No S3 listing: a LIST costs 20 times a small
Query's read, and the read model follows an upload within about a second (ingest's
batching window) — the live edge is that much later than S3's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from video_index.api import params
from video_index.api.context import service
from video_index.api.errors import responses
from video_index.aws.store import ReadModelStore
from video_index.core.access import Role, allow
from video_index.core.layout import segment_pk
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
#: Sort keys of the segment partition: file names, which start with the start's digits.
_LOWEST, _HIGHEST = "0", "~"

router = Router()  # type: ignore[no-untyped-call]


class LiveEdge:
    """The newest video files of each device, from the read model."""

    def __init__(self, store: ReadModelStore, generation: Callable[[], int]) -> None:
        self._store = store
        self._generation = generation

    def newest(self, device: str, count: int = LIVE_FILES) -> list[Entry]:
        """The ``count`` newest present video entries of ``device`` (by start), oldest
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


@router.get(
    "/devices/<device>/live.m3u8",
    openapi_extensions=allow(Role.VIEWER),
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
