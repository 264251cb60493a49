"""Media facts of video objects, learned once at ingest (docs/playback.md).

For each video object the read model keeps what its first bytes say: the
container (MPEG-TS, fragmented or progressive MP4, or unknown) and, for a
fragmented MP4, where its init ends — what a playlist needs to list the file so
that every player plays it. One ranged GET (``bytes=0-65535``) per object
version; the answers of the last few hundred versions are remembered, so an
event delivered twice to the same container, or written to two generations
during a rebuild, costs no second GET.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from aws_lambda_powertools import Logger

from video_index.aws.objects import ObjectMissing, ObjectStore
from video_index.core.keys import SegmentKey
from video_index.core.projection import ObjectState
from video_index.media.probe import PROBE_BYTES, Container, MediaFacts, playable, probe

logger = Logger(child=True)

#: Object versions whose facts are remembered (a few KB).
REMEMBERED: Final = 512


class MediaProbe:
    """The media facts of one video object version: a ranged GET and :func:`probe`."""

    def __init__(self, objects: ObjectStore) -> None:
        self._objects = objects
        self._known: OrderedDict[tuple[str, str], MediaFacts] = OrderedDict()
        #: Ranged GETs made (for the metric and the benchmark).
        self.requests = 0
        #: Video objects found not playable as their extension says.
        self.unplayable = 0

    def facts(
        self, segment: SegmentKey, state: ObjectState, version_id: str | None = None
    ) -> MediaFacts | None:
        """None for anything but a present video object."""
        if segment.kind != "video" or not state.present:
            return None
        memo = (segment.key, state.etag)
        known = self._known.get(memo)
        if known is not None:
            self._known.move_to_end(memo)
            return known
        found = self._probe(segment, state, version_id)
        if not playable(segment.ext, found):
            self.unplayable += 1
            logger.warning(
                "video object is not playable as its extension says",
                extra={"key": segment.key, "container": str(found.container)},
            )
        self._known[memo] = found
        if len(self._known) > REMEMBERED:
            self._known.popitem(last=False)
        return found

    def _probe(self, segment: SegmentKey, state: ObjectState, version_id: str | None) -> MediaFacts:
        if state.size == 0:
            return probe(b"", 0)
        self.requests += 1
        try:
            head = self._objects.get_bytes(
                segment.key, (0, min(state.size, PROBE_BYTES) - 1), version_id=version_id
            )
        except ObjectMissing:
            # Deleted since the event: its delete event follows and removes the entry.
            return MediaFacts(Container.UNKNOWN)
        return probe(head, state.size)
