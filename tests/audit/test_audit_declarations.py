"""Which routes are audited as what (docs/audit.md#what-is-recorded), by a table written here.

Like the access matrix (tests/api/test_access_matrix.py), the table is written by hand,
not read from the routes: every route of the OpenAPI document must have a row and declare
the row's action as its ``x-audit``, and every route that reads footage or changes what
is kept must declare one (a new route that reads footage without one fails here).
"""

from __future__ import annotations

from typing import Any, Final

from video_index.api.resolver import TITLE
from video_index.app.routes import media_app, whole_app
from video_index.core.audit import ACTIONS, AUDIT_EXTENSION, NOT_AUDITED

#: Each route and the action its requests are recorded as; ``none``: recorded only when
#: refused. Written from docs/audit.md, not from the routes' code.
TABLE: Final = """
GET     /me                                                   none
GET     /openapi.json                                         none
GET     /viewer                                               none
GET     /viewer/{file}                                        none
GET     /devices                                              none
GET     /devices/{device}                                     none
GET     /devices/{device}/calendar                            none
GET     /devices/{device}/activity                            none
GET     /devices/{device}/ranges                              none
GET     /devices/{device}/segments                            segments.list
GET     /devices/{device}/segments/{kind}/{name}              segment.read
GET     /devices/{device}/playlist.m3u8                       playlist.read
GET     /devices/{device}/live.m3u8                           live.read
GET     /devices/{device}/media/{file}                        media.read
GET     /devices/{device}/frame                               frame.read
GET     /devices/{device}/overlays                            overlays.read
GET     /devices/{device}/annotations                         none
GET     /devices/{device}/annotations/{annotation_id}         none
GET     /devices/{device}/annotations/{annotation_id}/history none
POST    /devices/{device}/annotations                         none
PUT     /devices/{device}/annotations/{annotation_id}         none
DELETE  /devices/{device}/annotations/{annotation_id}         none
GET     /devices/{device}/holds                               none
GET     /holds/{hold_id}                                      none
POST    /devices/{device}/holds                               hold.place
DELETE  /holds/{hold_id}                                      hold.release
POST    /devices/{device}/exports                             export.create
GET     /exports/{export_id}                                  export.read
DELETE  /devices/{device}/segments                            deletion.request
GET     /deletions/{deletion_id}                              none
DELETE  /deletions/{deletion_id}                              deletion.withdraw
GET     /audit                                                audit.read
GET     /exports/public-key                                   none
POST    /devices/{device}/shares                              share.create
GET     /devices/{device}/shares                              share.list
DELETE  /shares/{share_id}                                    share.revoke
GET     /shares/{share_id}                                    share.play
GET     /shares/{share_id}/playlist.m3u8                      share.play
GET     /shares/{share_id}/media/{file}                       share.play
GET     /shares/{share_id}/frame                              share.play
GET     /shares/{share_id}/download                           share.download
"""
EXPECTED: Final = {
    (line.split()[0], line.split()[1]): line.split()[2] for line in TABLE.strip().splitlines()
}
#: Routes that hand out footage or change what is kept: never ``none``.
SENSITIVE: Final = {
    ("GET", "/devices/{device}/segments"),
    ("GET", "/devices/{device}/segments/{kind}/{name}"),
    ("GET", "/devices/{device}/playlist.m3u8"),
    ("GET", "/devices/{device}/live.m3u8"),
    ("GET", "/devices/{device}/media/{file}"),
    ("GET", "/devices/{device}/frame"),
    ("POST", "/devices/{device}/exports"),
    ("GET", "/exports/{export_id}"),
    ("POST", "/devices/{device}/holds"),
    ("DELETE", "/holds/{hold_id}"),
    ("DELETE", "/devices/{device}/segments"),
    ("DELETE", "/deletions/{deletion_id}"),
    ("POST", "/devices/{device}/shares"),
    ("DELETE", "/shares/{share_id}"),
    ("GET", "/shares/{share_id}/playlist.m3u8"),
    ("GET", "/shares/{share_id}/media/{file}"),
    ("GET", "/shares/{share_id}/frame"),
    ("GET", "/shares/{share_id}/download"),
}


def declared(app: Any) -> dict[tuple[str, str], str]:
    document = app.get_openapi_schema(title=TITLE, version="1").model_dump(
        by_alias=True, exclude_none=True
    )
    return {
        (method.upper(), path): operation.get(AUDIT_EXTENSION, "(undeclared)")
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("get", "put", "post", "delete", "patch")
    }


def test_every_route_declares_the_action_of_the_table() -> None:
    # Given the routes of the whole API's document
    routes = declared(whole_app())
    # Then each has a row and no row lacks a route
    assert sorted(set(routes) - set(EXPECTED)) == [], "routes without a row in TABLE"
    assert sorted(set(EXPECTED) - set(routes)) == [], "rows of TABLE without a route"
    # And each declares the row's action (public routes included: their refusals are none)
    wrong = {route: got for route, got in routes.items() if got != EXPECTED[route]}
    assert wrong == {}


def test_every_route_that_reads_footage_or_changes_what_is_kept_is_audited() -> None:
    for route in SENSITIVE:
        assert EXPECTED[route] in ACTIONS and EXPECTED[route] != NOT_AUDITED, route


def test_the_media_function_declares_the_same() -> None:
    # The media function's resolver (a Lambda of its own) serves the same declaration
    routes = declared(media_app())
    assert routes == {key: EXPECTED[key] for key in routes if key[1] != "/openapi.json"} | (
        {("GET", "/openapi.json"): "none"} if ("GET", "/openapi.json") in routes else {}
    )
    assert ("GET", "/devices/{device}/media/{file}") in routes
