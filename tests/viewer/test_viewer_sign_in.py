"""Signing in to the viewer (docs/viewer.md): OpenID Connect with PKCE, and a pasted token.

A stand-in identity provider (Playwright answers its discovery document, its login page and
its token endpoint) plays the part of Cognito or any OIDC issuer; the page is the real one,
on the local stack. The page must: send the user to the provider with a S256 challenge and
a state, come back to the address it left, trade the code with its verifier (a public
client: no secret anywhere), keep the token in sessionStorage, and send it as
``Authorization: Bearer`` to the API only. An API answering 401 brings the sign-in up.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from infra.viewer import origin_of
from tests.support.local_stack import RunningStack
from video_index.core.contract import ENV_VIEWER_CONNECT_ORIGINS
from video_index.viewer.assets import content_security_policy

ISSUER = "https://idp.example.com/pool-1"
CLIENT_ID = "viewer-web"
CORS = {"access-control-allow-origin": "*"}


def jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256', 'kid': 'k1'})}.{part(claims)}.c2lnbmF0dXJl"


#: The two tokens of one Cognito sign-in: the access token (groups, no attribute) and the ID
#: token (the user's attributes, the device scope among them).
ACCESS_TOKEN = jwt(
    {"sub": "u-123", "client_id": CLIENT_ID, "token_use": "access", "exp": 4_102_444_800}
)
ID_TOKEN = jwt(
    {
        "sub": "u-123",
        "aud": CLIENT_ID,
        "token_use": "id",
        "email": "ana@example.com",
        "custom:devices": "cam-sign-in",
        "exp": 4_102_444_800,
    }
)


class Provider:
    """The stand-in OIDC provider: what it was asked, and its answers."""

    def __init__(self, context: BrowserContext, viewer: str, token: str = "id") -> None:
        #: The token the deployment's access policy takes (the page's config says it).
        self.token_kind = token
        self.authorize: dict[str, str] = {}
        self.token: dict[str, str] = {}
        self.state_override: str | None = None
        context.route(f"{viewer}/config.json", self.config)
        # (the page as a deployment configured for this provider serves it: its policy lets
        # the page reach the provider, which the local stack's does not)
        context.route(lambda url: urlsplit(url).path == urlsplit(viewer).path, self.page)
        context.route(f"{ISSUER}/.well-known/openid-configuration", self.discovery)
        context.route(f"{ISSUER}/authorize?*", self.login)
        context.route(f"{ISSUER}/token", self.exchange)

    def page(self, route: Route) -> None:
        served = route.fetch()
        deployed = content_security_policy({ENV_VIEWER_CONNECT_ORIGINS: origin_of(ISSUER)})
        route.fulfill(
            response=served, headers={**served.headers, "content-security-policy": deployed}
        )

    def config(self, route: Route) -> None:
        oidc = {"issuer": ISSUER, "client_id": CLIENT_ID, "token": self.token_kind}
        route.fulfill(json={"oidc": oidc})

    def discovery(self, route: Route) -> None:
        route.fulfill(
            headers=CORS,
            json={
                "issuer": ISSUER,
                "authorization_endpoint": f"{ISSUER}/authorize",
                "token_endpoint": f"{ISSUER}/token",
            },
        )

    def login(self, route: Route) -> None:
        # The person signs in at the provider, which sends the browser back with a code
        query = {k: v[0] for k, v in parse_qs(urlsplit(route.request.url).query).items()}
        self.authorize = query
        state = self.state_override or query["state"]
        back = f"{query['redirect_uri']}?{urlencode({'code': 'the-code', 'state': state})}"
        # (by a page that navigates there, as a provider's consent page does: Playwright
        # routes no request that follows a redirect, and the page coming back must be served
        # as the deployment serves it, with the policy that lets it reach the token endpoint)
        page = f'<meta http-equiv="refresh" content="0;url={html.escape(back)}">'
        route.fulfill(status=200, content_type="text/html", body=page)

    def exchange(self, route: Route) -> None:
        form = {k: v[0] for k, v in parse_qs(route.request.post_data or "").items()}
        self.token = form
        route.fulfill(
            headers=CORS,
            json={"access_token": ACCESS_TOKEN, "id_token": ID_TOKEN, "token_type": "Bearer"},
        )


@pytest.fixture
def person(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context()
    yield context
    context.close()


def bearer_requests(page: Page, api: str) -> list[tuple[str, str | None]]:
    seen: list[tuple[str, str | None]] = []
    page.on(
        "request",
        lambda r: (
            seen.append((r.url, r.headers.get("authorization")))
            if r.url.startswith(f"{api}/devices")
            else None
        ),
    )
    return seen


def test_oidc_login_with_pkce_returns_to_the_deep_link_and_sends_the_token(
    person: BrowserContext, local_stack: RunningStack
) -> None:
    # Given the viewer configured for an OIDC provider, opened at a deep link
    viewer = local_stack.ready["viewer"]
    api = local_stack.ready["api"]
    provider = Provider(person, f"{api}/viewer")
    page = person.new_page()
    seen = bearer_requests(page, api)
    link = "?device=cam-sign-in&tz=UTC"
    page.goto(f"{viewer}{link}")
    page.wait_for_selector("body[data-ready=true]")
    assert page.is_visible("[data-testid=sign-in]")
    # When the person signs in with the provider
    page.click("[data-testid=sign-in]")
    # (the page is at the deep link before it leaves for the provider too: waiting for its
    # address alone could end before the round trip began)
    with page.expect_response(f"{ISSUER}/token"):
        page.click("#oidc-login")
    page.wait_for_url(f"{viewer}{link}")
    page.wait_for_selector("body[data-ready=true]")
    # Then the provider was asked for a code for this public client, with a S256 challenge
    asked = provider.authorize
    assert asked["response_type"] == "code" and asked["client_id"] == CLIENT_ID
    assert asked["redirect_uri"] == viewer
    assert asked["code_challenge_method"] == "S256" and asked["state"]
    # And the code was traded with the verifier of that challenge, and no secret
    traded = provider.token
    assert traded["grant_type"] == "authorization_code" and traded["code"] == "the-code"
    digest = hashlib.sha256(traded["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).decode().rstrip("=") == asked["code_challenge"]
    assert (traded["client_id"], traded["redirect_uri"]) == (CLIENT_ID, viewer)
    assert not [name for name in traded if "secret" in name]
    # And the page is back at its deep link, signed in, keeping the ID token (the one that
    # carries the device scope, which the API expects by default) for the tab only
    assert page.url == f"{viewer}{link}"
    assert page.evaluate("sessionStorage.getItem('video-index.token')") == ID_TOKEN
    assert page.evaluate("localStorage.length") == 0
    assert page.inner_text("[data-testid=identity]") == "as ana@example.com"
    # And the API is called with it, never with the access token
    sent = [header for url, header in seen if "/devices" in url]
    assert ("Bearer " + ID_TOKEN) in sent
    assert ("Bearer " + ACCESS_TOKEN) not in sent


def test_a_deployment_taking_access_tokens_gets_the_access_token(
    person: BrowserContext, local_stack: RunningStack
) -> None:
    # Given a deployment whose access policy takes access tokens (token_use access)
    viewer = local_stack.ready["viewer"]
    Provider(person, f"{local_stack.ready['api']}/viewer", token="access")
    page = person.new_page()
    page.goto(viewer)
    page.wait_for_selector("body[data-ready=true]")
    # When the person signs in
    page.click("[data-testid=sign-in]")
    with page.expect_response(f"{ISSUER}/token"):
        page.click("#oidc-login")
    page.wait_for_url(viewer)
    page.wait_for_selector("body[data-ready=true]")
    # Then the page keeps the access token
    assert page.evaluate("sessionStorage.getItem('video-index.token')") == ACCESS_TOKEN


def test_a_login_answer_for_another_request_is_refused(
    person: BrowserContext, local_stack: RunningStack
) -> None:
    # Given a provider that answers with a state the page did not send (a forged login)
    viewer = local_stack.ready["viewer"]
    provider = Provider(person, f"{local_stack.ready['api']}/viewer")
    provider.state_override = "forged"
    page = person.new_page()
    page.goto(viewer)
    page.wait_for_selector("body[data-ready=true]")
    # When the person signs in
    page.click("[data-testid=sign-in]")
    page.click("#oidc-login")
    page.wait_for_url(viewer)
    page.wait_for_selector("#status[data-kind=error]")
    # Then no code is traded and no token kept, and the person is told
    assert provider.token == {}
    assert page.evaluate("sessionStorage.getItem('video-index.token')") is None
    assert "does not match" in page.inner_text("#status")


def test_a_pasted_token_is_sent_to_the_api_and_a_401_asks_to_sign_in(
    person: BrowserContext, local_stack: RunningStack
) -> None:
    api = local_stack.ready["api"]
    page = person.new_page()
    seen = bearer_requests(page, api)
    page.goto(local_stack.ready["viewer"])
    page.wait_for_selector("body[data-ready=true]")
    # When a token is pasted ("Bearer " and all)
    page.click("[data-testid=sign-in]")
    page.fill("#token-input", f"Bearer {ID_TOKEN}")
    with page.expect_response(lambda r: r.url.startswith(f"{api}/devices")):
        page.click("[data-testid=sign-in-save]")
    # Then the API gets it as a bearer token, and the page names who is signed in
    assert seen[-1][1] == f"Bearer {ID_TOKEN}"
    assert page.inner_text("[data-testid=identity]") == "as ana@example.com"
    # When the API refuses it (an expired or revoked token)
    page.route(
        f"{api}/devices?*",
        lambda route: route.fulfill(status=401, json={"message": "Unauthorized"}),
    )
    page.click("[data-testid=sign-in]")
    page.click("[data-testid=sign-in-dialog] button[value=sign-out]")
    # Then the sign-in comes up, saying why
    page.wait_for_selector("[data-testid=sign-in-dialog][open]")
    assert "401" in page.inner_text("#sign-in-reason")


def test_the_token_stays_behind_when_a_media_request_is_redirected_to_the_bucket(
    browser: Browser,
) -> None:
    # Given an "API" that redirects media to a presigned URL on another origin (the bucket),
    # and that "bucket", each recording the headers it receives
    received: list[tuple[str, dict[str, str]]] = []

    class Bucket(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append(("bucket", dict(self.headers)))
            self.send_response(200)
            self.send_header("access-control-allow-origin", self.headers.get("origin", "*"))
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def do_OPTIONS(self) -> None:
            received.append(("bucket preflight", dict(self.headers)))
            self.send_response(403)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    bucket = ThreadingHTTPServer(("127.0.0.1", 0), Bucket)

    class Api(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not self.path.startswith("/devices/"):  # the page (and its favicon)
                body = b'<!doctype html><title>viewer</title><link rel="icon" href="data:,">'
                self.send_response(200)
                self.send_header("content-type", "text/html")
            else:
                received.append(("api", dict(self.headers)))
                body = b""
                self.send_response(302)
                port = bucket.server_address[1]
                self.send_header("location", f"http://localhost:{port}/v1/f.ts?X-Amz-Signature=s")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    api = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    for server in (bucket, api):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{api.server_address[1]}/viewer")
        # When the page's player asks the API for a media file with the token and a range
        status = page.evaluate(
            """() => new Promise((resolve) => {
              const xhr = new XMLHttpRequest();
              xhr.open('GET', '/devices/cam/media/f.ts');
              xhr.setRequestHeader('Authorization', 'Bearer the-token');
              xhr.setRequestHeader('Range', 'bytes=0-1');
              xhr.onload = () => resolve(xhr.status);
              xhr.onerror = () => resolve('error');
              xhr.send();
            })"""
        )
    finally:
        context.close()
        for server in (bucket, api):
            server.shutdown()
            server.server_close()
    # Then the API got the token; the bucket got the page's origin and the range, but not
    # the token (the Fetch standard drops it on a cross-origin redirect), and no preflight:
    # a presigned URL, which carries its own authorization, works (docs/viewer.md)
    assert status == 200
    (api_headers,) = [h for who, h in received if who == "api"]
    assert api_headers["Authorization"] == "Bearer the-token"
    assert [who for who, _ in received] == ["api", "bucket"]
    bucket_headers = received[1][1]
    assert "Authorization" not in bucket_headers
    assert bucket_headers["Range"] == "bytes=0-1"
    assert bucket_headers["Origin"] == f"http://127.0.0.1:{api.server_address[1]}"
