"""The segments annotations point at, as the read model knows them."""

from __future__ import annotations

from video_index.core.errors import NotFound
from video_index.core.keys import SegmentKey, parse_key
from video_index.query.queries import Queries


class ReadModelSegments:
    """:class:`~video_index.annotations.service.SegmentDirectory` over the query layer."""

    def __init__(self, queries: Queries) -> None:
        self._queries = queries

    def locate(self, device: str, segment_id: str) -> SegmentKey:
        """The device's segment with this id, checked against S3 (an index Query, a GetItem,
        a HEAD); :class:`NotFound` naming ``target.segment`` when there is none."""
        try:
            entry = self._queries.segment(device, segment_id)
        except NotFound as exc:
            raise NotFound("target.segment", exc.message) from None
        return parse_key(entry.key)

    def present(self, segments: list[SegmentKey]) -> set[str]:
        return self._queries.present_keys(segments)
