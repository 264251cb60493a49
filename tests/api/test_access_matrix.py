"""Who may call what: every route of the OpenAPI document × every role, through the real
resolver (docs/access.md).

The routes come from ``/openapi.json`` itself, so a route added without a rule fails here,
and a route added with one is in the matrix without anyone editing this file.
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
from video_index.core.access import ACCESS_EXTENSION, PUBLIC, Role, Rule
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from worlds import events as ev
from worlds.api_world import ApiWorld, at, make_world

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
}
#: The callers of the matrix: no identity, a verified one without a role, each role.
CALLERS: Final[tuple[str | None, ...]] = ("anonymous", None, *(r.label for r in Role))


def routes() -> list[tuple[str, str, Rule]]:
    """Every (method, path, rule) of the OpenAPI document; a route without a rule fails."""
    document = (
        whole_app()
        .get_openapi_schema(title=TITLE, version="1")
        .model_dump(by_alias=True, exclude_none=True)
    )
    found = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "put", "post", "delete", "patch"):
                continue
            assert ACCESS_EXTENSION in operation, f"{method.upper()} {path} declares no rule"
            found.append((method.upper(), path, Rule.parse(operation[ACCESS_EXTENSION])))
    return found


ROUTES: Final = routes()


def test_every_route_declares_a_rule_and_401_403_in_the_document() -> None:
    document = (
        whole_app()
        .get_openapi_schema(title=TITLE, version="1")
        .model_dump(by_alias=True, exclude_none=True)
    )
    assert len(ROUTES) >= 23
    # (GET /me, which the viewer reads to show only what the role allows, is one of them)
    assert ("GET", "/me", Rule(Role.VIEWER)) in ROUTES
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert {401, 403} <= {int(s) for s in operation["responses"]}, f"{method} {path}"


def jwt(role: str | None, devices: str | None = None) -> dict[str, Any]:
    claims: dict[str, Any] = {"sub": f"user-{role}", "iss": "https://issuer.example.com"}
    if role is not None:
        claims["cognito:groups"] = f"[{role}]"
    if devices is not None:
        claims["custom:devices"] = devices
    return {"jwt": {"claims": claims, "scopes": None}}


def concrete(path: str, device: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: device if m[1] == "device" else SAMPLES[m[1]], path)


@pytest.fixture
def world(aws: None) -> ApiWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(
        dynamodb, "read-model", annotations="annotations", deletions="deletions", holds="holds"
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


def test_the_matrix_of_every_route_and_every_role(world: ApiWorld) -> None:
    results: dict[tuple[str, str, str], int] = {}
    for method, path, rule in ROUTES:
        for caller in CALLERS:
            # Given a caller (none, no role, or one role) of every device
            authorizer = {} if caller == "anonymous" else jwt(caller)
            # When it calls the route
            status, body, headers = request_with_headers(world, method, path, IN_SCOPE, authorizer)
            results[(method, path, str(caller))] = status
            where = f"{method} {path} as {caller}: {status} {body}"
            # Then the rule alone decides whether it runs
            if rule.role is None:
                assert status not in (401, 403), where
            elif caller == "anonymous":
                assert status == 401, where
            elif caller is None or Role.named(caller) < rule.role:
                assert status == 403, where
                assert rule.role.label in body["error"]["message"], where
            else:
                assert status not in (401, 403), where
                assert not (status == 404 and body["error"]["parameter"] == "device"), where
                # And no answer of an authorized route is kept by a cache (URLs, footage)
                assert headers.get("Cache-Control") == "no-store", where
    assert len(results) == len(ROUTES) * len(CALLERS)


def test_a_device_outside_the_scope_is_indistinguishable_from_none(world: ApiWorld) -> None:
    # Given an admin whose scope is one device
    scoped = jwt("admin", devices=IN_SCOPE)
    for method, path, rule in ROUTES:
        if "{device}" not in path or rule.role is None:
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
    status, body, _ = world.call("GET", "/devices", authorizer=jwt("viewer"))
    assert [d["device"] for d in body["items"]] == [IN_SCOPE, OUT_OF_SCOPE]


def test_jobs_of_a_device_outside_the_scope_are_not_found(world: ApiWorld) -> None:
    # Given an export and a deletion request of a device, made by an admin of every device
    admin = jwt("admin")
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
    token = {"jwt": {"claims": {"cognito:groups": "[admin]"}, "scopes": None}}
    status, body, headers = world.call("GET", "/devices", authorizer=token)
    assert status == 401 and "sub" in body["error"]["message"]
    assert headers["WWW-Authenticate"] == "Bearer"


def test_public_routes_need_no_caller(world: ApiWorld) -> None:
    public = sorted((m, p) for m, p, rule in ROUTES if rule.label == PUBLIC)
    assert public == [("GET", "/viewer"), ("GET", "/viewer/{file}")]


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
