"""A share link played as its holder plays it (docs/shares.md): hls.js in Chromium, no
sign-in, on the session's local stack; nothing outside the window reachable through it.

One camera uploads six 2-second files (progressive MP4 put as it is, the form that needs
the media function's renditions: the share's file route makes them too); an operator
shares the middle three. The expected answers are written here: the three files' names,
six seconds of play.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.browser import play_hls
from tests.support.local_stack import RunningStack, iso
from video_index.media.synthetic import synthetic_clip
from video_index.upload import upload_segment

DEVICE = "cam-shared"
FILE_SECONDS = 2
T0 = (datetime.now(UTC) - timedelta(days=2)).replace(hour=11, minute=0, second=0, microsecond=0)
STARTS = [T0 + timedelta(seconds=FILE_SECONDS * n) for n in range(6)]
#: The share: [T0 + 2 s, T0 + 8 s): files 1, 2 and 3.
INSIDE = (1, 2, 3)
OPERATOR = {"X-User": "otto", "X-Roles": "operator"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_ANONYMOUS = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def anonymous(url: str) -> tuple[int, bytes]:
    """GET ``url`` with no identity at all (no header naming a caller), redirects kept."""
    try:
        with _ANONYMOUS.open(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture(scope="module")
def shared(local_stack: RunningStack) -> Iterator[tuple[RunningStack, dict[str, Any], list[str]]]:
    names = []
    for index, start in enumerate(STARTS):
        clip = synthetic_clip(seconds=FILE_SECONDS, container="mp4", label=f"share {index}")
        key = upload_segment(
            local_stack.client("s3"),
            local_stack.ready["bucket"],
            clip,
            kind="video",
            device=DEVICE,
            start=start,
            duration_ms=FILE_SECONDS * 1000,
            ext="mp4",
            as_is=True,
        )
        names.append(key.key.rsplit("/", 1)[1])
    deadline = time.monotonic() + 60
    window = {"from": iso(STARTS[0]), "to": iso(STARTS[-1] + timedelta(seconds=FILE_SECONDS))}
    while True:
        status, body = local_stack.get(f"/devices/{DEVICE}/segments", kind="video", **window)
        if status == 200 and len(body["items"]) == len(STARTS):
            break
        assert time.monotonic() < deadline, f"never indexed: {body}"
        time.sleep(0.2)
    status, share, _ = local_stack.call(
        "POST",
        f"/devices/{DEVICE}/shares",
        {"from": iso(STARTS[1]), "to": iso(STARTS[4]), "expires_in_s": 600},
        headers=OPERATOR,
    )
    assert status == 201, share
    yield local_stack, share, names


def test_the_share_playlist_lists_exactly_the_window(shared: Any) -> None:
    _, share, names = shared
    # When anyone fetches the playlist URL, signed in or not
    status, body = anonymous(share["playlist_url"])
    # Then it lists the window's three files and no other
    assert status == 200
    text = body.decode()
    listed = [line.split("?")[0] for line in text.splitlines() if line.startswith("media/")]
    assert listed == [f"media/{names[i]}" for i in INSIDE]


def test_hls_js_plays_the_share_without_sign_in(shared: Any, browser: Any) -> None:
    stack, share, _ = shared
    # When hls.js plays the share's playlist on a page of the API's origin, no token
    playback = play_hls(browser, share["playlist_url"], page_origin=stack.ready["api"], rate=8)
    # Then it plays the window's six seconds to the end, no request refused
    assert playback.fatal_errors == [], playback
    assert playback.failed_requests == [], playback
    assert playback.ended, playback
    assert playback.played_seconds == pytest.approx(FILE_SECONDS * len(INSIDE), abs=0.2)
    starts = sorted({datetime.fromisoformat(t) for t in playback.program_date_times if t})
    assert starts == [STARTS[i] for i in INSIDE]


def test_nothing_outside_the_window_is_reached(shared: Any) -> None:
    stack, share, names = shared
    base = stack.ready["api"] + f"/shares/{share['share_id']}"
    key = urlsplit(share["playlist_url"]).query  # key=…
    # Files of the window redirect; the files before and after it are refused
    assert anonymous(f"{base}/media/{names[2]}?part=init&{key}")[0] == 302
    for outside in (0, 4, 5):
        assert anonymous(f"{base}/media/{names[outside]}?part=init&{key}")[0] == 404, outside
    # A frame of the window is a picture; a moment outside it is refused
    inside = iso(STARTS[2] + timedelta(seconds=1))
    status, picture = anonymous(f"{base}/frame?t={inside}&{key}")
    assert status == 200 and picture[:3] == b"\xff\xd8\xff"  # a JPEG
    for moment in (STARTS[0], STARTS[4], STARTS[1] - timedelta(milliseconds=1)):
        assert anonymous(f"{base}/frame?t={iso(moment)}&{key}")[0] == 404, moment
    # And the playlist of the device itself still needs a caller (the local stand-in
    # makes a request without X-User an admin, so this is checked by the resolver tests)


def test_the_share_page_plays_the_window_and_a_revoked_link_says_so(
    shared: Any, browser: Any
) -> None:
    stack, first, _ = shared
    # Given a share of the same window (its own: this test revokes it), its page link
    body = {"from": first["from"], "to": first["to"], "expires_in_s": 600}
    status, share, _ = stack.call("POST", f"/devices/{DEVICE}/shares", body, headers=OPERATOR)
    assert status == 201, share
    assert urlsplit(share["url"]).path == "/viewer/share.html"
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sent: list[str] = []
        page.on("request", lambda request: sent.append(request.url))
        # When someone without an account opens it
        page.goto(share["url"])
        # Then the page names the camera and plays the window
        page.wait_for_selector("[data-testid=share-video][data-played=true]", timeout=30_000)
        assert page.text_content("[data-testid=share-title]") == f"Camera {DEVICE}"
        assert errors == []
        # And no request the page made carried the fragment (only the key, in a query)
        assert all("#" not in url for url in sent)
        # When the link is revoked, Then the page says so
        status, _, _ = stack.call("DELETE", f"/shares/{share['share_id']}", headers=OPERATOR)
        assert status == 200
        page.reload()
        page.wait_for_selector("[data-testid=share-state][data-kind=error]")
        assert "expired or was revoked" in page.text_content("[data-testid=share-state]")
    finally:
        context.close()
