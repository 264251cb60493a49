"""The access findings of issue 30, each tried as the outside attacker did, through the real
resolver with API Gateway-shaped events (docs/access.md, docs/api.md#pages-and-cursors).

* a token without the scope claim saw every device;
* the access token of a scoped Cognito sign-in (groups, no ``custom:*`` attribute) lifted
  the scope of its ID token;
* one Cognito group named ``guests,admin`` made its members admins;
* ``GET /devices?limit=1`` spelled, in its cursor, the names of cameras outside the scope,
  and a crafted cursor allowed a binary search over all names.

(The fifth, IAM callers choosing their own identity, is a property of the per-role
managed policies: tests/infra/test_infra_access.py.)
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from typing import Any, Final

import boto3
import pytest

from video_index.app.services import cursor_key
from video_index.aws.clients import Clients
from video_index.core.cursors import encode_cursor
from video_index.core.settings import Settings
from worlds import events as ev
from worlds.api_world import ApiWorld, at, make_world

#: Cameras in alphabetical order, those of the caller's scope between the others.
IN_SCOPE: Final = ("cam-a1", "cam-c2", "cam-e3")
OUT_OF_SCOPE: Final = ("cam-b-vault", "cam-d-boardroom", "cam-f-server-room")
WINDOW: Final = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"


@pytest.fixture
def world(aws: None) -> ApiWorld:
    made = make_world(boto3.client("dynamodb"), _table())
    for device in sorted(IN_SCOPE + OUT_OF_SCOPE):
        made.put("video", device, at(29, 10), 10_000)
    return made


def _table() -> str:
    from video_index.core.table_schema import create_tables

    create_tables(boto3.client("dynamodb"), "read-model")
    return "read-model"


def listed(body: dict[str, Any]) -> list[str]:
    return [item["device"] for item in body["items"]]


def test_a_token_without_the_scope_claim_sees_no_device(world: ApiWorld) -> None:
    # Given an admin's Cognito ID token without the custom:devices claim
    token = ev.cognito_authorizer("root", ["admin"])
    # When it lists the devices, reads one, and asks who it is
    listing = world.call("GET", "/devices", authorizer=token)
    one = world.call("GET", f"/devices/{IN_SCOPE[0]}", authorizer=token)
    me = world.call("GET", "/me", authorizer=token)
    # Then it sees none: an empty list, a device "not found", an empty scope
    assert (listing[0], listing[1]) == (200, {"items": [], "next_cursor": None})
    assert one[0] == 404 and one[1]["error"] == {"parameter": "device", "message": "no such device"}
    assert me[1]["scope"] == {"all": False, "devices": []}


def test_the_access_token_of_a_scoped_sign_in_does_not_lift_its_scope(world: ApiWorld) -> None:
    # Given one Cognito sign-in of a viewer scoped to one camera: its ID token (groups and
    # custom:devices) and its access token (groups, no attribute)
    id_token, access_token = ev.cognito_sign_in("vera", ["viewer"], devices=IN_SCOPE[0])
    # When each lists the devices and reads a camera outside the scope
    with_id = world.call("GET", "/devices", authorizer=id_token)
    outside = world.call("GET", f"/devices/{OUT_OF_SCOPE[0]}", authorizer=id_token)
    with_access = world.call("GET", "/devices", authorizer=access_token)
    lifted = world.call("GET", f"/devices/{OUT_OF_SCOPE[0]}", authorizer=access_token)
    # Then the ID token sees its camera only, and the access token is refused (401) with
    # a message saying which token to send
    assert listed(with_id[1]) == [IN_SCOPE[0]] and outside[0] == 404
    for status, body, headers in (with_access, lifted):
        assert status == 401, body
        assert "takes the ID token of a sign-in" in body["error"]["message"]
        assert headers["WWW-Authenticate"] == "Bearer"


def test_a_group_named_guests_comma_admin_makes_no_admin(world: ApiWorld) -> None:
    # Given a token in one group named "guests,admin" (a legal Cognito group name), as API
    # Gateway flattens the claim, scoped to every camera
    token = ev.cognito_authorizer("gus", ["guests,admin"], devices="*")
    assert token["jwt"]["claims"]["cognito:groups"] == "[guests,admin]"
    # When it asks who it is, and asks for an erase
    me = world.call("GET", "/me", authorizer=token)
    erase = world.call(
        "DELETE", f"/devices/{IN_SCOPE[0]}/segments", WINDOW + "&erase=true", authorizer=token
    )
    # Then it holds no role: 403 for both
    assert me[0] == 403 and "has no role" in me[1]["error"]["message"]
    assert erase[0] == 403
    # And in that group and the viewers' it is a viewer, not an admin
    both = ev.cognito_authorizer("gus", ["guests,admin", "viewer"], devices="*")
    assert world.call("GET", "/me", authorizer=both)[1]["role"] == "viewer"


def _decodings(cursor: str) -> list[str]:
    """What a curious client could read out of a cursor: the text, and its base64 decoding
    (standard or URL-safe, with the padding restored) as bytes shown leniently."""
    seen = [cursor]
    for decode in (base64.urlsafe_b64decode, base64.b64decode):
        with contextlib.suppress(binascii.Error, ValueError):
            seen.append(decode(cursor + "=" * (-len(cursor) % 4)).decode("latin-1"))
    return seen


def test_paging_devices_one_by_one_never_spells_a_name_outside_the_scope(
    world: ApiWorld,
) -> None:
    # Given a viewer scoped to three cameras, alphabetically between three others
    token = ev.cognito_authorizer("vera", ["viewer"], devices=" ".join(IN_SCOPE))
    # When it lists the devices one at a time, following every cursor
    answers: list[str] = []
    found: list[str] = []
    cursor: str | None = None
    for _ in range(20):
        query = "limit=1" + (f"&cursor={cursor}" if cursor else "")
        status, body, _ = world.call("GET", "/devices", query, authorizer=token)
        assert status == 200, body
        answers.append(json.dumps(body))
        found.extend(listed(body))
        cursor = body["next_cursor"]
        if cursor is None:
            break
        answers.extend(_decodings(cursor))
    # Then it has listed exactly its cameras, and no answer, no cursor and no decoding of a
    # cursor holds the name (or a telling part of it) of a camera outside the scope
    assert found == list(IN_SCOPE) and cursor is None
    for secret in (*OUT_OF_SCOPE, "vault", "boardroom", "server"):
        assert not [a for a in answers if secret in a], secret


def test_a_made_up_changed_or_foreign_cursor_is_refused(world: ApiWorld) -> None:
    # Given a real cursor of a scoped viewer's device list
    token = ev.cognito_authorizer("vera", ["viewer"], devices=" ".join(IN_SCOPE))
    status, body, _ = world.call("GET", "/devices", "limit=1", authorizer=token)
    real = body["next_cursor"]
    assert status == 200 and real
    flipped = real[:10] + ("A" if real[10] != "A" else "B") + real[11:]
    others = ev.cognito_authorizer("otto", ["viewer"], devices=" ".join(IN_SCOPE))
    attempts = {
        # the position of a name the attacker guesses, as cursors used to spell it
        "crafted": ("/devices", encode_cursor({"after": "cam-c"}), token),
        "changed": ("/devices", flipped, token),
        "cut": ("/devices", real[:-4], token),
        "garbage": ("/devices", "not-a-cursor", token),
        "another caller's": ("/devices", real, others),
        "another list's": (f"/devices/{IN_SCOPE[0]}/segments", real, token),
    }
    for name, (path, cursor, who) in attempts.items():
        # When it is sent back
        status, body, _ = world.call("GET", path, f"{WINDOW}&cursor={cursor}", authorizer=who)
        # Then 400 naming the cursor, the same answer whatever it holds
        assert status == 400, (name, body)
        assert body["error"]["parameter"] == "cursor", (name, body)
    # And the real one still leads on
    assert world.call("GET", "/devices", f"limit=1&cursor={real}", authorizer=token)[0] == 200


def test_without_a_cursor_key_no_cursor_is_handed_out_or_taken(
    world: ApiWorld, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a deployment whose API has no cursor key secret
    unkeyed = Settings(bucket=ev.BUCKET, table=world.table)
    world.services.cursor_key = cursor_key(unkeyed, Clients(world.dynamodb, world.s3, None))
    world.services._by_type.clear()
    token = ev.cognito_authorizer("vera", ["viewer"], devices="*")
    # When a page that has a next one is asked for
    status, body, _ = world.call("GET", "/devices", "limit=1", authorizer=token)
    # Then it is refused (503, the log naming the setting), never answered with a readable
    # cursor
    assert status == 503 and body["error"]["message"] == "the API is misconfigured, see its logs"
    assert "VIDEO_INDEX_CURSOR_KEY_SECRET is not set" in caplog.text
    # And a page without a next one needs no key
    status, body, _ = world.call("GET", "/devices", "limit=100", authorizer=token)
    assert status == 200 and body["next_cursor"] is None
