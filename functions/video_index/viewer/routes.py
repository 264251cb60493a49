"""The viewer's routes (docs/viewer.md): ``GET /viewer`` (the page) and ``GET /viewer/{file}``
(its modules, styles, hls.js and ``config.json``).

The same router answers in the deployed API and in ``video-index local``, so the page is
always served from the API's own origin: there, a player that follows the API's media
redirects to the bucket keeps the page's origin, which the bucket's CORS rule allows
(docs/playback.md). In the deployed stack these two routes are the only ones without an
authorizer (a browser cannot attach a token to a navigation); they hold nothing but the
page, and every data route stays authorized.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from video_index.api.errors import responses
from video_index.core.access import public
from video_index.core.audit import NOT_AUDITED
from video_index.core.errors import ConfigurationError, NotFound
from video_index.viewer.assets import (
    INDEX_NAME,
    Asset,
    MissingAsset,
    asset,
    content_security_policy,
)

#: A file name of the viewer: one path segment, no way up or sideways.
FILE_PATTERN: Final = r"^[a-z0-9][a-z0-9._-]{0,63}$"

router = Router()  # type: ignore[no-untyped-call]

Handler = TypeVar("Handler", bound=Callable[..., Any])


def _bytes_answer(handler: Handler) -> Handler:
    """Hide the handler's return annotation from Powertools: with one, its response
    validation serializes the body as JSON text, which bytes (gzip) are not. Without one, a
    non-JSON response passes through untouched and is sent base64-encoded."""
    handler.__annotations__.pop("return", None)
    return handler


def _documented(what: str, *content_types: str) -> dict[int, OpenAPIResponse]:
    content: dict[str, Any] = {name: {"schema": {"type": "string"}} for name in content_types}
    documented = responses(404, ok={"description": what, "content": content})
    documented[304] = {"description": "Not modified: the browser's copy (its ETag) is current"}
    return documented


def _answer(name: str) -> Response[Any]:
    try:
        found = asset(name)
    except KeyError:
        raise NotFound("file", f"the viewer has no file {name!r}") from None
    except MissingAsset as exc:
        raise ConfigurationError(str(exc)) from None
    return _conditional(found)


def _conditional(found: Asset) -> Response[Any]:
    """200 with the file (gzip when accepted) or 304 when the browser's copy is current."""
    headers = router.current_event.headers
    common = {
        "ETag": found.etag,
        "Cache-Control": "no-cache",
        "Vary": "Accept-Encoding",
        "X-Content-Type-Options": "nosniff",
    }
    if found.content_type.startswith("text/html"):
        common["Content-Security-Policy"] = content_security_policy()
        common["Referrer-Policy"] = "no-referrer"
    tags = {tag.strip() for tag in str(headers.get("if-none-match") or "").split(",")}
    if found.etag in tags or f"W/{found.etag}" in tags:
        return Response(status_code=304, headers=common, body="")
    if found.content_type == "application/json":
        # Powertools re-encodes a JSON answer: text, not bytes (and too small to compress).
        return Response(
            status_code=200,
            content_type=found.content_type,
            headers=common,
            body=found.body.decode(),
        )
    accepted = str(headers.get("accept-encoding") or "").lower()
    if "gzip" in accepted:
        return Response(
            status_code=200,
            content_type=found.content_type,
            headers={**common, "Content-Encoding": "gzip"},
            body=found.gzipped,
        )
    return Response(
        status_code=200, content_type=found.content_type, headers=common, body=found.body
    )


@router.get(
    "/viewer",
    openapi_extensions=public(audit=NOT_AUDITED),
    responses=_documented("The viewer, a web page", "text/html"),
)
@_bytes_answer
def get_viewer() -> Response[Any]:
    return _answer(INDEX_NAME)


@router.get(
    "/viewer/<file>",
    openapi_extensions=public(audit=NOT_AUDITED),
    responses=_documented(
        "A file of the viewer (module, style sheet, hls.js, config.json)",
        "text/javascript",
        "text/css",
        "application/json",
    ),
)
@_bytes_answer
def get_viewer_file(
    file: Annotated[str, Path(pattern=FILE_PATTERN, max_length=64)],
) -> Response[Any]:
    return _answer(file)
