"""The audit trail through the real resolver (docs/audit.md): what a viewer and an operator
do to camera A is exactly what ``GET /audit`` answers; a refusal leaves a ``denied``
record; reading the trail is recorded too; a request whose record cannot be stored is not
served.

The expected records are written out here, field by field, from what each request was.
"""

from __future__ import annotations

import json
from typing import Any, Final

import boto3
import pytest

from video_index.api import context
from video_index.app.routes import media_app
from video_index.app.services import build_media_services
from video_index.aws.audit import S3AuditLog, create_audit_trail
from video_index.aws.clients import S3_CONFIG, Clients
from video_index.aws.deletions import DeletionTable
from video_index.aws.holds import HoldStore
from video_index.aws.objects import ObjectStore
from video_index.core.settings import Settings
from video_index.core.table_schema import create_tables
from video_index.deletion.jobs import DeletionJobs
from video_index.holds.service import Holds, HoldsHeldWindows
from worlds import events as ev
from worlds.api_world import AUDIT_BUCKET, ApiWorld, at, iso, make_world

CAMERA_A: Final = "cam-a"
CAMERA_B: Final = "cam-b"
FROM, TO = at(29, 10), at(29, 10, 0, 30)
WINDOW: Final = f"from={iso(FROM)}&to={iso(TO)}"
#: The day every record of these tests falls in (the world's clock is 2026-11-30 12:30 UTC).
TODAY: Final = "from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z"
SOURCE: Final = "203.0.113.10"  # the sample event's address


def jwt(role: str, devices: str = CAMERA_A) -> dict[str, Any]:
    return ev.cognito_authorizer(f"user-{role}", [role], devices=devices)


ADMIN: Final = jwt("admin", devices="*")


@pytest.fixture
def world(aws: None) -> ApiWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model")
    made = make_world(dynamodb, "read-model")
    made.services.exports._enqueue = lambda _: None
    made.put("video", CAMERA_A, FROM, 10_000, media="ts")
    made.put("video", CAMERA_B, FROM, 10_000)
    return made


def audit(world: ApiWorld, query: str = "") -> list[dict[str, Any]]:
    status, body, _ = world.call(
        "GET", "/audit", "&".join(filter(None, (TODAY, query))), authorizer=ADMIN
    )
    assert status == 200, body
    items: list[dict[str, Any]] = body["items"]
    return items


def essentials(record: dict[str, Any]) -> tuple[Any, ...]:
    return (
        record["principal"],
        record["role"],
        record["action"],
        record["device"],
        record["from"],
        record["to"],
        record["outcome"],
        record["status"],
    )


def test_a_viewer_and_an_operator_leave_exactly_their_records(world: ApiWorld) -> None:
    # Given a viewer of camera A who lists its segments, plays the window and takes a frame
    viewer = jwt("viewer")
    assert world.call("GET", f"/devices/{CAMERA_A}/segments", WINDOW, authorizer=viewer)[0] == 200
    playlist = world.call("GET", f"/devices/{CAMERA_A}/playlist.m3u8", WINDOW, authorizer=viewer)
    assert playlist[0] == 200
    frame = world.call(
        "GET", f"/devices/{CAMERA_A}/frame", f"t={iso(at(29, 10, 0, 2))}", authorizer=viewer
    )
    assert frame[0] == 200
    # And an operator who exports camera A over the window
    body = json.dumps({"from": iso(FROM), "to": iso(TO)})
    operator = jwt("operator")
    exported = world.call("POST", f"/devices/{CAMERA_A}/exports", body=body, authorizer=operator)
    assert exported[0] == 202
    # And requests that read nothing sensitive (the calendar, the device list)
    assert (
        world.call("GET", f"/devices/{CAMERA_A}/calendar", "month=2026-11", authorizer=viewer)[0]
        == 200
    )
    assert world.call("GET", "/devices", authorizer=viewer)[0] == 200
    # When an admin reads the audit of camera A
    records = audit(world, f"device={CAMERA_A}")
    # Then it answers exactly those four records
    f, t, moment = (
        "2026-11-29T10:00:00.000Z",
        "2026-11-29T10:00:30.000Z",
        "2026-11-29T10:00:02.000Z",
    )
    assert sorted(map(essentials, records)) == sorted(
        [
            ("user-viewer", "viewer", "segments.list", CAMERA_A, f, t, "ok", 200),
            ("user-viewer", "viewer", "playlist.read", CAMERA_A, f, t, "ok", 200),
            ("user-viewer", "viewer", "frame.read", CAMERA_A, moment, moment, "ok", 200),
            ("user-operator", "operator", "export.create", CAMERA_A, f, t, "ok", 202),
        ]
    )
    # And each names its time, request, source and route, and no URL or query string
    for record in records:
        assert record["time"] == "2026-11-30T12:30:00.000Z"
        assert record["source"] == SOURCE and record["request_id"]
        assert record["route"].startswith(("GET /devices/{device}/", "POST /devices/{device}/"))
        assert "?" not in json.dumps(record) and "http" not in json.dumps(record)


def test_a_camera_outside_the_scope_leaves_a_denied_record(world: ApiWorld) -> None:
    # Given a viewer of camera A
    viewer = jwt("viewer")
    # When it asks for camera B's playlist, and for an export it may not make
    status, _, _ = world.call(
        "GET", f"/devices/{CAMERA_B}/playlist.m3u8", WINDOW, authorizer=viewer
    )
    body = json.dumps({"from": iso(FROM), "to": iso(TO)})
    refused, _, _ = world.call("POST", f"/devices/{CAMERA_A}/exports", body=body, authorizer=viewer)
    # And a request without any identity reads a calendar (a route audited on refusal only)
    anonymous, _, _ = world.call(
        "GET", f"/devices/{CAMERA_A}/calendar", "month=2026-11", authorizer={}
    )
    assert (status, refused, anonymous) == (404, 403, 401)
    # Then each left a denied record
    f, t = "2026-11-29T10:00:00.000Z", "2026-11-29T10:00:30.000Z"
    assert sorted(map(essentials, audit(world, "action=playlist.read"))) == [
        ("user-viewer", "viewer", "playlist.read", CAMERA_B, f, t, "denied", 404)
    ]
    assert sorted(map(essentials, audit(world, "action=export.create"))) == [
        ("user-viewer", "viewer", "export.create", CAMERA_A, f, t, "denied", 403)
    ]
    assert sorted(map(essentials, audit(world, "principal=anonymous"))) == [
        ("anonymous", None, "request", CAMERA_A, None, None, "denied", 401)
    ]


def test_reading_the_audit_is_audited(world: ApiWorld) -> None:
    # Given an admin who reads the audit, and an operator who tries to
    assert audit(world) == []
    status, _, _ = world.call("GET", "/audit", TODAY, authorizer=jwt("operator", devices="*"))
    assert status == 403
    # When the admin reads it again
    records = audit(world, "action=audit.read")
    # Then both reads are in it: the admin's, allowed, and the operator's, refused
    today = ("2026-11-30T00:00:00.000Z", "2026-12-01T00:00:00.000Z")
    assert sorted(map(essentials, records)) == [
        ("user-admin", "admin", "audit.read", None, *today, "ok", 200),
        ("user-operator", "operator", "audit.read", None, *today, "denied", 403),
    ]


def test_the_audit_pages_with_a_cursor(world: ApiWorld) -> None:
    # Given five segment listings by a viewer
    viewer = jwt("viewer")
    for _ in range(5):
        world.call("GET", f"/devices/{CAMERA_A}/segments", WINDOW, authorizer=viewer)
    # When an admin reads the audit two records at a time
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        query = f"{TODAY}&action=segments.list&limit=2" + (f"&cursor={cursor}" if cursor else "")
        status, body, _ = world.call("GET", "/audit", query, authorizer=ADMIN)
        assert status == 200 and len(body["items"]) <= 2
        seen += [record["record_id"] for record in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    # Then every record comes once, in time order
    assert len(seen) == 5 and seen == sorted(set(seen))


def test_bad_audit_queries_name_the_parameter(world: ApiWorld) -> None:
    for query, parameter in (
        ("to=2026-12-01T00:00:00Z", "from"),
        ("from=2026-10-01T00:00:00Z&to=2026-12-01T00:00:00Z", "to"),  # over 31 days
        (f"{TODAY}&action=watch", "action"),
        (f"{TODAY}&cursor=made-up", "cursor"),
    ):
        status, body, _ = world.call("GET", "/audit", query, authorizer=ADMIN)
        assert (status, body["error"]["parameter"]) == (400, parameter), query


def test_a_read_whose_record_cannot_be_stored_is_not_served(world: ApiWorld) -> None:
    # Given an audit trail whose bucket cannot be written (it does not exist)
    world.services.audit = S3AuditLog(
        world.s3, "no-such-audit-bucket", world.dynamodb, "read-model-audit", 400
    )
    world.services._by_type.clear()
    # When a viewer asks for a playlist
    status, body, _ = world.call(
        "GET", f"/devices/{CAMERA_A}/playlist.m3u8", WINDOW, authorizer=jwt("viewer")
    )
    # Then it gets a 503 and no footage (fail closed), never an unrecorded answer
    assert status == 503 and "audit" in body["error"]["message"]
    assert "#EXTM3U" not in json.dumps(body)


def media_file(settings: Settings, clients: Clients) -> dict[str, Any]:
    """A viewer's request for a file of camera A, to the media function's resolver."""
    context.configure(lambda: build_media_services(settings, clients))
    event = ev.http_request(f"/devices/{CAMERA_A}/media/20261129T100000.000Z_10000_abc123.ts")
    event["requestContext"]["authorizer"] = jwt("viewer")
    answer: dict[str, Any] = media_app().resolve(event, None)
    return answer


def test_the_media_function_records_and_fails_closed_without_its_settings(aws: None) -> None:
    s3 = boto3.client("s3", config=S3_CONFIG)
    s3.create_bucket(Bucket=ev.BUCKET)
    dynamodb = boto3.client("dynamodb")
    clients = Clients(dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs"))
    # Given the media function without the audit trail's settings
    # When a viewer asks for a file
    answer = media_file(Settings(bucket=ev.BUCKET, table=""), clients)
    # Then it is refused 503 (no redirect to the file)
    assert answer["statusCode"] == 503, answer
    assert "Location" not in (answer.get("headers") or {})
    # Given the media function with them
    create_audit_trail(s3, AUDIT_BUCKET, dynamodb, "audit", 30)
    settings = Settings(bucket=ev.BUCKET, table="", audit_bucket=AUDIT_BUCKET, audit_table="audit")
    # When a viewer asks for the file
    answer = media_file(settings, clients)
    # Then it is redirected, and one record of it lies in the bucket and in the index
    assert answer["statusCode"] == 302, answer
    objects = s3.list_objects_v2(Bucket=AUDIT_BUCKET)["Contents"]
    items = dynamodb.scan(TableName="audit")["Items"]
    assert len(objects) == len(items) == 1
    record = json.loads(s3.get_object(Bucket=AUDIT_BUCKET, Key=objects[0]["Key"])["Body"].read())
    assert (record["action"], record["device"], record["principal"], record["outcome"]) == (
        "media.read",
        CAMERA_A,
        "user-viewer",
        "ok",
    )


@pytest.fixture
def keeping(aws: None) -> ApiWorld:
    """A world with deletion requests and holds (as deployed)."""
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", deletions="deletions", holds="holds")
    made = make_world(dynamodb, "read-model")
    made.services.holds = Holds(HoldStore(dynamodb, "holds"))
    made.services.deletions = DeletionJobs(
        DeletionTable(dynamodb, "deletions"),
        ObjectStore(made.s3, ev.BUCKET),
        enqueue=lambda _: None,
        holds=HoldsHeldWindows(made.services.holds),
        clock=lambda: at(30, 12).timestamp(),
    )
    made.services._by_type.clear()
    made.put("video", CAMERA_A, FROM, 10_000)
    return made


def test_changes_of_what_is_kept_are_recorded_as_what_they_do(keeping: ApiWorld) -> None:
    # Given an operator who places a hold on camera A and tries to erase a window (erase=1)
    operator = jwt("operator")
    body = json.dumps({"from": iso(FROM), "to": iso(TO), "reason": "case 7"})
    placed = keeping.call("POST", f"/devices/{CAMERA_A}/holds", body=body, authorizer=operator)
    window = f"from={iso(at(29, 11))}&to={iso(at(29, 12))}"
    refused = keeping.call(
        "DELETE", f"/devices/{CAMERA_A}/segments", f"{window}&erase=1", authorizer=operator
    )
    # And an admin who erases that window
    erased = keeping.call(
        "DELETE", f"/devices/{CAMERA_A}/segments", f"{window}&erase=true", authorizer=ADMIN
    )
    assert (placed[0], refused[0], erased[0]) == (201, 403, 202)
    # Then the audit names each as what it does
    f, t = "2026-11-29T10:00:00.000Z", "2026-11-29T10:00:30.000Z"
    g, u = "2026-11-29T11:00:00.000Z", "2026-11-29T12:00:00.000Z"
    assert sorted(map(essentials, audit(keeping, f"device={CAMERA_A}"))) == sorted(
        [
            ("user-operator", "operator", "hold.place", CAMERA_A, f, t, "ok", 201),
            ("user-operator", "operator", "deletion.erase", CAMERA_A, g, u, "denied", 403),
            ("user-admin", "admin", "deletion.erase", CAMERA_A, g, u, "ok", 202),
        ]
    )
