"""Bad input on every annotation route and field: a 4xx naming what is wrong, never a 5xx,
and nothing written."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from video_index.core.table_schema import create_tables
from worlds.api_world import ApiWorld, at, make_world

ROUTE = "/devices/cam-001/annotations"
RANGE = {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T11:00:00Z"}
GOOD = {"target": RANGE, "description": "ok", "status": "approved", "tags": ["a", "b-2"]}
WINDOW = "from=2026-11-29T00:00:00Z&to=2026-11-30T00:00:00Z"
#: A well-formed video file name no segment has.
NAME = "20261129T100000.000Z_10000_3f9a1c2e7b4d5a60.mp4"


@pytest.fixture(scope="module")
def world() -> Iterator[ApiWorld]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb")
        create_tables(dynamodb, "read-model", "annotations")
        w = make_world(dynamodb, "read-model", annotations_table="annotations")
        w.put("video", "cam-001", at(29, 10), 10_000)
        yield w


@pytest.fixture(scope="module")
def existing(world: ApiWorld) -> str:
    status, body, _ = world.call("POST", ROUTE, body=json.dumps(GOOD))
    assert status == 201
    return str(body["annotation_id"])


def _with(**changes: Any) -> str:
    return json.dumps({**GOOD, **changes})


def _target(**target: Any) -> str:
    return json.dumps({**GOOD, "target": target})


BAD_BODIES = [
    # (body, status, parameter)
    ("{}", 400, "target"),
    ("[]", 400, "body"),
    ("null", 400, "body"),
    ('"text"', 400, "body"),
    ("{not json", 400, "body"),
    ("[" * 5000, 400, "body"),
    (_with(colour="red"), 400, "colour"),
    (_target(), 400, "target"),
    (_target(segment="3f9a1c2e7b4d5a60", **RANGE), 400, "target"),
    (_target(**{"from": RANGE["from"]}), 400, "target"),
    (_target(to=RANGE["to"]), 400, "target"),
    (_target(kind="video", name=NAME, **RANGE), 400, "target"),
    (_target(segment="UPPER", kind="video", name=NAME), 400, "target.segment"),
    (_target(segment="a" * 65, kind="video", name=NAME), 400, "target.segment"),
    (_target(segment=12, kind="video", name=NAME), 400, "target.segment"),
    (_target(segment="0000000000000000", kind="video", name=NAME), 400, "target.segment"),
    # the id alone no longer locates a segment (no index): its entry's kind and name do
    (_target(segment="3f9a1c2e7b4d5a60"), 400, "target.kind"),
    (_target(kind="video"), 400, "target.name"),
    (_target(name=NAME), 400, "target.kind"),
    (_target(kind="audio", name=NAME), 400, "target.kind"),
    (_target(kind=7, name=NAME), 400, "target.kind"),
    (_target(kind="video", name="UPPER"), 400, "target.name"),
    (_target(kind="video", name=7), 400, "target.name"),
    (_target(kind="video", name="a" * 101), 400, "target.name"),
    (_target(kind="sensor", name=NAME), 400, "target.name"),
    (_target(kind="video", name=NAME.replace("1129", "1131")), 400, "target.name"),
    (_target(kind="video", name=f"../{NAME}"), 400, "target.name"),
    (_target(kind="video", name=NAME), 404, "target.name"),
    (_target(**{"from": "yesterday", "to": RANGE["to"]}), 400, "target.from"),
    (_target(**{"from": "2026-11-29T10:00:00", "to": RANGE["to"]}), 400, "target.from"),
    (_target(**{"from": "0001-01-01T00:00:00Z", "to": RANGE["to"]}), 400, "target.from"),
    (_target(**{"from": RANGE["from"], "to": "2026-11-29T10:00:00+00:00"}), 400, "target.to"),
    (_target(**{"from": RANGE["to"], "to": RANGE["from"]}), 400, "target.to"),
    (
        _target(**{"from": "2026-11-01T00:00:00Z", "to": "2026-12-02T00:00:00.001Z"}),
        400,
        "target.to",
    ),
    (_target(**{"from": "x" * 65, "to": RANGE["to"]}), 400, "target.from"),
    (_with(description="x" * 4001), 400, "description"),
    (_with(description="🦊" * 4001), 400, "description"),
    (_with(description=42), 400, "description"),
    (
        '{"target": {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T11:00:00Z"}, '
        '"description": "\\ud83d"}',
        400,
        "description",
    ),
    (_with(status="done"), 400, "status"),
    (_with(status="APPROVED"), 400, "status"),
    (_with(status=None), 400, "status"),
    (_with(tags="a"), 400, "tags"),
    (_with(tags=[f"t{n}" for n in range(21)]), 400, "tags"),
    (_with(tags=["A"]), 400, "tags[0]"),
    (_with(tags=["ok", ""]), 400, "tags[1]"),
    (_with(tags=["x" * 33]), 400, "tags[0]"),
    (_with(tags=["a b"]), 400, "tags[0]"),
    (_with(tags=[7]), 400, "tags[0]"),
]


@pytest.mark.parametrize(("body", "status", "parameter"), BAD_BODIES)
@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_a_bad_body_is_refused_naming_the_field(
    world: ApiWorld, existing: str, method: str, body: str, status: int, parameter: str
) -> None:
    path = ROUTE if method == "POST" else f"{ROUTE}/{existing}"
    before = world.dynamodb.scan(TableName="annotations")["Count"]
    # When a body breaking a rule is sent (with the current ETag for a PUT)
    got, answer, _ = world.call(method, path, body=body, headers={"If-Match": '"1"'})
    # Then the answer names the field, and nothing was written
    assert (got, answer["error"]["parameter"]) == (status, parameter), answer
    assert answer["error"]["message"]
    assert world.dynamodb.scan(TableName="annotations")["Count"] == before


def test_the_largest_valid_body_is_accepted_as_given(world: ApiWorld) -> None:
    # Given 4,000 characters outside the BMP, each escaped as a surrogate pair in JSON
    description = "🦊" * 3999 + "\u0000"
    body = json.dumps({**GOOD, "description": description, "tags": [f"t{n}" for n in range(20)]})
    assert len(body) > 48_000
    # When it is posted
    status, created, _ = world.call("POST", ROUTE, body=body)
    # Then it is stored exactly as given
    assert status == 201, created
    assert created["description"] == description and len(created["tags"]) == 20


@pytest.mark.parametrize(
    ("content_type", "body", "base64_encoded", "status", "parameter"),
    [
        ("text/plain", json.dumps(GOOD), False, 415, "Content-Type"),
        ("application/x-www-form-urlencoded", "target=x", False, 415, "Content-Type"),
        ("multipart/form-data; boundary=x", "--x--", False, 415, "Content-Type"),
        ("application/json", base64.b64encode(b"\xff\xfe{}").decode(), True, 400, "body"),
        ("application/json", json.dumps({**GOOD, "description": "x" * 70_000}), False, 413, "body"),
        ("text/plain", "x" * 70_000, False, 413, "body"),
    ],
)
def test_bodies_that_are_not_json_or_too_large(
    world: ApiWorld,
    content_type: str,
    body: str,
    base64_encoded: bool,
    status: int,
    parameter: str,
) -> None:
    from worlds import events as ev
    from worlds.api_world import resolve

    event = ev.http_request(ROUTE, method="POST")
    event["headers"]["content-type"] = content_type
    event["body"] = body
    event["isBase64Encoded"] = base64_encoded
    response = resolve(event)
    answer = json.loads(response["body"])
    assert (response["statusCode"], answer["error"]["parameter"]) == (status, parameter)


BAD_REQUESTS = [
    # (method, path, query, If-Match, status, parameter)
    ("GET", "/devices/Cam/annotations", WINDOW, None, 400, "device"),
    ("GET", ROUTE, "", None, 400, "from"),
    ("GET", ROUTE, "from=2026-11-29T00:00:00Z", None, 400, "to"),
    ("GET", ROUTE, "from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", None, 400, "to"),
    ("GET", ROUTE, f"{WINDOW}&status=done", None, 400, "status"),
    ("GET", ROUTE, f"{WINDOW}&tag=UPPER", None, 400, "tag"),
    ("GET", ROUTE, f"{WINDOW}&limit=0", None, 400, "limit"),
    ("GET", ROUTE, f"{WINDOW}&limit=101", None, 400, "limit"),
    ("GET", ROUTE, f"{WINDOW}&cursor=%%%", None, 400, "cursor"),
    ("GET", ROUTE, f"{WINDOW}&cursor=eyJ2IjoxLCJhZnRlciI6InYjeCJ9", None, 400, "cursor"),
    ("GET", f"{ROUTE}/UPPER", "", None, 400, "annotation_id"),
    ("GET", f"{ROUTE}/{'a' * 65}", "", None, 400, "annotation_id"),
    ("GET", f"{ROUTE}/0123abcd", "", None, 404, "annotation_id"),
    ("GET", f"{ROUTE}/0123abcd/history", "", None, 404, "annotation_id"),
    ("GET", f"{ROUTE}/0123abcd/history", "limit=0", None, 400, "limit"),
    ("GET", f"{ROUTE}/0123abcd/history", "cursor=abc", None, 400, "cursor"),
    ("PUT", f"{ROUTE}/0123abcd", "", '"1"', 404, "annotation_id"),
    ("PUT", f"{ROUTE}/EXISTING", "", "version-one", 400, "If-Match"),
    ("PUT", f"{ROUTE}/EXISTING", "", '"1" junk', 400, "If-Match"),
    ("PUT", f"{ROUTE}/EXISTING", "", "x" * 1025, 400, "If-Match"),
    ("PUT", f"{ROUTE}/EXISTING", "", None, 428, "If-Match"),
    ("PUT", f"{ROUTE}/EXISTING", "", '"9"', 412, "If-Match"),
    ("DELETE", f"{ROUTE}/0123abcd", "", '"1"', 404, "annotation_id"),
    ("DELETE", f"{ROUTE}/EXISTING", "", None, 428, "If-Match"),
    ("DELETE", f"{ROUTE}/EXISTING", "", '"0"', 412, "If-Match"),
    ("DELETE", f"{ROUTE}/UPPER", "", '"1"', 400, "annotation_id"),
    ("PATCH", f"{ROUTE}/EXISTING", "", '"1"', 405, None),
    ("POST", f"{ROUTE}/EXISTING", "", None, 405, None),
]


@pytest.mark.parametrize(
    ("method", "path", "query", "if_match", "status", "parameter"), BAD_REQUESTS
)
def test_bad_parameters_ids_and_preconditions(
    world: ApiWorld,
    existing: str,
    method: str,
    path: str,
    query: str,
    if_match: str | None,
    status: int,
    parameter: str | None,
) -> None:
    path = path.replace("EXISTING", existing)
    body = json.dumps(GOOD) if method in ("PUT", "POST") else None
    headers = {"If-Match": if_match} if if_match is not None else {}
    got, answer, _ = world.call(method, path, query, body=body, headers=headers)
    assert (got, answer["error"]["parameter"]) == (status, parameter), answer
    # And the annotation everyone tried to break is untouched
    assert world.call("GET", f"{ROUTE}/{existing}")[1]["version"] == 1


def test_a_cursor_of_one_window_is_refused_in_another(world: ApiWorld) -> None:
    for n in range(3):
        start = f"2026-11-28T0{n}:00:00Z"
        world.call("POST", ROUTE, body=_target(**{"from": start, "to": "2026-11-28T09:00:00Z"}))
    status, page, _ = world.call(
        "GET", ROUTE, "from=2026-11-28T00:00:00Z&to=2026-11-28T10:00:00Z&limit=1"
    )
    assert status == 200 and page["next_cursor"]
    far = f"from=2026-10-01T00:00:00Z&to=2026-10-02T00:00:00Z&cursor={page['next_cursor']}"
    status, answer, _ = world.call("GET", ROUTE, far)
    assert (status, answer["error"]["parameter"]) == (400, "cursor")
