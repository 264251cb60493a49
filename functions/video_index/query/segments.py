"""The segments annotations point at, as the read model knows them."""

from __future__ import annotations

from video_index.api import params
from video_index.core.errors import NotFound
from video_index.core.keys import SegmentKey
from video_index.query.queries import Queries


class ReadModelSegments:
    """:class:`~video_index.annotations.service.SegmentDirectory` over the query layer."""

    def __init__(self, queries: Queries) -> None:
        self._queries = queries

    def locate(self, device: str, kind: str, name: str) -> SegmentKey:
        """The device's segment of this kind and key file name, checked against S3 (a
        GetItem, a HEAD); :class:`NotFound` naming ``target.name`` when there is none."""
        segment = params.segment(device, kind, name, ("target.kind", "target.name"))
        try:
            self._queries.segment(segment)
        except NotFound as exc:
            raise NotFound("target.name", exc.message) from None
        return segment

    def present(self, segments: list[SegmentKey]) -> set[str]:
        return self._queries.present_keys(segments)
