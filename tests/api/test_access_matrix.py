"""Who may call what: every route of the OpenAPI document × every caller, through the real
resolver (docs/access.md).

The expected answers are a table written here by hand (:data:`TABLE`), not read from the
routes' own rules: the table is compared with the document's ``x-access`` of each route
*and* with what the resolver answers six callers (anonymous, signed in without a role,
and each role). Every route of the document must have a row, so a route added without one
fails here, naming it.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Final

import boto3
import pytest

import video_index
from video_index.api.resolver import TITLE
from video_index.app.routes import whole_app
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.aws.shares import ShareStore
from video_index.core.access import ACCESS_EXTENSION, PUBLIC
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from video_index.shares.service import Shares
from worlds import events as ev
from worlds.api_world import ApiWorld, at, make_world

#: The callers, in the table's column order: no identity, a verified one without a role,
#: and each role.
CALLERS: Final = ("anonymous", "none", "viewer", "reviewer", "operator", "admin")
#: What each caller gets from each route, written out by hand from docs/access.md's role
#: table (not from the routes' code): 401 (sign in), 403 (the role is too low), ok (the
#: route runs: its own answer, never 401, 403 or the scope's 404).
TABLE: Final = """
GET     /me                                                   401  403  ok   ok   ok   ok
GET     /openapi.json                                         401  403  ok   ok   ok   ok
GET     /viewer                                               ok   ok   ok   ok   ok   ok
GET     /viewer/{file}                                        ok   ok   ok   ok   ok   ok
GET     /devices                                              401  403  ok   ok   ok   ok
GET     /devices/{device}                                     401  403  ok   ok   ok   ok
GET     /devices/{device}/calendar                            401  403  ok   ok   ok   ok
GET     /devices/{device}/activity                            401  403  ok   ok   ok   ok
GET     /devices/{device}/ranges                              401  403  ok   ok   ok   ok
GET     /devices/{device}/segments                            401  403  ok   ok   ok   ok
GET     /devices/{device}/segments/{kind}/{name}              401  403  ok   ok   ok   ok
GET     /devices/{device}/playlist.m3u8                       401  403  ok   ok   ok   ok
GET     /devices/{device}/live.m3u8                           401  403  ok   ok   ok   ok
GET     /devices/{device}/media/{file}                        401  403  ok   ok   ok   ok
GET     /devices/{device}/frame                               401  403  ok   ok   ok   ok
GET     /devices/{device}/overlays                            401  403  ok   ok   ok   ok
GET     /devices/{device}/annotations                         401  403  ok   ok   ok   ok
GET     /devices/{device}/annotations/{annotation_id}         401  403  ok   ok   ok   ok
GET     /devices/{device}/annotations/{annotation_id}/history 401  403  ok   ok   ok   ok
POST    /devices/{device}/annotations                         401  403  403  ok   ok   ok
PUT     /devices/{device}/annotations/{annotation_id}         401  403  403  ok   ok   ok
DELETE  /devices/{device}/annotations/{annotation_id}         401  403  403  ok   ok   ok
GET     /devices/{device}/holds                               401  403  ok   ok   ok   ok
GET     /holds/{hold_id}                                      401  403  ok   ok   ok   ok
POST    /devices/{device}/holds                               401  403  403  403  ok   ok
DELETE  /holds/{hold_id}                                      401  403  403  403  ok   ok
POST    /devices/{device}/exports                             401  403  403  403  ok   ok
GET     /exports/{export_id}                                  401  403  403  403  ok   ok
GET     /exports/public-key                                   ok   ok   ok   ok   ok   ok
DELETE  /devices/{device}/segments                            401  403  403  403  ok   ok
GET     /deletions/{deletion_id}                              401  403  403  403  ok   ok
DELETE  /deletions/{deletion_id}                              401  403  403  403  ok   ok
POST    /devices/{device}/shares                              401  403  403  403  ok   ok
GET     /devices/{device}/shares                              401  403  403  403  ok   ok
DELETE  /shares/{share_id}                                    401  403  403  403  ok   ok
GET     /shares/{share_id}                                    ok   ok   ok   ok   ok   ok
GET     /shares/{share_id}/playlist.m3u8                      ok   ok   ok   ok   ok   ok
GET     /shares/{share_id}/media/{file}                       ok   ok   ok   ok   ok   ok
GET     /shares/{share_id}/frame                              ok   ok   ok   ok   ok   ok
GET     /shares/{share_id}/download                           ok   ok   ok   ok   ok   ok
GET     /audit                                                401  403  403  403  403  ok
"""


def _rows(text: str) -> dict[tuple[str, str], dict[str, str]]:
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for line in text.strip().splitlines():
        method, path, *answers = line.split()
        assert len(answers) == len(CALLERS), line
        assert (method, path) not in rows, f"{method} {path} twice"
        rows[(method, path)] = dict(zip(CALLERS, answers, strict=True))
    return rows


EXPECTED: Final = _rows(TABLE)

IN_SCOPE: Final = "cam-in"
OUT_OF_SCOPE: Final = "cam-out"  # exists, with footage
NOWHERE: Final = "cam-none"  # does not exist
WINDOW: Final = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"
#: A sample value of each path parameter, valid by the document's own rules.
SAMPLES: Final = {
    "kind": "video",
    "name": "20261129T100000.000Z_10000_abc123.mp4",
    "file": "20261129T100000.000Z_10000_abc123.mp4",
    "annotation_id": "a1b2c3",
    "export_id": "0" * 32,
    "deletion_id": "0" * 32,
    "hold_id": "0" * 26,
    "share_id": "0" * 32,
}
BODIES: Final = {
    ("POST", "/devices/{device}/annotations"): {
        "target": {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T10:05:00Z"}
    },
    ("PUT", "/devices/{device}/annotations/{annotation_id}"): {
        "target": {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T10:05:00Z"}
    },
    ("POST", "/devices/{device}/holds"): {
        "from": "2026-11-29T10:00:00Z",
        "to": "2026-11-29T10:05:00Z",
        "reason": "incident 42",
    },
    ("POST", "/devices/{device}/exports"): {
        "from": "2026-11-29T10:00:00Z",
        "to": "2026-11-29T10:05:00Z",
    },
    ("POST", "/devices/{device}/shares"): {
        "from": "2026-11-29T10:00:00Z",
        "to": "2026-11-29T10:05:00Z",
        "expires_in_s": 3600,
    },
}


def document() -> dict[str, Any]:
    return (
        whole_app()
        .get_openapi_schema(title=TITLE, version="1")
        .model_dump(by_alias=True, exclude_none=True)
    )


def routes() -> dict[tuple[str, str], str]:
    """Every (method, path) of the OpenAPI document, with its declared ``x-access``."""
    found = {}
    for path, item in document()["paths"].items():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch"):
                found[(method.upper(), path)] = operation.get(ACCESS_EXTENSION, "(none)")
    return found


ROUTES: Final = routes()


def test_every_route_of_the_document_is_in_the_table_and_no_other() -> None:
    # Given the routes of the OpenAPI document and the rows of the hand-written table
    missing = sorted(set(ROUTES) - set(EXPECTED))
    stale = sorted(set(EXPECTED) - set(ROUTES))
    # Then each route has a row (a new route must be added to TABLE) and each row a route
    assert not missing, "routes without a row in TABLE: " + ", ".join(map(" ".join, missing))
    assert not stale, "rows of TABLE without a route: " + ", ".join(map(" ".join, stale))


def test_the_table_and_each_routes_x_access_agree() -> None:
    for (method, path), answers in EXPECTED.items():
        # Given the lowest caller the table lets in (public: even the anonymous one)
        allowed = [caller for caller in CALLERS if answers[caller] == "ok"]
        lowest = PUBLIC if allowed[0] == "anonymous" else allowed[0]
        # Then the callers let in are exactly that one and every higher one
        assert allowed == list(CALLERS[CALLERS.index(allowed[0]) :]), (method, path)
        # And the route declares that rule in the document
        assert ROUTES[(method, path)] == lowest, (method, path)


def test_every_route_documents_401_and_403() -> None:
    # (GET /me, which the viewer reads to show only what the role allows, is one of them)
    assert ("GET", "/me") in ROUTES
    for path, item in document()["paths"].items():
        for method, operation in item.items():
            assert {401, 403} <= {int(s) for s in operation["responses"]}, f"{method} {path}"


def jwt(role: str | None, devices: str | None = IN_SCOPE) -> dict[str, Any]:
    """A Cognito ID token of ``user-<role>`` in the group ``role`` (none: in no group), its
    scope ``devices`` (None: no device claim)."""
    return ev.cognito_authorizer(f"user-{role}", [role] if role else [], devices=devices)


def concrete(path: str, device: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: device if m[1] == "device" else SAMPLES[m[1]], path)


@pytest.fixture
def world(aws: None) -> ApiWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(
        dynamodb,
        "read-model",
        annotations="annotations",
        deletions="deletions",
        holds="holds",
        shares="shares",
    )
    made = make_world(dynamodb, "read-model", annotations_table="annotations")
    made.services.holds = Holds(HoldStore(dynamodb, "holds"))
    made.services.deletions = DeletionJobs(
        DeletionTable(dynamodb, "deletions"),
        ObjectStore(made.s3, ev.BUCKET),
        enqueue=lambda _: None,
        holds=HoldsHeldWindows(made.services.holds),
        clock=lambda: at(30, 12).timestamp(),
    )
    made.services.exports._enqueue = lambda _: None
    made.services.shares = Shares(
        ShareStore(dynamodb, "shares"), max_window_s=3600, max_lifetime_s=86400, presign_seconds=900
    )
    made.put("video", IN_SCOPE, at(29, 10), 10_000)
    made.put("video", OUT_OF_SCOPE, at(29, 10), 10_000)
    return made


def request(
    world: ApiWorld, method: str, path: str, device: str, authorizer: dict[str, Any]
) -> tuple[int, Any]:
    status, answer, _ = request_with_headers(world, method, path, device, authorizer)
    return status, answer


def request_with_headers(
    world: ApiWorld, method: str, path: str, device: str, authorizer: dict[str, Any]
) -> tuple[int, Any, dict[str, str]]:
    body = BODIES.get((method, path))
    return world.call(
        method,
        concrete(path, device),
        WINDOW,
        body=json.dumps(body) if body is not None else None,
        headers={"If-Match": '"1"'},
        authorizer=authorizer,
    )


def test_the_matrix_of_every_route_and_every_caller(world: ApiWorld) -> None:
    results: dict[tuple[str, str, str], int] = {}
    for (method, path), answers in EXPECTED.items():
        lowest = next(caller for caller in CALLERS if answers[caller] == "ok")
        for caller in CALLERS:
            # Given a caller (none, no role, or one role) of the device the route names
            authorizer = {} if caller == "anonymous" else jwt(None if caller == "none" else caller)
            # When it calls the route
            status, body, headers = request_with_headers(world, method, path, IN_SCOPE, authorizer)
            results[(method, path, caller)] = status
            where = f"{method} {path} as {caller}: {status} {body}"
            # Then it gets what the table says
            expected = answers[caller]
            if expected == "ok":
                assert status not in (401, 403), where
                assert not (status == 404 and body["error"]["parameter"] == "device"), where
                if lowest != "anonymous":
                    # And no answer of an authorized route is kept by a cache
                    assert headers.get("Cache-Control") == "no-store", where
            else:
                assert status == int(expected), where
            if expected == "403":
                # (naming the role the route needs)
                assert f"needs the {lowest} role" in body["error"]["message"], where
    assert len(results) == len(ROUTES) * len(CALLERS) == 41 * 6


def test_a_device_outside_the_scope_is_indistinguishable_from_none(world: ApiWorld) -> None:
    # Given an admin whose scope is one device
    scoped = jwt("admin", devices=IN_SCOPE)
    for (method, path), rule in ROUTES.items():
        if "{device}" not in path or rule == PUBLIC:
            continue
        # When it calls the route for a device with footage outside its scope, and for one
        # that does not exist
        existing = request(world, method, path, OUT_OF_SCOPE, scoped)
        missing = request(world, method, path, NOWHERE, scoped)
        # Then both answer the same 404
        assert existing[0] == 404, (method, path, existing)
        assert (
            existing[1]
            == missing[1]
            == {"error": {"parameter": "device", "message": "no such device"}}
        ), (method, path)


def test_devices_lists_only_the_scope(world: ApiWorld) -> None:
    status, body, _ = world.call("GET", "/devices", authorizer=jwt("viewer", devices="cam-i*"))
    assert status == 200 and [d["device"] for d in body["items"]] == [IN_SCOPE]
    status, body, _ = world.call("GET", "/devices", authorizer=jwt("viewer", devices="*"))
    assert [d["device"] for d in body["items"]] == [IN_SCOPE, OUT_OF_SCOPE]


def test_jobs_of_a_device_outside_the_scope_are_not_found(world: ApiWorld) -> None:
    # Given an export and a deletion request of a device, made by an admin of every device
    admin = jwt("admin", devices="*")
    export = world.call(
        "POST",
        f"/devices/{OUT_OF_SCOPE}/exports",
        body=json.dumps(BODIES[("POST", "/devices/{device}/exports")]),
        authorizer=admin,
    )
    deletion = world.call("DELETE", f"/devices/{OUT_OF_SCOPE}/segments", WINDOW, authorizer=admin)
    assert (export[0], deletion[0]) == (202, 202)
    scoped = jwt("admin", devices=IN_SCOPE)
    for location in (export[2]["Location"], deletion[2]["Location"]):
        # When a caller scoped to another device reads the job, or withdraws it
        job_id = location.rsplit("/", 1)[1]
        unknown = location.replace(job_id, "f" * 32)
        for method in ("GET", "DELETE") if "deletions" in location else ("GET",):
            status, body, _ = world.call(method, location, authorizer=scoped)
            _, nothing, _ = world.call(method, unknown, authorizer=scoped)
            # Then 404, the answer of a job that does not exist
            assert status == 404, (method, location, body)
            assert body["error"]["message"] == nothing["error"]["message"].replace("f" * 32, job_id)
        # And the caller of every device reads it
        assert world.call("GET", location, authorizer=admin)[0] == 200


def test_headers_never_name_the_caller_in_the_lambda(world: ApiWorld) -> None:
    # Given a request without an authorizer that names a user, roles and devices in headers
    headers = {"X-User": "mallory", "X-Roles": "admin", "X-Devices": "*"}
    # When it reaches the Lambda's resolver
    status, body, _ = world.call("GET", "/devices", headers=headers, authorizer={})
    # Then it is not signed in
    assert status == 401 and body["error"]["message"].startswith("sign in")


def test_a_token_without_sub_is_refused(world: ApiWorld) -> None:
    token = ev.cognito_authorizer(None, ["admin"], devices="*")
    status, body, headers = world.call("GET", "/devices", authorizer=token)
    assert status == 401 and "sub" in body["error"]["message"]
    assert headers["WWW-Authenticate"] == "Bearer"


def test_public_routes_need_no_caller() -> None:
    public = sorted(route for route, rule in ROUTES.items() if rule == PUBLIC)
    assert public == [
        ("GET", "/exports/public-key"),
        ("GET", "/shares/{share_id}"),
        ("GET", "/shares/{share_id}/download"),
        ("GET", "/shares/{share_id}/frame"),
        ("GET", "/shares/{share_id}/media/{file}"),
        ("GET", "/shares/{share_id}/playlist.m3u8"),
        ("GET", "/viewer"),
        ("GET", "/viewer/{file}"),
    ]


def test_tracing_never_records_an_answer() -> None:
    # Given every tracer decorator of the package's code
    root = Path(video_index.__file__).parent
    decorators = []
    for source in root.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for decorator in node.decorator_list:
                    text = ast.unparse(decorator)
                    if text.startswith("tracer.capture_"):
                        decorators.append((source.name, text))
    # Then there are some, and each one leaves the answer (presigned URLs) out of the trace
    assert len(decorators) >= 6
    for name, text in decorators:
        assert "capture_response=False" in text, (name, text)
