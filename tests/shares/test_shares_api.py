"""Share links through the real resolver (docs/shares.md): who may make and revoke one,
what its public routes serve (exactly its window), and when they stop (410)."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.shares.conftest import DEVICE, ShareWorld
from worlds import events as ev
from worlds.api_world import at

#: Five 10 s files, 09:59:50 to 10:00:40 on the 29th; the share shows [10:00:00, 10:00:30).
STARTS = [at(29, 9, 59, 50), *(at(29, 10, 0, s) for s in (0, 10, 20, 30))]
WINDOW = {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T10:00:30Z"}
#: The files the share plays, by hand: those that intersect the window (the one ending at
#: 10:00:00 and the one starting at 10:00:30 do not).
INSIDE = [1, 2, 3]
OUTSIDE = [0, 4]


@pytest.fixture
def files(shares_world: ShareWorld) -> list[str]:
    """Real MPEG-TS files (a playlist lists only playable ones), listed as they are."""
    put = shares_world.api.put
    return [put("video", DEVICE, s, 10_000, media="ts").key.rsplit("/", 1)[1] for s in STARTS]


def create(world: ShareWorld, who: str = "operator", **body: Any) -> tuple[int, Any]:
    status, answer, _ = world.call(
        "POST",
        f"/devices/{DEVICE}/shares",
        body={**WINDOW, "expires_in_s": 3600, **body},
        who=who,
    )
    return status, answer


def secret_of(share: dict[str, Any]) -> str:
    return parse_qs(urlsplit(share["playlist_url"]).query)["key"][0]


def public(world: ShareWorld, share: dict[str, Any], path: str = "", query: str = "") -> Any:
    key = secret_of(share)
    return world.call("GET", f"/shares/{share['share_id']}{path}", f"key={key}{query}")


def test_an_operator_makes_a_share_of_a_window(shares_world: ShareWorld, files: list[str]) -> None:
    # Given footage; When an operator shares ten seconds of it for an hour
    status, share = create(shares_world)
    # Then 201 with the share, its end an hour after now, and its links
    assert status == 201, share
    assert share["device"] == DEVICE and share["state"] == "active"
    assert (share["from"], share["to"]) == ("2026-11-29T10:00:00.000Z", "2026-11-29T10:00:30.000Z")
    assert share["expires_at"] == "2026-11-30T13:30:00.000Z"  # NOW (12:30) + 1 h
    secret = secret_of(share)
    assert len(secret) == 43  # 256 bits, URL-safe base64
    # the page's link carries the secret in its fragment, which browsers never send
    page = urlsplit(share["url"])
    assert page.path == "/viewer/share.html" and page.fragment == f"{share['share_id']}.{secret}"
    assert secret not in page.path + page.query
    # and the playlist's in the query (the access log records the path alone)
    assert urlsplit(share["playlist_url"]).path == f"/shares/{share['share_id']}/playlist.m3u8"
    assert "download_url" not in share


@pytest.mark.parametrize("who", ["viewer", "reviewer"])
def test_below_operator_no_share_is_made(shares_world: ShareWorld, who: str) -> None:
    status, answer = create(shares_world, who=who)
    assert status == 403 and "needs the operator role" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"to": "2026-11-29T11:00:00.001Z"}, "to"),  # an hour and a millisecond of video
        ({"expires_in_s": 7 * 24 * 3600 + 1}, "expires_in_s"),  # a week and a second
        ({"expires_in_s": 0}, "expires_in_s"),
        ({"to": "2026-11-29T10:00:00Z"}, "to"),  # empty window
    ],
)
def test_the_maxima_are_enforced(
    shares_world: ShareWorld, body: dict[str, Any], parameter: str
) -> None:
    status, answer = create(shares_world, **body)
    assert status == 400 and answer["error"]["parameter"] == parameter, answer


def test_the_longest_legal_share_is_made(shares_world: ShareWorld) -> None:
    status, _ = create(shares_world, to="2026-11-29T11:00:00Z", expires_in_s=7 * 24 * 3600)
    assert status == 201


def test_the_playlist_lists_exactly_the_window_without_sign_in(
    shares_world: ShareWorld, files: list[str]
) -> None:
    _, share = create(shares_world)
    # When anyone (no identity at all) asks for the share's playlist
    status, body, headers = public(shares_world, share, "/playlist.m3u8")
    # Then it lists the files of the window, each through the share's file route with the key
    assert status == 200, body
    assert headers["Cache-Control"] == "no-store"
    uris = [line for line in body.splitlines() if line and not line.startswith("#")]
    key = secret_of(share)
    assert uris == [f"media/{files[i]}?key={key}" for i in INSIDE]
    assert body.count("#EXTINF:10.000,") == 3 and body.rstrip().endswith("#EXT-X-ENDLIST")


def test_the_holder_learns_the_window_not_who_shared_it(
    shares_world: ShareWorld, files: list[str]
) -> None:
    _, share = create(shares_world, who="operator:otto")
    status, body, _ = public(shares_world, share)
    assert status == 200
    assert body == {
        "share_id": share["share_id"],
        "device": DEVICE,
        "from": "2026-11-29T10:00:00.000Z",
        "to": "2026-11-29T10:00:30.000Z",
        "expires_at": "2026-11-30T13:30:00.000Z",
        "download": False,
        "state": "active",
        "playlist": f"/shares/{share['share_id']}/playlist.m3u8",
    }


def test_a_share_of_a_device_outside_the_scope_is_not_found(shares_world: ShareWorld) -> None:
    # Given a share of cam-share, and an admin scoped to another camera
    _, share = create(shares_world)
    scoped = ev.cognito_authorizer("ada", ["admin"], devices="cam-other")
    # When that admin revokes it, Then 404 as for no share, and it still plays
    status, answer, _ = shares_world.api.call(
        "DELETE", f"/shares/{share['share_id']}", authorizer=scoped
    )
    assert (status, answer["error"]["parameter"]) == (404, "share_id")
    assert public(shares_world, share, "/playlist.m3u8")[0] == 200


def test_files_outside_the_window_are_refused(shares_world: ShareWorld, files: list[str]) -> None:
    _, share = create(shares_world)
    # Files in the window redirect to a presigned GET
    for i in INSIDE:
        status, _, headers = public(shares_world, share, f"/media/{files[i]}")
        assert status == 302 and headers["Location"].startswith("http"), (i, status)
    # Files outside it (before, after) are refused
    for i in OUTSIDE:
        status, answer, _ = public(shares_world, share, f"/media/{files[i]}")
        assert (status, answer["error"]["parameter"]) == (404, "file"), i
    other = shares_world.api.put("video", "cam-other", STARTS[2], 10_000).key.rsplit("/", 1)[1]
    assert other != files[2]
    # and another device's file name addresses the share's device only (a key that does
    # not exist there): the path names no other device
    status, _, headers = public(shares_world, share, f"/media/{other}")
    location = urlsplit(headers["Location"]).path
    assert f"/v1/video/{DEVICE}/2026/11/29/10/" in location and "cam-other" not in location
    # And so is a frame of a moment outside the window
    for moment in ("2026-11-29T09:59:59.999Z", "2026-11-29T10:00:30.000Z"):
        status, answer, _ = public(shares_world, share, "/frame", f"&t={moment}")
        assert (status, answer["error"]["parameter"]) == (404, "t"), moment


def expiry_of(location: str) -> int:
    return int(parse_qs(urlsplit(location).query)["X-Amz-Expires"][0])


def test_no_presigned_url_outlives_the_share(shares_world: ShareWorld, files: list[str]) -> None:
    # Given a share living two minutes (presigned URLs live 900 s otherwise)
    _, share = create(shares_world, expires_in_s=120)
    first = f"/media/{files[1]}"
    assert expiry_of(public(shares_world, share, first)[2]["Location"]) == 120
    # When 100.5 s have passed, a URL handed out lives the 19 whole seconds left
    shares_world.clock.now += 100.5
    assert expiry_of(public(shares_world, share, first)[2]["Location"]) == 19
    # And a long share's URLs live the configured 900 s
    _, long = create(shares_world, expires_in_s=3600)
    assert expiry_of(public(shares_world, long, first)[2]["Location"]) == 900


ROUTES = ("", "/playlist.m3u8", "/media/{file}", "/frame", "/download")


def every_public_route(world: ShareWorld, share: dict[str, Any], file: str) -> list[int]:
    query = {"/frame": "&t=2026-11-29T10:00:05Z"}
    return [
        public(world, share, route.replace("{file}", file), query.get(route, ""))[0]
        for route in ROUTES
    ]


def test_a_revoked_share_answers_410_everywhere_at_once(
    shares_world: ShareWorld, files: list[str]
) -> None:
    _, share = create(shares_world, download=True)
    assert public(shares_world, share, "/playlist.m3u8")[0] == 200
    # When its creator revokes it
    status, revoked, _ = shares_world.call("DELETE", f"/shares/{share['share_id']}", who="operator")
    assert status == 200 and revoked["state"] == "revoked"
    # Then every public route answers 410 from the next request on
    assert every_public_route(shares_world, share, files[1]) == [410] * 5


def test_an_expired_share_answers_410_everywhere(
    shares_world: ShareWorld, files: list[str]
) -> None:
    _, share = create(shares_world, expires_in_s=60, download=True)
    shares_world.clock.now += 59
    assert public(shares_world, share, "/playlist.m3u8")[0] == 200
    # When its minute is over (the clock moved on, no sleep)
    shares_world.clock.now += 1
    # Then every public route answers 410
    assert every_public_route(shares_world, share, files[1]) == [410] * 5
    # And the list shows it expired
    _, listed, _ = shares_world.call("GET", f"/devices/{DEVICE}/shares", who="operator")
    assert [s["state"] for s in listed["items"]] == ["expired"]


def test_a_wrong_key_or_an_unknown_share_is_the_same_404(
    shares_world: ShareWorld, files: list[str]
) -> None:
    _, share = create(shares_world)
    wrong = "A" * 43
    answers = [
        shares_world.call("GET", f"/shares/{share['share_id']}/playlist.m3u8", f"key={wrong}"),
        shares_world.call("GET", f"/shares/{'0' * 32}/playlist.m3u8", f"key={secret_of(share)}"),
    ]
    assert [a[0] for a in answers] == [404, 404]
    assert answers[0][1] == answers[1][1]
    # and a missing key is a 400 naming it
    status, answer, _ = shares_world.call("GET", f"/shares/{share['share_id']}/playlist.m3u8")
    assert (status, answer["error"]["parameter"]) == (400, "key")


def test_only_its_creator_or_an_admin_revokes_a_share(shares_world: ShareWorld) -> None:
    _, share = create(shares_world, who="operator:otto")
    path = f"/shares/{share['share_id']}"
    # Another operator may not
    status, answer, _ = shares_world.call("DELETE", path, who="operator:olga")
    assert status == 403 and "otto" in answer["error"]["message"]
    assert public(shares_world, share, "/playlist.m3u8")[0] == 200
    # An admin may
    status, revoked, _ = shares_world.call("DELETE", path, who="admin:ada")
    assert (status, revoked["revoked_by"]) == (200, "ada")
    # And the creator may revoke their own
    _, own = create(shares_world, who="operator:otto")
    status, revoked, _ = shares_world.call(
        "DELETE", f"/shares/{own['share_id']}", who="operator:otto"
    )
    assert (status, revoked["revoked_by"]) == (200, "otto")


def test_the_secret_is_stored_only_as_its_sha256(shares_world: ShareWorld) -> None:
    _, share = create(shares_world)
    secret = secret_of(share)
    items = shares_world.dynamodb.scan(TableName="shares")["Items"]
    assert len(items) == 2  # the share and its copy under the device
    for item in items:
        assert secret not in repr(item)
        assert item["secret_sha256"]["S"] == hashlib.sha256(secret.encode()).hexdigest()
    # and no answer about a share carries it or its digest
    _, listed, _ = shares_world.call("GET", f"/devices/{DEVICE}/shares", who="operator")
    assert secret not in repr(listed) and "secret_sha256" not in repr(listed)


def test_download_only_when_the_share_says_so(shares_world: ShareWorld, files: list[str]) -> None:
    # Given real video in the window
    _, plain = create(shares_world)
    status, answer, _ = public(shares_world, plain, "/download")
    assert (status, answer["error"]["message"]) == (404, "this share has no download")
    # A share with download: its clip is queued at once, made by the export worker
    _, share = create(shares_world, download=True, expires_in_s=300)
    key = secret_of(share)
    assert share["download_url"].endswith(f"/shares/{share['share_id']}/download?key={key}")
    status, answer, _ = public(shares_world, share, "/download")
    assert (status, answer["state"]) == (202, "queued")
    # When the worker made it
    listed = shares_world.api.s3.list_objects_v2(Bucket=ev.BUCKET, Prefix="exports/")
    (job,) = [o["Key"].split("/")[1] for o in listed["Contents"] if o["Key"].endswith("job.json")]
    assert shares_world.api.services.exports.run(job).state == "done"
    # Then the download is a redirect to the MP4, as an attachment, living no longer than
    # the share (its 300 s, 120 s of them gone)
    shares_world.clock.now += 120
    status, _, headers = public(shares_world, share, "/download")
    assert status == 302
    query = parse_qs(urlsplit(headers["Location"]).query)
    assert query["X-Amz-Expires"] == ["180"]
    assert query["response-content-disposition"][0].startswith("attachment;")
