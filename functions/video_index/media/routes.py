"""The media routes of the HTTP API (docs/api.md, docs/playback.md): a file's bytes by
redirect, and clip exports.

``GET /devices/{device}/media/{file}`` addresses a video file by its key's file
name (``<start>_<duration>_<id>.<ext>``), which with the device gives the whole
key: no lookup, and no way to reach a key outside the device's video prefix. It
answers 302 to a presigned GET made at that moment (``?part=init|data``: to the
file's fragmented rendition, made on first use), so playlist URIs never expire.

``GET /devices/{device}/frame?t=…&width=…`` answers the JPEG of the frame at (or just
before) ``t`` in the file covering ``t`` (404 when none does; docs/playback.md, "Frames").

The file and frame routes (:data:`files_router`) are served by the media function, the
only one with PyAV (it may make a rendition or decode a frame); the export routes
(:data:`router`) write and read a job, and are served by the API function
(docs/architecture.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from video_index.api import params
from video_index.api.caller import current_caller, hide_outside_scope
from video_index.api.context import Presign, optional_service, service
from video_index.api.errors import responses
from video_index.aws.kms import PublicKey, SigningKey
from video_index.core.access import Role, allow, public
from video_index.core.audit import (
    EXPORT_CREATE,
    EXPORT_READ,
    FRAME_READ,
    MEDIA_READ,
    NOT_AUDITED,
)
from video_index.core.contract import ENV_EXPORT_SIGNING_KEY
from video_index.core.errors import BadInput, ConfigurationError, NotFound
from video_index.core.keys import InvalidKeyError, parse_key
from video_index.core.layout import key_of_segment_item, segment_pk
from video_index.core.timeunits import iso_ms
from video_index.media.exports import (
    EXPORT_ID_PATTERN,
    MAX_EXPORT_WINDOW_MS,
    ExportJob,
    Exports,
    ExportState,
    VideoEntries,
    WindowFacts,
)
from video_index.media.frames import MAX_WIDTH, MIN_WIDTH, Frames
from video_index.media.renditions import Renditions

#: A video key's file name (the key grammar itself is checked by ``parse_key``).
FILE_PATTERN: Final = r"^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z_[0-9]{1,9}_[a-z0-9]{1,64}\.(mp4|ts)$"

#: The export routes: they write a job and read one (no PyAV), served by the API function.
router = Router()  # type: ignore[no-untyped-call]
#: The media file route: it may make a rendition (PyAV), served by the media function.
files_router = Router()  # type: ignore[no-untyped-call]


class ExportRequest(BaseModel):
    """``POST /devices/{device}/exports``: the window to export (at most 6 hours)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    from_: str = Field(alias="from", max_length=params.MAX_TIME_LENGTH)
    to: str = Field(max_length=params.MAX_TIME_LENGTH)
    #: The zone the window was chosen in (IANA), written into the manifest.
    tz: str = Field(default="UTC", max_length=64)


class ExportOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    export_id: str
    device: str
    state: ExportState
    from_: str = Field(alias="from")
    to: str
    segments: int
    bytes: int
    created_at: str
    updated_at: str
    url: str | None = None
    #: A presigned GET of the signed manifest once done (docs/playback.md#signed-exports).
    manifest_url: str | None = None
    error: str | None = None
    created_by: str | None = None
    #: How far the job is, 0..1 (files read, then joined into the clip).
    progress: float = 0.0


def _export_out(
    job: ExportJob, url: str | None = None, manifest_url: str | None = None
) -> ExportOut:
    return ExportOut(
        export_id=job.export_id,
        device=job.device,
        state=job.state,
        from_=iso_ms(job.from_ms),
        to=iso_ms(job.to_ms),
        segments=job.segments,
        bytes=job.bytes,
        created_at=job.created_at,
        updated_at=job.updated_at,
        url=url,
        manifest_url=manifest_url,
        error=job.error,
        created_by=job.created_by,
        progress=job.progress,
    )


def _video_key(device: str, file: str) -> str:
    key = key_of_segment_item(segment_pk(0, device, "video"), file)
    try:
        parse_key(key)
    except InvalidKeyError as exc:
        raise BadInput("file", exc.reason) from None
    return key


Device = Annotated[str, Path(max_length=64)]
File = Annotated[str, Path(pattern=FILE_PATTERN, max_length=96)]
Part = Annotated[Literal["init", "data"] | None, Query()]


@files_router.get(
    "/devices/<device>/media/<file>",
    openapi_extensions=allow(Role.VIEWER, audit=MEDIA_READ),
    responses=responses(
        success=302,
        ok={
            "description": "A redirect to a short-lived presigned GET of the file (or of its "
            "rendition's init or media)",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
    ),
)
def get_media(device: Device, file: File, part: Part = None) -> Response[str]:
    device = params.device(device)
    key = _video_key(device, file)
    if part is not None:
        init_key, data_key = service(Renditions).ensure(key)
        key = init_key if part == "init" else data_key
    return Response(
        status_code=302,
        headers={"Location": service(Presign)(key), "Cache-Control": "no-store"},
        body="",
    )


#: How long a browser may keep a picture: a moment of a key's file never changes.
FRAME_CACHE_CONTROL: Final = "private, max-age=31536000, immutable"
Width = Annotated[int, Query(ge=MIN_WIDTH, le=MAX_WIDTH)]


@files_router.get(
    "/devices/<device>/frame",
    openapi_extensions=allow(Role.VIEWER, audit=FRAME_READ),
    responses=responses(
        404,
        ok={
            "description": "The JPEG of the frame at or just before t, in the file covering t",
            "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
            "headers": {"X-Frame-Time": {"schema": {"type": "string"}}},
        },
    ),
)
def get_frame(device: Device, t: params.Time = None, width: Width = 320):  # type: ignore[no-untyped-def]
    # No return annotation: with one, Powertools would serialize the JPEG as JSON text.
    device = params.device(device)
    picture = service(Frames).picture(device, params.instant(t, "t"), width)
    return Response(
        status_code=200,
        content_type="image/jpeg",
        headers={
            "Cache-Control": FRAME_CACHE_CONTROL,
            "X-Frame-Time": iso_ms(picture.frame_ms),
            "X-Content-Type-Options": "nosniff",
        },
        body=picture.jpeg,
    )


@router.post(
    "/devices/<device>/exports",
    openapi_extensions=allow(Role.OPERATOR, audit=EXPORT_CREATE),
    responses=responses(413, 415, success=202, ok={"description": "The export job, queued"}),
)
def create_export(device: Device, request: Annotated[ExportRequest, Body()]) -> Response[Any]:
    device = params.device(device)
    # The 6-hour bound first: a longer window is refused before anything is read.
    start_ms, end_ms = params.window(request.from_, request.to, MAX_EXPORT_WINDOW_MS)
    entries = service(VideoEntries)(device, start_ms, end_ms)
    facts = optional_service(WindowFacts)  # the manifest's gaps and holds
    gaps, holds = facts(device, start_ms, end_ms, request.tz) if facts else ([], [])
    job = service(Exports).create(
        device,
        start_ms,
        end_ms,
        entries,
        current_caller().principal,
        time_zone=request.tz,
        gaps=gaps,
        holds=holds,
    )
    return Response(
        status_code=202,
        content_type="application/json",
        body=_export_out(job).model_dump(mode="json", by_alias=True),
        headers={"Location": f"/exports/{job.export_id}"},
    )


class PublicKeyOut(BaseModel):
    """The public half of the key export manifests are signed with."""

    pem: str
    key_id: str
    algorithm: str


@router.get(
    "/exports/public-key", openapi_extensions=public(audit=NOT_AUDITED), responses=responses()
)
def get_export_public_key() -> Response[Any]:
    """Public: anyone handed an export must be able to verify it without an account."""
    found = optional_service(SigningKey)
    if found is None:
        raise ConfigurationError(f"{ENV_EXPORT_SIGNING_KEY} is not set: no export is signed")
    key: PublicKey = found.public_key()
    return Response(
        status_code=200,
        content_type="application/json",
        headers={"Cache-Control": "public, max-age=300"},
        body=PublicKeyOut(pem=key.pem, key_id=key.key_id, algorithm=key.algorithm).model_dump(),
    )


@router.get(
    "/exports/<export_id>",
    openapi_extensions=allow(Role.OPERATOR, audit=EXPORT_READ),
    responses=responses(404),
)
def get_export(
    export_id: Annotated[str, Path(pattern=EXPORT_ID_PATTERN)],
) -> ExportOut:
    exports = service(Exports)
    job = exports.get(export_id)
    hide_outside_scope(job.device, NotFound("export_id", f"no export {export_id}"))
    if job.state is not ExportState.DONE:
        return _export_out(job)
    presign = service(Presign)
    return _export_out(job, exports.clip_url(job, presign), exports.manifest_url(job, presign))
