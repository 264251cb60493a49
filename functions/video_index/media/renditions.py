"""Fragmented renditions of camera files no HLS player plays as they are (docs/playback.md).

A progressive MP4 (samples described in ``moov``, no ``moof``) is not an HLS
segment: hls.js cannot demux it and FFmpeg keeps only the first file's ``moov``.
Cameras that do not use the product's uploader still upload such files, so the
product serves a *rendition*: the same packets stream-copied into fragmented MP4
(no re-encoding), stored beside the source as two objects,
``renditions/<source key>/init.mp4`` (``ftyp`` + ``moov``) and ``.../data.m4s``
(the fragments), listed in the playlist as the file's ``EXT-X-MAP`` and media.

Renditions are derived data: outside ``v1/`` (never indexed, no events),
rebuildable from their source at any time, removed when the source is removed
(ingest) and expiring with the video retention (a lifecycle rule). Each records the
source's ETag it was made from, and is served only while that is the source's ETag. They are made
on the first request for one, not at ingest: most recorded video is never
watched, so rendering every progressive file at upload would pay compute and
storage for footage nobody plays (figures in docs/playback.md).
"""

from __future__ import annotations

from typing import Final

from video_index.aws.objects import ObjectStore
from video_index.core.contract import RENDITIONS_PREFIX
from video_index.core.errors import Conflict
from video_index.core.keys import parse_key
from video_index.core.timeunits import to_epoch_ms
from video_index.media.probe import PROBE_BYTES, Container, probe

#: Sources larger than this are not rendered on demand (the API function's memory).
MAX_RENDITION_SOURCE_BYTES: Final = 512 * 1024 * 1024
INIT_NAME: Final = "init.mp4"
DATA_NAME: Final = "data.m4s"
#: User metadata of both rendition objects: the ETag of the source they were made from.
SOURCE_ETAG_METADATA: Final = "source-etag"


def rendition_keys(key: str) -> tuple[str, str]:
    """The init and media keys of the rendition of the source ``key``."""
    folder = f"{RENDITIONS_PREFIX}{key}/"
    return folder + INIT_NAME, folder + DATA_NAME


def split_init(fragmented: bytes) -> tuple[bytes, bytes]:
    """A fragmented MP4 as (init, media): the bytes before its first ``moof``, the rest."""
    facts = probe(fragmented[:PROBE_BYTES], len(fragmented))
    if facts.container is not Container.FMP4 or not facts.init_end:
        raise ValueError(f"not a fragmented MP4 ({facts.container})")
    return fragmented[: facts.init_end], fragmented[facts.init_end :]


class Renditions:
    """Makes (once) and finds the renditions of the source objects of one bucket."""

    def __init__(self, objects: ObjectStore) -> None:
        self._objects = objects

    def ensure(self, key: str) -> tuple[str, str]:
        """The rendition's (init key, media key), made now if it does not exist yet.

        Two requests racing here both write the same bytes (stream copy is
        deterministic); the media object is written last, so its existence means
        the init exists too.
        """
        init_key, data_key = rendition_keys(key)
        source = self._objects.head(key)
        if not source.present:
            raise Conflict(f"{key} does not exist (any more)")
        if all(self._made_from(part, source.etag) for part in (init_key, data_key)):
            return init_key, data_key
        if source.size > MAX_RENDITION_SOURCE_BYTES:
            raise Conflict(
                f"{key} is {source.size} bytes, more than the {MAX_RENDITION_SOURCE_BYTES} "
                "bytes a rendition is made of on demand"
            )
        from video_index.media.remux import fragment  # PyAV: only where renditions are made

        start_ms = to_epoch_ms(parse_key(key).start)
        init, data = split_init(fragment(self._objects.get_bytes(key), decode_start_ms=start_ms))
        provenance = {SOURCE_ETAG_METADATA: source.etag}
        self._objects.put_bytes(init_key, init, "video/mp4", provenance)
        self._objects.put_bytes(data_key, data, "video/iso.segment", provenance)
        return init_key, data_key

    def _made_from(self, key: str, source_etag: str) -> bool:
        """Whether ``key`` holds a rendition of the source as it is now (its provenance).

        A rendition object without it, or of another version of the source, is not
        served: it is made again over it. Nothing a camera can write is under
        ``renditions/`` (docs/cameras.md), and this check keeps a planted or stale object
        from reaching a viewer even so.
        """
        metadata = self._objects.metadata(key)
        return metadata is not None and metadata.get(SOURCE_ETAG_METADATA) == source_etag

    def forget(self, key: str) -> None:
        """Remove the rendition of a removed source (nothing happens when there is none)."""
        self._objects.delete(list(rendition_keys(key)))
