"""The HTTP API over a real read model (moto, and the test endpoint when set) and moto S3."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

import m3u8
import pytest

from tests.support.tables import TableFactory
from worlds import events as ev
from worlds.api_world import ApiWorld, address, at, iso, make_world
from worlds.read_model_view import view

DEVICE = "cam-001"


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table)


def q(**params: str | int) -> str:
    return "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


def test_device_totals_and_devices_list(world: ApiWorld) -> None:
    # Given two devices with video and a sensor sidecar
    world.put("video", "cam-001", at(29, 10), 10_000, size=300)
    world.put("video", "cam-001", at(29, 10, 0, 10), 10_000, size=200)
    world.put("sensor", "cam-001", at(29, 10, 5), 0, size=7)
    world.put("video", "cam-002", at(28, 8), 5_000, size=50)
    # When the device and the list are asked for
    status, body, _ = world.get("/devices/cam-001")
    # Then totals per kind with first and last start, the retention of each kind,
    # (a day later, at NOW) silence since each kind's last start + its default threshold,
    # and the clock: every file reached S3 a second after its end (the world's camera)
    assert status == 200

    def punctual(files: int) -> dict[str, Any]:
        return {
            "ahead_ms": 0,
            "ahead": False,
            "upload_delay_ms": 1000,
            "files": files,
            "since": iso(at(29, 10)),  # the ten-minute slot of the first receipt
        }

    assert body == {
        "device": "cam-001",
        "kinds": {
            "sensor": {
                "segments": 1,
                "bytes": 7,
                "duration_ms": 0,
                "first_start": iso(at(29, 10, 5)),
                "last_start": iso(at(29, 10, 5)),
                "retention_days": 90,
                "silent_since": iso(at(29, 10, 20)),  # + 900 s
                "clock": punctual(1),
            },
            "video": {
                "segments": 2,
                "bytes": 500,
                "duration_ms": 20_000,
                "first_start": iso(at(29, 10)),
                "last_start": iso(at(29, 10, 0, 10)),
                "retention_days": 30,
                "silent_since": iso(at(29, 10, 5, 10)),  # + 300 s
                "clock": punctual(2),
            },
        },
        # the device: once both kinds are silent, since the later of the two
        "silent_since": iso(at(29, 10, 20)),
        "retired": False,
        "clock": punctual(3),
    }
    status, page1, _ = world.get("/devices", q(limit=1))
    assert status == 200 and [d["device"] for d in page1["items"]] == ["cam-001"]
    status, page2, _ = world.get("/devices", q(limit=1, cursor=page1["next_cursor"]))
    assert [d["device"] for d in page2["items"]] == ["cam-002"]
    assert page2["items"][0]["kinds"]["video"]["bytes"] == 50


def test_a_device_without_data_is_an_empty_answer(world: ApiWorld) -> None:
    assert world.get("/devices/cam-404") == (
        200,
        {"device": "cam-404", "kinds": {}, "silent_since": None, "retired": False, "clock": None},
        {"Content-Type": "application/json", "Cache-Control": "no-store"},
    )
    status, body, _ = world.get(
        "/devices/cam-404/segments", q(**{"from": iso(at(29, 0)), "to": iso(at(30, 0))})
    )
    assert (status, body) == (200, {"items": [], "next_cursor": None})


def test_segments_page_through_every_kind_exactly_once(world: ApiWorld) -> None:
    # Given 7 entries of three kinds, one starting before the window and running into it
    early = world.put("video", DEVICE, at(29, 9, 59, 55), 10_000)
    keys = {early.key}
    for i in range(4):
        keys.add(world.put("video", DEVICE, at(29, 10, 0, 5 + i * 10), 10_000).key)
    keys.add(world.put("sensor", DEVICE, at(29, 10, 0, 7), 0).key)
    keys.add(world.put("analysis", DEVICE, at(29, 10, 0, 20), 30_000).key)
    outside = world.put("video", DEVICE, at(29, 11), 10_000)
    window = {"from": iso(at(29, 10)), "to": iso(at(29, 10, 30))}
    # When paging with limit 2
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        params: dict[str, Any] = {**window, "limit": 2}
        if cursor:
            params["cursor"] = cursor
        status, body, _ = world.get(f"/devices/{DEVICE}/segments", q(**params))
        assert status == 200 and len(body["items"]) <= 2
        seen += [item["key"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    # Then every entry of the window comes exactly once, in start order
    assert sorted(seen) == sorted(keys) and len(seen) == len(keys)
    assert outside.key not in seen
    starts = []
    for key in seen:
        starts.append(key.rsplit("/", 1)[1].split("_")[0])
    assert starts == sorted(starts)


def test_kind_filter_and_entry_shape(world: ApiWorld) -> None:
    seg = world.put("video", DEVICE, at(29, 10), 10_000, media="fmp4")
    world.put("sensor", DEVICE, at(29, 10), 0)
    status, body, _ = world.get(
        f"/devices/{DEVICE}/segments",
        q(**{"from": iso(at(29, 10)), "to": iso(at(29, 11)), "kind": "video"}),
    )
    assert status == 200
    assert body["items"] == [
        {
            "key": seg.key,
            "kind": "video",
            "device": DEVICE,
            "id": seg.id,
            "name": seg.filename,
            "start": "2026-11-29T10:00:00.000Z",
            "end": "2026-11-29T10:00:10.000Z",
            "duration_ms": 10_000,
            "size": world.s3.head_object(Bucket=ev.BUCKET, Key=seg.key)["ContentLength"],
            "etag": body["items"][0]["etag"],
            "url": None,
            "container": "fmp4",
            "playable": True,
            "annotations": None,  # this world has no annotations table: nothing joined
            "annotations_truncated": None,
        }
    ]


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "eyJ2IjoxfQ",  # {"v":1}
        # a real-looking cursor for another kind / outside the window
        "eyJhZnRlciI6eyJzZW5zb3IiOiIyMDI2MTEyOVQxMDAwMDAuMDAwWl8wX2FhLmpzb24ifSwidiI6MX0",
        "eyJhZnRlciI6eyJ2aWRlbyI6IjIwMjQwMTAxVDAwMDAwMC4wMDBaXzEwXzAwLm1wNCJ9LCJ2IjoxfQ",
        "eyJhZnRlciI6eyJ2aWRlbyI6Ii4uLy4uL290aGVyIn0sInYiOjF9",
    ],
)
def test_a_tampered_cursor_is_refused(world: ApiWorld, cursor: str) -> None:
    params = {"from": iso(at(29, 10)), "to": iso(at(29, 11)), "kind": "video", "cursor": cursor}
    status, body, _ = world.get(f"/devices/{DEVICE}/segments", q(**params))
    assert status == 400 and body["error"]["parameter"] == "cursor"


def test_single_segment_by_the_kind_and_name_its_entry_gives(world: ApiWorld) -> None:
    # Given a video segment and a sensor reading of the device
    seg = world.put("video", DEVICE, at(29, 10), 10_000)
    reading = world.put("sensor", DEVICE, at(29, 10, 0, 5), 0)
    # When the list's entry is addressed by its own kind and name
    _, page, _ = world.get(
        f"/devices/{DEVICE}/segments", q(**{"from": iso(at(29, 10)), "to": iso(at(29, 11))})
    )
    listed = {e["key"]: e for e in page["items"]}
    for segment in (seg, reading):
        entry = listed[segment.key]
        status, body, _ = world.get(
            f"/devices/{DEVICE}/segments/{entry['kind']}/{quote(entry['name'], safe='')}"
        )
        # Then it is that entry, with a short-lived presigned URL
        assert status == 200, body
        assert {k: v for k, v in body.items() if k != "url"} == {
            k: v for k, v in entry.items() if k != "url"
        }
        assert (body["key"], body["name"], body["id"]) == (
            segment.key,
            segment.filename,
            segment.id,
        )
        query = parse_qs(urlparse(body["url"]).query)
        assert query["X-Amz-Expires"] == ["900"]
        assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]


def test_another_devices_segment_is_not_reachable(world: ApiWorld) -> None:
    # Given a segment of cam-001 and a segment of cam-002
    seg = world.put("video", DEVICE, at(29, 10), 10_000)
    world.put("video", "cam-002", at(29, 10), 10_000)
    # When cam-001's file name is asked for under cam-002 (or under another kind)
    by_other_device = world.get(address(seg, "cam-002"))
    by_other_kind = world.get(f"/devices/{DEVICE}/segments/sensor/{seg.filename}")
    # Then 404 naming the file name, and 400 for an extension the kind cannot have
    assert by_other_device[0] == 404 and by_other_device[1]["error"]["parameter"] == "name"
    assert by_other_kind[0] == 400 and by_other_kind[1]["error"]["parameter"] == "name"


def test_an_unknown_or_deleted_segment_is_404(world: ApiWorld) -> None:
    # Given a segment deleted with its event (a tombstone in the read model)
    seg = world.put("video", DEVICE, at(29, 10), 10_000)
    world.delete(seg)
    item = world.dynamodb.get_item(
        TableName=world.table,
        Key={"pk": {"S": f"g1#seg#{DEVICE}#video"}, "sk": {"S": seg.filename}},
    )["Item"]
    assert item["present"] == {"BOOL": False}
    # And a well-formed name that was never uploaded
    never = seg.model_copy(update={"id": "0" * 16})
    # When they are asked for
    for segment in (seg, never):
        status, body, _ = world.get(address(segment))
        # Then 404 naming the file name
        assert status == 404 and body["error"]["parameter"] == "name", body


def test_read_repair_answers_404_once_and_corrects_the_read_model(world: ApiWorld) -> None:
    # Given a segment whose object was deleted without an event
    seg = world.put("video", DEVICE, at(29, 10), 10_000, size=40)
    world.delete(seg, notify=False)
    # When it is asked for
    status, body, _ = world.get(address(seg))
    # Then 404, and the read model no longer has it, aggregates included (once the
    # repair's change has come through the stream)
    assert status == 404 and body["error"]["parameter"] == "name"
    world.drain()
    model = view(world.dynamodb, world.table)
    assert model.segments == {}
    assert all(not any(f.values()) for f in model.buckets.values())
    assert world.get(f"/devices/{DEVICE}")[1]["kinds"] == {}
    assert world.get(address(seg))[0] == 404


def test_ranges_come_back_whole_across_midnight(world: ApiWorld) -> None:
    # Given continuous video from 23:00 on the 28th to 01:00 on the 29th (with 500 ms gaps)
    start = at(28, 23)
    for i in range(240):
        world.put("video", DEVICE, start + timedelta(milliseconds=i * 30_500), 30_000)
    # And a separate clip later on the 29th
    world.put("video", DEVICE, at(29, 9), 60_000)
    # When the ranges of the 29th are asked for
    status, body, _ = world.get(
        f"/devices/{DEVICE}/ranges",
        q(**{"from": "2026-11-29T00:00:00Z", "to": "2026-11-30T00:00:00Z"}),
    )
    # Then the midnight range comes back whole, not clipped
    assert status == 200
    end = start + timedelta(milliseconds=239 * 30_500 + 30_000)
    assert body["ranges"] == [
        {"start": iso(start), "end": iso(end)},
        {"start": iso(at(29, 9)), "end": iso(at(29, 9, 1))},
    ]
    assert body["from"] == "2026-11-29T00:00:00.000Z"


def test_playlist_is_valid_hls(world: ApiWorld) -> None:
    starts = [at(29, 10), at(29, 10, 0, 10), at(29, 10, 5)]  # the last after a gap
    for start in starts:
        world.put("video", DEVICE, start, 10_000, media="ts")
    world.put("video", DEVICE, at(29, 10, 0, 30), 10_000)  # not a video: not in the playlist
    world.put("sensor", DEVICE, at(29, 10, 0, 12), 0)  # a sidecar: not in the playlist
    status, text, headers = world.get(
        f"/devices/{DEVICE}/playlist.m3u8", q(**{"from": iso(at(29, 10)), "to": iso(at(29, 11))})
    )
    assert status == 200 and headers["Content-Type"] == "application/vnd.apple.mpegurl"
    playlist = m3u8.loads(text)
    assert playlist.is_endlist and playlist.playlist_type == "vod"
    assert [s.duration for s in playlist.segments] == [10.0, 10.0, 10.0]
    # every file is its own encoder session: a discontinuity and its own wall-clock time
    assert [s.discontinuity for s in playlist.segments] == [False, True, True]
    assert [s.program_date_time for s in playlist.segments] == starts


def test_playlist_window_longer_than_a_day_is_refused(world: ApiWorld) -> None:
    status, body, _ = world.get(
        f"/devices/{DEVICE}/playlist.m3u8",
        q(**{"from": iso(at(28, 0)), "to": iso(at(29, 0, 0, 0, 1))}),
    )
    assert status == 400 and body["error"]["parameter"] == "to"


def test_overlays_list_sidecars_with_urls(world: ApiWorld) -> None:
    world.put("video", DEVICE, at(29, 10), 10_000)
    sensor = world.put("sensor", DEVICE, at(29, 10, 0, 3), 0)
    analysis = world.put("analysis", DEVICE, at(29, 10, 0, 1), 5_000)
    status, body, _ = world.get(
        f"/devices/{DEVICE}/overlays", q(**{"from": iso(at(29, 10)), "to": iso(at(29, 10, 1))})
    )
    assert status == 200
    assert [i["key"] for i in body["items"]] == [analysis.key, sensor.key]
    assert all(i["url"].startswith("https://") for i in body["items"])


def test_fresh_objects_are_served_before_their_events(world: ApiWorld) -> None:
    # Given (now = 12:30) an object uploaded a minute ago whose event is still queued,
    fresh = world.put("video", DEVICE, at(30, 12, 29), 10_000, notify=False)
    # and one indexed a minute ago but deleted since, its event not processed yet
    gone = world.put("video", DEVICE, at(30, 12, 28), 10_000)
    world.delete(gone, notify=False)
    window = q(**{"from": iso(at(30, 12, 20)), "to": iso(at(30, 12, 30))})
    # When segments and ranges of the recent window are asked for
    _, segments, _ = world.get(f"/devices/{DEVICE}/segments", window)
    _, ranges, _ = world.get(f"/devices/{DEVICE}/ranges", window)
    # Then S3 decides: the fresh one is there, the deleted one is not
    assert [i["key"] for i in segments["items"]] == [fresh.key]
    assert ranges["ranges"] == [{"start": iso(at(30, 12, 29)), "end": iso(at(30, 12, 29, 10))}]


def test_calendar_of_a_month(world: ApiWorld) -> None:
    world.put("video", DEVICE, at(29, 23, 55), 600_000, size=10)  # crosses UTC midnight
    status, body, _ = world.get(f"/devices/{DEVICE}/calendar", q(month="2026-11", tz="UTC"))
    assert status == 200 and len(body["days"]) == 30
    days = {d["date"]: d for d in body["days"]}
    assert days["2026-11-29"] == {
        "date": "2026-11-29",
        "has_video": True,
        "segments": 1,
        "bytes": 10,
        "video_ms": 600_000,
    }
    assert days["2026-11-30"]["has_video"] and days["2026-11-30"]["segments"] == 0
    assert not days["2026-11-28"]["has_video"]


def test_openapi_document(world: ApiWorld) -> None:
    status, body, _ = world.get("/openapi.json")
    assert status == 200 and "/devices/{device}/calendar" in body["paths"]
    # And the single segment is addressed by kind and file name, every status declared
    single = body["paths"]["/devices/{device}/segments/{kind}/{name}"]["get"]
    assert {p["name"] for p in single["parameters"]} == {"device", "kind", "name"}
    assert {"200", "400", "404", "414", "503"} <= set(single["responses"])
    assert "name" in body["components"]["schemas"]["SegmentOut"]["required"]
    assert not [
        p
        for p in body["paths"]
        if p.startswith("/devices/{device}/segments/{")
        and (p != "/devices/{device}/segments/{kind}/{name}")
    ]
