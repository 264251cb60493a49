"""Which routes each function serves, and the whole API for ``video-index local``.

The API is served by two functions (docs/architecture.md): the API function (every
route but one, no PyAV in its asset) and the media function (``GET
/devices/{device}/media/{file}``, which may make a rendition with PyAV).
``infra/`` routes each function's paths (:func:`api_paths`, :func:`media_paths`);
``/openapi.json`` (the whole API's document) is the API function's.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from aws_lambda_powertools.event_handler.api_gateway import Router

from video_index.annotations import routes as annotation_routes
from video_index.api import me as me_routes
from video_index.api.resolver import Resolver, create_app
from video_index.audit import routes as audit_routes
from video_index.deletion import routes as deletion_routes
from video_index.holds import routes as hold_routes
from video_index.media import routes as media_routes
from video_index.query import live as live_routes
from video_index.query import routes as query_routes
from video_index.shares import public as share_public_routes
from video_index.shares import routes as share_routes
from video_index.viewer import routes as viewer_routes

#: The API function's routers, in the order the document lists them.
API_ROUTERS: Final[tuple[Router, ...]] = (
    query_routes.router,
    live_routes.router,
    media_routes.router,
    viewer_routes.router,
    annotation_routes.router,
    deletion_routes.router,
    hold_routes.router,
    me_routes.router,
    share_routes.router,
    share_public_routes.router,
    audit_routes.router,
)
#: The media function's routers.
MEDIA_ROUTERS: Final[tuple[Router, ...]] = (
    media_routes.files_router,
    share_public_routes.files_router,
)


@cache
def whole_app() -> Resolver:
    """Every route of the API in one resolver: ``video-index local``, and the document."""
    return create_app((*API_ROUTERS, *MEDIA_ROUTERS))


def api_app() -> Resolver:
    """The API function's resolver: the whole app.

    It holds the media route's code too (importing it imports no PyAV), so its
    ``/openapi.json`` is the whole API's; API Gateway sends the media paths to the media
    function, never here. One resolver per process also keeps each router bound to the
    resolver that serves it (a router reads the request from the last resolver that
    included it).
    """
    return whole_app()


@cache
def media_app() -> Resolver:
    """The media function's resolver: the media routes only."""
    return create_app(MEDIA_ROUTERS)


def route_methods() -> dict[str, frozenset[str]]:
    """Every path of the API (OpenAPI form) with its methods."""
    return whole_app().route_methods()


def media_paths() -> list[str]:
    """The paths routed to the media function."""
    return sorted(path for path in media_app().route_methods() if path != "/openapi.json")


def api_paths() -> list[str]:
    """The paths routed to the API function: every other one."""
    media = set(media_paths())
    return sorted(path for path in route_methods() if path not in media)
