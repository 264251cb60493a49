"""The public routes of a share link (docs/shares.md): no sign-in, the secret decides.

Each route is declared ``public()`` and opens its share by the secret in the ``key``
query parameter (:meth:`~video_index.shares.service.Shares.open`): the API's access log
records the path, never the query (``infra/api.py``), so the secret reaches no log.
Everything a share serves lies in its window: the playlist lists the window's files (as
the device's playlist of that window does, each file whole), a file or a frame outside
it is refused with 404, and every URL handed out is presigned to live no longer than the
share.

* :data:`router` (the API function): the share's facts, its playlist, its download;
* :data:`files_router` (the media function, which has PyAV): its files (a redirect,
  through a rendition where the device's playlist would use one) and its frames.
"""

from __future__ import annotations

import dataclasses
from itertools import islice
from typing import Annotated, Any, Final, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from video_index.api import params
from video_index.api.context import service
from video_index.api.errors import responses
from video_index.core.access import public
from video_index.core.audit import SHARE_DOWNLOAD, SHARE_PLAY
from video_index.core.errors import BadInput, Conflict, NotFound
from video_index.core.keys import InvalidKeyError, parse_key
from video_index.core.layout import key_of_segment_item, segment_pk
from video_index.core.timeunits import iso_ms
from video_index.media.exports import Exports, ExportState
from video_index.media.frames import MAX_WIDTH, MIN_WIDTH, Frames
from video_index.media.renditions import Renditions
from video_index.query.copies import one_copy_per_moment
from video_index.query.playback import playlist_segments
from video_index.query.playlist import CONTENT_TYPE, MAX_PLAYLIST_FILES, build_playlist
from video_index.query.queries import Queries
from video_index.shares.model import SECRET_PATTERN, SHARE_ID_PATTERN, Share
from video_index.shares.routes import shares
from video_index.shares.service import SharePresign

router = Router()  # type: ignore[no-untyped-call]
files_router = Router()  # type: ignore[no-untyped-call]

ShareId = Annotated[str, Path(pattern=SHARE_ID_PATTERN, max_length=32)]
#: The share's secret: required, and only ever in the query (never in a path).
Key = Annotated[str, Query(pattern=SECRET_PATTERN, min_length=43, max_length=43)]
File = Annotated[
    str,
    Path(
        pattern=r"^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z_[0-9]{1,9}_[a-z0-9]{1,64}\.(mp4|ts)$",
        max_length=96,
    ),
]
Part = Annotated[Literal["init", "data"] | None, Query()]
Width = Annotated[int, Query(ge=MIN_WIDTH, le=MAX_WIDTH)]
#: What ``GET /shares/{id}`` tells a share's holder.
HOLDER_SEES: Final = ("share_id", "device", "from", "to", "expires_at", "download", "state")
NO_STORE: Final = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _redirect(url: str) -> Response[str]:
    return Response(status_code=302, headers={"Location": url, **NO_STORE}, body="")


@router.get(
    "/shares/<share_id>",
    openapi_extensions=public(audit=SHARE_PLAY),
    responses=responses(404, 410, ok={"description": "The share: its device, window, end"}),
)
def get_share(share_id: ShareId, key: Key) -> Response[Any]:
    found = shares()
    share = found.open(share_id, key)
    # What its holder needs to play it; not who made it (a principal is no holder's business).
    shown = share.public(found.now_ms())
    body = {name: shown[name] for name in HOLDER_SEES}
    body["playlist"] = f"/shares/{share_id}/playlist.m3u8"
    return Response(200, content_type="application/json", body=body, headers=NO_STORE)


@router.get(
    "/shares/<share_id>/playlist.m3u8",
    openapi_extensions=public(audit=SHARE_PLAY),
    responses=responses(
        404,
        410,
        ok={
            "description": "An HLS VOD playlist of exactly the share's window (RFC 8216)",
            "content": {CONTENT_TYPE: {"schema": {"type": "string"}}},
        },
    ),
)
def get_share_playlist(share_id: ShareId, key: Key) -> Response[str]:
    share = shares().open(share_id, key)
    queries = service(Queries)
    entries = queries.window_entries(share.device, "video", share.from_ms, share.to_ms)
    listed = list(islice(entries, MAX_PLAYLIST_FILES + 1))
    if len(listed) > MAX_PLAYLIST_FILES:  # only with a max window far above the default
        raise BadInput("key", f"the shared window holds more than {MAX_PLAYLIST_FILES} files")
    choice = one_copy_per_moment(listed, queries.gap_tolerance_ms)
    records = [_keyed(record, key) for record in playlist_segments(choice.kept)]
    body = build_playlist(records, comments=choice.notes())
    return Response(200, content_type=CONTENT_TYPE, body=body, headers=NO_STORE)


def _keyed(record: Any, key: str) -> Any:
    """A playlist record whose URIs (relative: ``media/<file>[?part=…]``, resolving to
    this share's file route) carry the key."""

    def with_key(uri: str | None) -> str | None:
        if uri is None:
            return None
        return f"{uri}{'&' if '?' in uri else '?'}key={key}"

    return dataclasses.replace(record, uri=with_key(record.uri), map_uri=with_key(record.map_uri))


@router.get(
    "/shares/<share_id>/download",
    openapi_extensions=public(audit=SHARE_DOWNLOAD),
    responses=responses(
        404,
        409,
        410,
        success=302,
        ok={
            "description": "A redirect to the window's MP4 (presigned, ending with the share)",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
    )
    | {202: {"description": "The clip is still being made: ask again (state, progress)"}},
)
def download_share(share_id: ShareId, key: Key) -> Response[Any]:
    found = shares()
    share = found.open(share_id, key)
    if not share.download or share.export_id is None:
        raise NotFound("share_id", "this share has no download")
    exports = service(Exports)
    job = exports.get(share.export_id)
    if job.state in (ExportState.QUEUED, ExportState.RUNNING):
        body = {"state": job.state, "progress": job.progress}
        headers = {**NO_STORE, "Retry-After": "5"}
        return Response(202, content_type="application/json", body=body, headers=headers)
    if job.state is not ExportState.DONE:
        raise Conflict(f"the clip could not be made ({job.state}): {job.error or 'no reason'}")
    seconds, presign = found.link_seconds(share), service(SharePresign)
    url = exports.clip_url(job, lambda k, download_as=None: presign(k, seconds, download_as))
    return _redirect(url)


def _file_in_window(share: Share, file: str) -> str:
    """The key of ``file`` of the share's device, refused (404) unless the file plays in
    the share's window."""
    key = key_of_segment_item(segment_pk(0, share.device, "video"), file)
    try:
        parsed = parse_key(key)
    except InvalidKeyError as exc:
        raise BadInput("file", exc.reason) from None
    start_ms = int(parsed.start.timestamp() * 1000)
    if not share.covers_file(start_ms, parsed.duration_ms):
        raise NotFound("file", "the file is not in the shared window")
    return key


@files_router.get(
    "/shares/<share_id>/media/<file>",
    openapi_extensions=public(audit=SHARE_PLAY),
    responses=responses(
        404,
        410,
        success=302,
        ok={
            "description": "A redirect to a presigned GET of a file of the window (or of "
            "its rendition's init or media), ending no later than the share",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
    ),
)
def get_share_media(share_id: ShareId, file: File, key: Key, part: Part = None) -> Response[str]:
    found = shares()
    share = found.open(share_id, key)
    object_key = _file_in_window(share, file)
    if part is not None:
        init_key, data_key = service(Renditions).ensure(object_key)
        object_key = init_key if part == "init" else data_key
    return _redirect(service(SharePresign)(object_key, found.link_seconds(share)))


@files_router.get(
    "/shares/<share_id>/frame",
    openapi_extensions=public(audit=SHARE_PLAY),
    responses=responses(
        404,
        410,
        ok={
            "description": "The JPEG of the frame at or just before t, t in the window",
            "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
            "headers": {"X-Frame-Time": {"schema": {"type": "string"}}},
        },
    ),
)
def get_share_frame(share_id: ShareId, key: Key, t: params.Time = None, width: Width = 320):  # type: ignore[no-untyped-def]
    # No return annotation: with one, Powertools would serialize the JPEG as JSON text.
    share = shares().open(share_id, key)
    t_ms = params.instant(t, "t")
    if not share.covers(t_ms):
        raise NotFound("t", "the moment is not in the shared window")
    picture = service(Frames).picture(share.device, t_ms, width)
    headers = {**NO_STORE, "X-Frame-Time": iso_ms(picture.frame_ms)}
    headers["X-Content-Type-Options"] = "nosniff"
    return Response(200, content_type="image/jpeg", headers=headers, body=picture.jpeg)
