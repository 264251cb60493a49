"""The annotation routes in-process (docs/annotations.md): CRUD with ETags, history,
identity, lists, filters, pagination, ``segment_present`` and the join into segment
entries, on both engines."""

from __future__ import annotations

import json
from typing import Any

from tests.annotations.conftest import DEVICE, delete, get, jwt, on, post, put, shown, window
from worlds.api_world import ApiWorld, address, at, iso, make_world

MINUTE = 60_000


#: The caller of the test event (worlds/events/apigw_http_v2.json).
IAM_CALLER = "arn:aws:iam::111122223333:user/viewer"


def _range(start: str, end: str, **fields: Any) -> dict[str, Any]:
    return {"target": {"from": start, "to": end}, **fields}


def test_create_read_replace_delete_with_etags(world: ApiWorld) -> None:
    # Given a segment of the device
    segment = world.put("video", DEVICE, at(29, 10), 10_000)
    # When a person annotates it
    status, created, headers = post(
        world,
        {"target": on(segment), "description": "Fox at the gate 🦊", "tags": ["fox"]},
    )
    # Then 201 with the annotation, its Location and its ETag (the version)
    assert status == 201, created
    aid = created["annotation_id"]
    assert headers["Location"] == f"/devices/{DEVICE}/annotations/{aid}"
    assert headers["ETag"] == '"1"'
    assert created["target"] == shown(segment)
    assert created["description"] == "Fox at the gate 🦊"
    assert created["status"] == "pending"
    assert (created["tags"], created["version"]) == (["fox"], 1)
    # (the test event's IAM caller: it changes its own annotation below)
    assert created["created_by"] == created["updated_by"] == IAM_CALLER
    assert created["created_at"] == created["updated_at"] == iso(world_now())
    assert (created["start"], created["end"]) == (iso(at(29, 10)), iso(at(29, 10, 0, 10)))
    assert created["segment_key"] == segment.key and created["segment_present"] is True
    # And reading it answers the same, with the same ETag
    status, read, headers = get(world, aid)
    assert (status, read, headers["ETag"]) == (200, created, '"1"')
    # When it is replaced as a whole with that ETag
    status, replaced, headers = put(
        world,
        aid,
        _range("2026-11-29T09:00:00Z", "2026-11-29T11:00:00+00:00", status="approved"),
        '"1"',
    )
    # Then version 2 holds exactly the new body; created_* stay, updated_* move
    assert status == 200, replaced
    assert headers["ETag"] == '"2"'
    assert replaced["target"] == {"from": iso(at(29, 9)), "to": iso(at(29, 11))}
    assert (replaced["description"], replaced["tags"], replaced["status"]) == ("", [], "approved")
    assert replaced["created_by"] == IAM_CALLER and replaced["version"] == 2
    assert replaced["segment_key"] is None and replaced["segment_present"] is None
    # When it is deleted with the current ETag
    status, body, _ = delete(world, aid, '"2"')
    # Then 204, and it is gone (404) from reads and lists
    assert (status, body) == (204, None)
    assert get(world, aid)[0] == 404
    status, page, _ = world.call(
        "GET", f"/devices/{DEVICE}/annotations", window("2026-11-29T00:00:00Z", "2026-11-30T00:00Z")
    )
    assert (status, page["items"]) == (200, [])


def world_now() -> Any:
    from worlds.api_world import NOW

    return NOW


def test_a_stale_etag_is_412_a_missing_one_428_and_nothing_is_overwritten(
    world: ApiWorld,
) -> None:
    # Given an annotation that Bob changed to version 2 after Alice read version 1
    _, created, _ = post(world, _range("2026-11-29T10:00:00Z", "2026-11-29T10:05:00Z"))
    aid = created["annotation_id"]
    assert (
        put(world, aid, _range(created["start"], created["end"], description="Bob"), '"1"')[0]
        == 200
    )
    # When Alice saves with the ETag she read
    status, body, _ = put(
        world, aid, _range(created["start"], created["end"], description="Alice"), '"1"'
    )
    # Then 412 naming If-Match, and Bob's version stands
    assert status == 412 and body["error"]["parameter"] == "If-Match"
    assert get(world, aid)[1]["description"] == "Bob"
    # And without If-Match (or with "*", which would overwrite blindly) it is 428
    for etag in (None, "*", " "):
        status, body, _ = put(world, aid, _range(created["start"], created["end"]), etag)
        assert status == 428 and body["error"]["parameter"] == "If-Match", etag
        assert delete(world, aid, etag)[0] == 428
    # And a weak tag or a tag that is not ours never matches (strong comparison)
    for etag in ('W/"2"', '"two"', '"1", "3"'):
        assert put(world, aid, _range(created["start"], created["end"]), etag)[0] == 412, etag
    # And a stale delete is refused too; the annotation is still there at version 2
    assert delete(world, aid, '"1"')[0] == 412
    assert get(world, aid)[1]["version"] == 2
    # And a list of tags that includes the current one matches, so does a bare version
    assert put(world, aid, _range(created["start"], created["end"]), '"7", "2"')[0] == 200
    assert delete(world, aid, "3")[0] == 204


def test_history_keeps_every_version_with_who_and_when_even_after_delete(
    world: ApiWorld,
) -> None:
    # Given an annotation created by alice, replaced by bob, deleted by carol
    body = _range("2026-11-29T10:00:00Z", "2026-11-29T10:05:00Z", description="first")
    _, created, _ = post(world, body, authorizer=jwt("alice"))
    aid = created["annotation_id"]
    path = f"/devices/{DEVICE}/annotations/{aid}"
    second = {**body, "description": "second", "tags": ["b"]}
    status, _, _ = world.call(
        "PUT", path, body=json.dumps(second), headers={"If-Match": '"1"'}, authorizer=jwt("bob")
    )
    assert status == 200
    status, _, _ = world.call("DELETE", path, headers={"If-Match": '"2"'}, authorizer=jwt("carol"))
    assert status == 204
    # When its history is read
    status, history, _ = world.call("GET", f"{path}/history")
    # Then every version is there, oldest first, with what it said and who wrote it
    assert status == 200 and history["next_cursor"] is None
    versions = history["items"]
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert [v["description"] for v in versions] == ["first", "second", "second"]
    assert [v["updated_by"] for v in versions] == ["alice", "bob", "carol"]
    assert {v["created_by"] for v in versions} == {"alice"}
    assert [v["deleted"] for v in versions] == [False, False, True]
    # And the history pages too
    status, first_page, _ = world.call("GET", f"{path}/history", "limit=2")
    assert [v["version"] for v in first_page["items"]] == [1, 2]
    status, rest, _ = world.call("GET", f"{path}/history", f"cursor={first_page['next_cursor']}")
    assert [v["version"] for v in rest["items"]] == [3] and rest["next_cursor"] is None
    # And a deleted annotation cannot be changed any more
    assert put(world, aid, body, '"3"')[0] == 404


def test_who_comes_from_the_authorizer_and_never_from_a_header(world: ApiWorld) -> None:
    body = _range("2026-11-29T10:00:00Z", "2026-11-29T10:05:00Z")
    iam = {"iam": {"userArn": "arn:aws:sts::111122223333:assumed-role/Editor/dana"}}
    cases = [
        (jwt("user-42"), "user-42"),
        (iam, "arn:aws:sts::111122223333:assumed-role/Editor/dana"),
    ]
    for authorizer, expected in cases:
        # Given a request that also claims another user in X-User
        _, created, _ = post(world, body, headers={"X-User": "mallory"}, authorizer=authorizer)
        # Then the authorizer's identity is recorded, X-User is ignored
        assert created["created_by"] == expected, authorizer
    # And without an authorizer's identity X-User is no identity at all: 401
    status, refused, _ = post(world, body, headers={"X-User": "mallory"}, authorizer={})
    assert status == 401 and "sign in" in refused["error"]["message"]


def test_window_lists_in_start_order_with_filters_and_pages(world: ApiWorld) -> None:
    # Given annotations at 10:00, 10:10, ... 10:50 with alternating status and tags
    ids = []
    for n in range(6):
        start = iso(at(29, 10, 10 * n))
        end = iso(at(29, 10, 10 * n + 5))
        status = "approved" if n % 2 else "pending"
        tags = ["even"] if n % 2 == 0 else ["odd", "x"]
        _, created, _ = post(world, _range(start, end, status=status, tags=tags))
        ids.append(created["annotation_id"])
    # And one of another device in the same window
    post(world, _range(iso(at(29, 10)), iso(at(29, 11))), device="cam-002")
    route = f"/devices/{DEVICE}/annotations"
    whole = window(iso(at(29, 10)), iso(at(29, 11)))
    # When the window is listed
    status, page, _ = world.call("GET", route, whole)
    # Then all six, by start, none of the other device
    assert status == 200 and [a["annotation_id"] for a in page["items"]] == ids
    # And a narrower window finds what intersects it (10:04-10:11 touches 10:00 and 10:10)
    narrow = window(iso(at(29, 10, 4)), iso(at(29, 10, 11)))
    assert [a["annotation_id"] for a in world.call("GET", route, narrow)[1]["items"]] == ids[:2]
    # And filters keep only the status or the tag asked for
    approved = world.call("GET", route, whole + "&status=approved")[1]["items"]
    assert [a["annotation_id"] for a in approved] == ids[1::2]
    even = world.call("GET", route, whole + "&tag=even")[1]["items"]
    assert [a["annotation_id"] for a in even] == ids[0::2]
    both = world.call("GET", route, whole + "&tag=x&status=pending")[1]["items"]
    assert both == []
    # And pages of 4 then 2 give the same list, the cursor ending at null
    first = world.call("GET", route, whole + "&limit=4")[1]
    second = world.call("GET", route, whole + f"&limit=4&cursor={first['next_cursor']}")[1]
    listed = [a["annotation_id"] for a in first["items"] + second["items"]]
    assert listed == ids and second["next_cursor"] is None
    # And a filtered list pages too
    page1 = world.call("GET", route, whole + "&status=pending&limit=2")[1]
    page2 = world.call(
        "GET", route, whole + f"&status=pending&limit=2&cursor={page1['next_cursor']}"
    )[1]
    assert [a["annotation_id"] for a in page1["items"] + page2["items"]] == ids[0::2]


def test_a_long_range_that_starts_weeks_before_the_window_is_found(world: ApiWorld) -> None:
    # Given a 31-day range from November 1 and a short one on November 29
    _, long, _ = post(world, _range("2026-11-01T00:00:00Z", "2026-12-02T00:00:00Z"))
    _, short, _ = post(world, _range(iso(at(29, 10)), iso(at(29, 10, 1))))
    # When a minute of November 29 is listed
    _, page, _ = world.call(
        "GET", f"/devices/{DEVICE}/annotations", window(iso(at(29, 10)), iso(at(29, 10, 1)))
    )
    # Then both, the long one first (it starts first)
    ids = [a["annotation_id"] for a in page["items"]]
    assert ids == [long["annotation_id"], short["annotation_id"]]


def test_an_annotation_whose_segment_is_gone_stays_with_segment_present_false(
    world: ApiWorld,
) -> None:
    # Given an annotation on a segment
    segment = world.put("video", DEVICE, at(29, 10), 10_000)
    _, created, _ = post(world, {"target": on(segment), "description": "keep me"})
    aid = created["annotation_id"]
    # When the segment's object is deleted (and its event ingested)
    world.delete(segment)
    assert world.get(address(segment))[0] == 404
    # Then the annotation is still read and listed, marked segment_present false
    status, read, headers = get(world, aid)
    assert status == 200 and read["segment_present"] is False
    assert read["description"] == "keep me" and read["segment_key"] == segment.key
    _, page, _ = world.call(
        "GET", f"/devices/{DEVICE}/annotations", window(iso(at(29, 9)), iso(at(29, 11)))
    )
    assert [(a["annotation_id"], a["segment_present"]) for a in page["items"]] == [(aid, False)]
    # And it can still be edited, keeping its (gone) segment as target
    status, edited, _ = put(
        world, aid, {"target": on(segment), "status": "rejected"}, headers["ETag"]
    )
    assert status == 200 and edited["target"] == shown(segment)
    assert edited["segment_present"] is False


def test_a_segment_target_is_its_entrys_kind_and_name_on_its_own_device(
    world: ApiWorld,
) -> None:
    # Given a segment of the device, as its entry lists it, and a segment of another device
    segment = world.put("sensor", DEVICE, at(29, 10), 0)
    other = world.put("video", "cam-002", at(29, 10), 10_000)
    _, page, _ = world.get(f"/devices/{DEVICE}/segments", window(iso(at(29, 10)), iso(at(29, 11))))
    (entry,) = page["items"]
    # When it is annotated by the entry's kind and name (no id)
    status, created, headers = post(
        world, {"target": {"kind": entry["kind"], "name": entry["name"]}}
    )
    # Then the target shows its id, kind and name: its address
    assert status == 201, created
    assert (
        created["target"]
        == shown(segment)
        == {
            "segment": entry["id"],
            "kind": entry["kind"],
            "name": entry["name"],
        }
    )
    # And the target read back can be sent back as it is (a replacement keeping it)
    status, edited, _ = put(
        world,
        created["annotation_id"],
        {"target": created["target"], "status": "approved"},
        headers["ETag"],
    )
    assert status == 200 and edited["target"] == created["target"]
    # And another device's segment, or a deleted one, is not found under this device
    world.delete(segment)
    for unreachable in (on(other), on(segment)):
        status, body, _ = post(world, {"target": unreachable})
        assert (status, body["error"]["parameter"]) == (404, "target.name"), body


def test_segment_entries_carry_their_annotations(world: ApiWorld) -> None:
    # Given three back-to-back segments, and a segment of another device
    segments = [world.put("video", DEVICE, at(29, 10, 0, 10 * n), 10_000) for n in range(3)]
    other = world.put("video", "cam-002", at(29, 10), 10_000)
    # And a note on the first segment, a range over the 2nd and 3rd, one on the other device
    _, on_first, _ = post(world, {"target": on(segments[0])})
    _, on_range, _ = post(world, _range(iso(at(29, 10, 0, 15)), iso(at(29, 10, 0, 25))))
    post(world, {"target": on(other)}, device="cam-002")
    # And a deleted one on the first segment
    _, gone, _ = post(world, {"target": on(segments[0])})
    delete(world, gone["annotation_id"], '"1"')
    # When the segments are listed, and one is read
    _, page, _ = world.get(f"/devices/{DEVICE}/segments", window(iso(at(29, 10)), iso(at(29, 11))))
    joined = {e["id"]: [a["annotation_id"] for a in e["annotations"]] for e in page["items"]}
    # Then each entry carries what targets it or a range intersecting it
    assert joined == {
        segments[0].id: [on_first["annotation_id"]],
        segments[1].id: [on_range["annotation_id"]],
        segments[2].id: [on_range["annotation_id"]],
    }
    _, entry, _ = world.get(address(segments[1]))
    assert [a["annotation_id"] for a in entry["annotations"]] == [on_range["annotation_id"]]
    assert entry["annotations"][0]["target"] == on_range["target"]
    # And an annotation of a present segment says so
    first = next(e for e in page["items"] if e["id"] == segments[0].id)
    assert first["annotations"][0]["segment_present"] is True


def test_annotations_survive_losing_every_read_model_item(world: ApiWorld) -> None:
    # Given an annotation on a segment and one on a range
    segment = world.put("video", DEVICE, at(29, 10), 10_000)
    _, on_segment, _ = post(world, {"target": on(segment), "description": "s"})
    _, on_range, _ = post(world, _range(iso(at(29, 9)), iso(at(29, 11)), description="r"))
    # When every item of the read model is deleted
    for item in world.dynamodb.scan(TableName=world.table)["Items"]:
        world.dynamodb.delete_item(TableName=world.table, Key={"pk": item["pk"], "sk": item["sk"]})
    assert world.dynamodb.scan(TableName=world.table)["Count"] == 0
    # Then both annotations are read and listed as before (the segment counted as absent)
    assert get(world, on_range["annotation_id"])[1] == on_range
    read = get(world, on_segment["annotation_id"])[1]
    assert {**read, "segment_present": True} == on_segment
    _, page, _ = world.call(
        "GET", f"/devices/{DEVICE}/annotations", window(iso(at(29, 9)), iso(at(29, 11)))
    )
    assert [a["description"] for a in page["items"]] == ["r", "s"]


def test_without_an_annotations_table_the_routes_say_so_and_segments_carry_none(
    world: ApiWorld,
) -> None:
    # Given the API without VIDEO_INDEX_ANNOTATIONS_TABLE
    bare = make_world(world.dynamodb, world.table)
    bare.put("video", DEVICE, at(29, 10), 10_000)
    # Then the annotation routes answer 503 (the setting is named in the log)
    status, body, _ = post(bare, _range(iso(at(29, 9)), iso(at(29, 10))))
    assert status == 503 and "misconfigured" in body["error"]["message"]
    # And segment entries carry no annotations (null), not an error
    status, page, _ = bare.get(
        f"/devices/{DEVICE}/segments", window(iso(at(29, 9)), iso(at(29, 11)))
    )
    assert status == 200 and page["items"][0]["annotations"] is None


def test_a_point_in_time_segment_is_annotated_and_joined(world: ApiWorld) -> None:
    # Given a sensor reading of duration 0 and a range over it
    reading = world.put("sensor", DEVICE, at(29, 10, 0, 5), 0)
    _, on_reading, _ = post(world, {"target": on(reading)})
    _, on_range, _ = post(world, _range(iso(at(29, 10)), iso(at(29, 10, 1))))
    assert on_reading["start"] == on_reading["end"] == iso(at(29, 10, 0, 5))
    # When the sensor entries are listed
    _, page, _ = world.get(
        f"/devices/{DEVICE}/segments", window(iso(at(29, 10)), iso(at(29, 11)), kind="sensor")
    )
    # Then the reading carries both
    (entry,) = page["items"]
    assert {a["annotation_id"] for a in entry["annotations"]} == {
        on_reading["annotation_id"],
        on_range["annotation_id"],
    }
