"""Annotations over HTTP against `video-index local` (the session stack): CRUD with ETags,
who from X-User, the join, CORS for a browser page on the loopback interface."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from tests.support.local_stack import RunningStack, iso, listed, poll, put_segments

DEVICE = "cam-annotate"


def test_annotations_over_http_with_etags_and_who(local_stack: RunningStack) -> None:
    # Given three segments of a device in the read model
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    keys = put_segments(local_stack, DEVICE, first, 3)
    end = first + timedelta(minutes=1)
    poll(lambda: listed(local_stack, DEVICE, first, end), lambda k: k == set(keys), "ingest", 30)
    name = keys[1].rsplit("/", 1)[1]  # the segment entry's name (with its kind: the address)
    target = {"kind": "video", "name": name}
    route = f"/devices/{DEVICE}/annotations"
    # When alice annotates the second segment
    status, created, headers = local_stack.call(
        "POST",
        route,
        {"target": target, "description": "Übergabe 🚚", "tags": ["handover"]},
        {"X-User": "alice"},
    )
    # Then 201 with Location and ETag, alice as the author
    assert status == 201, created
    location = headers["Location"]
    assert location == f"{route}/{created['annotation_id']}"
    assert headers["ETag"] == '"1"' and created["created_by"] == "alice"
    # And it reads back the same
    status, read, headers = local_stack.call("GET", location)
    assert (status, read, headers["ETag"]) == (200, created, '"1"')
    # When bob replaces it with that ETag, and carol tries with the same (stale) one
    replacement = {"target": target, "status": "approved", "description": "ok"}
    status, replaced, headers = local_stack.call(
        "PUT", location, replacement, {"X-User": "bob", "If-Match": '"1"'}
    )
    assert status == 200 and headers["ETag"] == '"2"'
    assert (replaced["created_by"], replaced["updated_by"]) == ("alice", "bob")
    status, refused, _ = local_stack.call(
        "PUT",
        location,
        {**replacement, "description": "carol"},
        {"X-User": "carol", "If-Match": '"1"'},
    )
    # Then carol gets 412, and without If-Match 428; bob's version stands
    assert status == 412 and refused["error"]["parameter"] == "If-Match"
    assert local_stack.call("PUT", location, replacement)[0] == 428
    assert local_stack.call("GET", location)[1]["description"] == "ok"
    # And the segment list carries it on the second segment only
    query = urlencode({"from": iso(first), "to": iso(end)})
    status, page, _ = local_stack.call("GET", f"/devices/{DEVICE}/segments?{query}")
    carried = {e["name"]: [a["annotation_id"] for a in e["annotations"]] for e in page["items"]}
    assert carried[name] == [created["annotation_id"]]
    assert sum(len(v) for v in carried.values()) == 1
    # When it is deleted, without X-User (the local stand-in names the caller "local")
    status, _, _ = local_stack.call("DELETE", location, headers={"If-Match": '"2"'})
    assert status == 204
    # Then it is gone, and its history tells the whole story
    assert local_stack.call("GET", location)[0] == 404
    status, history, _ = local_stack.call("GET", f"{location}/history")
    assert [(v["version"], v["updated_by"], v["deleted"]) for v in history["items"]] == [
        (1, "alice", False),
        (2, "bob", False),
        (3, "local", True),
    ]


def test_a_browser_page_on_loopback_may_edit_and_read_the_etag(local_stack: RunningStack) -> None:
    # Given a page on another loopback port creating a range annotation
    origin = "http://127.0.0.1:5173"
    body = {"target": {"from": "2026-11-30T10:00:00Z", "to": "2026-11-30T11:00:00Z"}}
    status, created, headers = local_stack.call(
        "POST", f"/devices/{DEVICE}/annotations", body, {"Origin": origin}
    )
    # Then it may read ETag and Location (exposed), as the viewer needs to edit
    assert status == 201
    assert headers["access-control-allow-origin"] == origin
    exposed = {h.strip() for h in headers["access-control-expose-headers"].split(",")}
    assert {"etag", "location"} <= exposed
    assert created["created_by"] == "local"
