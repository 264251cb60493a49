"""The viewer's routes as the deployed API serves them (docs/viewer.md): through the API
Lambda's handler, with the events API Gateway sends.

The page, its modules, hls.js and ``config.json`` come from ``GET /viewer`` and
``GET /viewer/{file}``, with strong ETags (304 when current), gzip when accepted, a content
security policy on the page, and the product's error answers for anything else.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from video_index.core.contract import ENV_VIEWER_CONNECT_ORIGINS
from video_index.core.errors import ConfigurationError
from video_index.local.context import LocalLambdaContext
from video_index.viewer import assets
from worlds import events as ev

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "functions" / "video_index" / "viewer" / "static"
NPM_HLS = REPO / ".cache" / "npm" / "node_modules" / "hls.js"

# The handler's metrics decorator warns that these answers published no metric: true.
pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")


@pytest.fixture
def handler() -> Iterator[Any]:
    from video_index.handlers import api

    assets.asset.cache_clear()
    yield api.handler
    assets.asset.cache_clear()


def call(handler: Any, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One request through the Lambda handler: (status, headers, body bytes)."""
    event = ev.http_request(path)
    event["headers"].update({name.replace("_", "-"): value for name, value in headers.items()})
    response = handler(event, LocalLambdaContext("video-index-api", 29, "us-east-1"))
    body = response.get("body") or ""
    raw = base64.b64decode(body) if response.get("isBase64Encoded") else body.encode()
    return response["statusCode"], response.get("headers") or {}, raw


def test_the_page_is_served_with_its_policy_and_revalidated_by_etag(handler: Any) -> None:
    # When the page is asked for
    status, headers, body = call(handler, "/viewer")
    # Then it is the page, which the browser must revalidate, under a strict policy
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == (STATIC / "index.html").read_bytes()
    assert headers["Cache-Control"] == "no-cache"
    assert headers["X-Content-Type-Options"] == "nosniff"
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe" not in policy
    # When it is asked for again with its ETag
    status, again, body = call(handler, "/viewer", if_none_match=headers["ETag"])
    # Then the browser's copy is current: 304, no body
    assert (status, body) == (304, b"")
    assert again["ETag"] == headers["ETag"]


def _connect_src(headers: dict[str, str]) -> list[str]:
    (directive,) = [
        d for d in headers["Content-Security-Policy"].split("; ") if d.startswith("connect-src ")
    ]
    return directive.split()[1:]


def test_deployed_the_page_connects_only_to_its_api_and_the_named_https_origins(
    handler: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the origins the deployment names for the page (the bucket, the identity provider)
    named = [
        "https://segments-1.s3.amazonaws.com",
        "https://segments-1.s3.eu-west-1.amazonaws.com",
        "https://video.auth.eu-west-1.amazoncognito.com",
    ]
    monkeypatch.setenv(ENV_VIEWER_CONNECT_ORIGINS, " ".join(named))
    # When the page is asked for
    status, headers, _ = call(handler, "/viewer")
    # Then it may connect to its own origin and those, and to nothing else: no wildcard,
    # no http origin, no loopback
    assert status == 200
    assert _connect_src(headers) == ["'self'", *named]


def test_locally_the_page_may_also_reach_loopback_ports(handler: Any) -> None:
    # Given no origins named (the local stack: its bucket is a loopback port of moto)
    # When the page is asked for
    status, headers, _ = call(handler, "/viewer")
    # Then it may connect to its own origin and loopback, and no https host at all
    assert status == 200
    assert _connect_src(headers) == ["'self'", "http://127.0.0.1:*", "http://localhost:*"]


@pytest.mark.parametrize(
    "origin", ["http://segments-1.s3.amazonaws.com", "https:", "https://*.amazonaws.com"]
)
def test_a_named_origin_that_is_not_one_https_host_is_a_503(
    handler: Any, monkeypatch: pytest.MonkeyPatch, origin: str
) -> None:
    # Given a deployment naming an http origin, a scheme alone, or a wildcard
    monkeypatch.setenv(ENV_VIEWER_CONNECT_ORIGINS, f"https://segments-1.s3.amazonaws.com {origin}")
    # When the page is asked for
    status, _, _ = call(handler, "/viewer")
    # Then it is not served under a loose policy: the API is misconfigured (503, as for any
    # bad setting), and the log says which origin
    assert status == 503
    with pytest.raises(ConfigurationError, match=re.escape(repr(origin))):
        assets.content_security_policy()


def test_files_are_gzipped_for_browsers_that_accept_it(handler: Any) -> None:
    # When a module is asked for by a browser that accepts gzip
    status, headers, body = call(handler, "/viewer/app.js", accept_encoding="gzip, br")
    # Then it comes compressed (base64 through API Gateway), and is the module itself
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(body) == (STATIC / "app.js").read_bytes()
    assert len(body) < len((STATIC / "app.js").read_bytes()) / 2


def test_hls_js_is_the_npm_package_the_lock_pins(handler: Any) -> None:
    # Given the hls.js version npm/package.json pins (and make install installs)
    pinned = json.loads((REPO / "npm" / "package.json").read_text())["dependencies"]["hls.js"]
    installed = json.loads((NPM_HLS / "package.json").read_text())["version"]
    assert installed == pinned
    # When the page's player library is asked for
    status, headers, body = call(handler, "/viewer/hls.mjs")
    # Then it is that package's light ES module build, unchanged
    assert status == 200
    assert headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert body == (NPM_HLS / "dist" / "hls.light.min.mjs").read_bytes()


def test_every_file_the_page_and_its_modules_name_is_served(handler: Any) -> None:
    # Given every reference of the page (href/src) and every import of its modules
    page = (STATIC / "index.html").read_text()
    names = set(re.findall(r'(?:href|src)="viewer/([^"]+)"', page))
    for module in STATIC.glob("*.js"):
        names |= set(re.findall(r'from "\./([^"]+)"', module.read_text()))
    names |= {"config.json"}  # fetched by app.js
    assert {"app.js", "viewer.css", "hls.mjs", "zones.js", "player.js"} <= names
    # Then each is served
    for name in sorted(names):
        status, _, _ = call(handler, f"/viewer/{name}")
        assert status == 200, name


@pytest.mark.parametrize(
    ("path", "status", "parameter"),
    [
        ("/viewer/nothing.js", 404, "file"),
        ("/viewer/assets.py", 404, "file"),  # the module that serves them is not one of them
        ("/viewer/..%2Fassets.py", 400, "file"),
        ("/viewer/.hidden", 400, "file"),
    ],
)
def test_anything_else_is_an_error_naming_the_file(
    handler: Any, path: str, status: int, parameter: str
) -> None:
    # When a name that is not one of the viewer's files is asked for
    answer, headers, body = call(handler, path)
    # Then the API's error answer names the parameter
    assert answer == status
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["error"]["parameter"] == parameter


def test_other_methods_are_405(handler: Any) -> None:
    # When the page is posted to
    event = ev.http_request("/viewer", method="POST")
    response = handler(event, LocalLambdaContext("video-index-api", 29, "us-east-1"))
    # Then the method is not allowed, and GET is named
    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "GET"


def test_config_tells_the_page_how_to_sign_in(
    handler: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no sign-in configured (the local stack, or a pasted token only)
    status, _, body = call(handler, "/viewer/config.json")
    assert status == 200 and json.loads(body) == {"oidc": None}
    # Given the deployed API's issuer and the viewer's public client
    monkeypatch.setenv("VIDEO_INDEX_VIEWER_OIDC_ISSUER", "https://issuer.example.com/pool-1")
    monkeypatch.setenv("VIDEO_INDEX_VIEWER_OIDC_CLIENT_ID", "viewer-web")
    assets.asset.cache_clear()
    # Then the page learns both, the token to send (the ID token, which carries the device
    # scope, by default), and nothing secret
    status, _, body = call(handler, "/viewer/config.json")
    issuer = "https://issuer.example.com/pool-1"
    assert json.loads(body) == {
        "oidc": {"issuer": issuer, "client_id": "viewer-web", "token": "id"}
    }
    # And with an access policy that takes access tokens, the access token
    monkeypatch.setenv("VIDEO_INDEX_ACCESS_POLICY", '{"token_use": "access"}')
    assets.asset.cache_clear()
    status, _, body = call(handler, "/viewer/config.json")
    assert json.loads(body)["oidc"]["token"] == "access"


def test_without_hls_js_the_player_file_is_a_503_saying_how_to_install_it(
    handler: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given hls.js installed nowhere
    monkeypatch.delenv("HLS_JS", raising=False)
    monkeypatch.setattr(assets, "NPM_DIST_DIR", tmp_path)
    # When the page's player library is asked for
    status, _, _ = call(handler, "/viewer/hls.mjs")
    # Then the API is misconfigured (503, as for any missing setting), and the log says why
    assert status == 503
    with pytest.raises(assets.MissingAsset, match="make install"):
        assets.hls_js_path()


def test_the_viewer_routes_are_in_the_openapi_document(handler: Any) -> None:
    # When the document is read
    status, _, body = call(handler, "/openapi.json")
    assert status == 200
    paths = json.loads(body)["paths"]
    # Then both viewer routes are documented, GET only
    assert set(paths["/viewer"]) == {"get"}
    assert set(paths["/viewer/{file}"]) == {"get"}
    assert {"200", "304", "404"} <= set(paths["/viewer/{file}"]["get"]["responses"])
