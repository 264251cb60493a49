"""How each camera file is listed in a playlist so every player plays it (docs/playback.md).

* MPEG-TS: the file itself;
* fragmented MP4: its init as ``EXT-X-MAP`` (byte range ``0..init_end``), its media
  by byte range;
* progressive MP4, an MP4 not probed yet, or a fragmented MP4 whose decode times
  restart (a camera's own, FFmpeg drops a fragment of each): its fragmented rendition,
  ``?part=init`` and ``?part=data``, whose decode times run on the wall clock;
* not what its extension says: not listed (it cannot be played).

A map applies to every later file of a playlist, so when a window mixes MPEG-TS
with MP4 files, its TS files are listed through renditions too (stream-copied
into fragmented MP4 like progressive files).

Every URI is relative to the playlist (``/devices/{device}/playlist.m3u8``):
``media/<file name>`` is the media route, which presigns a short-lived GET at
the moment the player asks and redirects to it, so a playlist keeps working for
as long as someone watches it, pauses included.
"""

from __future__ import annotations

from collections.abc import Iterable

from video_index.media.probe import Container
from video_index.query.entries import Entry
from video_index.query.playlist import PlaylistSegment


def media_uri(entry: Entry) -> str:
    return f"media/{entry.filename}"


def playlist_segments(entries: Iterable[Entry]) -> list[PlaylistSegment]:
    """The playlist records of the playable video ``entries``."""
    files = [e for e in entries if e.kind == "video" and e.playable]
    mixed = any(e.ext == "ts" for e in files) and any(e.ext == "mp4" for e in files)
    return [_listed(entry, rendered_ts=mixed) for entry in files]


def _listed(entry: Entry, *, rendered_ts: bool) -> PlaylistSegment:
    uri = media_uri(entry)
    facts = entry.facts
    if entry.ext == "ts" and not rendered_ts:
        return PlaylistSegment(entry.start_ms, entry.duration_ms, uri)
    if (
        facts is not None
        and facts.container is Container.FMP4
        and facts.init_end
        and not facts.restarts(entry.start_ms)
    ):
        return PlaylistSegment(
            entry.start_ms,
            entry.duration_ms,
            uri,
            byte_range=(entry.size - facts.init_end, facts.init_end),
            map_uri=uri,
            map_range=(facts.init_end, 0),
        )
    return PlaylistSegment(
        entry.start_ms, entry.duration_ms, f"{uri}?part=data", map_uri=f"{uri}?part=init"
    )
