"""The viewer's files: what there is, where each comes from, and how it is answered.

The page's own sources are the files of ``static/`` (no build step). The player library,
hls.js, is the npm package the Makefile installs (``hls.js`` at the version it pins);
it is never copied into the repository by hand:

* in the deployed API the synthesis puts it into the function's asset as
  ``video_index/viewer/vendor/`` + :data:`HLS_JS_FILE` (``infra/api.py``);
* elsewhere (``video-index local``, tests) it is read from ``$HLS_JS``'s folder, else from
  the project's ``.cache/npm`` (``make install``).

Every file is read once per process and answered with a strong ``ETag`` (``304`` to a
matching ``If-None-Match``), ``Cache-Control: no-cache`` (a browser revalidates, so a new
deployment is seen at once) and gzip when the client accepts it (compressed once, kept).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from video_index.core.access import ENV_ACCESS_POLICY
from video_index.core.access_policy import ACCESS_TOKEN, DEFAULT_POLICY, ID_TOKEN, AccessPolicy
from video_index.core.contract import (
    ENV_VIEWER_CONNECT_ORIGINS,
    ENV_VIEWER_OIDC_CLIENT_ID,
    ENV_VIEWER_OIDC_ISSUER,
)
from video_index.core.errors import ConfigurationError

PACKAGE_DIR: Final = Path(__file__).resolve().parent
STATIC_DIR: Final = PACKAGE_DIR / "static"
#: The hls.js build the page imports: the light ES module build (no subtitles, alternate
#: audio or DRM, which camera video never has: a third less to download).
HLS_JS_FILE: Final = "hls.light.min.mjs"
#: Where the synthesis puts hls.js inside the deployed asset (never in the repository).
VENDOR_DIR: Final = PACKAGE_DIR / "vendor"
#: The same place as a path inside the asset (``functions/`` is the asset's root).
VENDOR_ASSET_PATH: Final = f"video_index/viewer/vendor/{HLS_JS_FILE}"
#: The npm package as ``make install`` leaves it (``functions/../.cache/npm``).
NPM_DIST_DIR: Final = PACKAGE_DIR.parents[2] / ".cache" / "npm" / "node_modules" / "hls.js" / "dist"
#: The test harness's variable naming hls.js (``hls.min.js``); its folder is the dist folder.
ENV_HLS_JS: Final = "HLS_JS"
#: The name the page imports hls.js by (``/viewer/hls.mjs``).
HLS_JS_NAME: Final = "hls.mjs"
#: Generated: the page's configuration (how to sign in), from the environment.
CONFIG_NAME: Final = "config.json"
INDEX_NAME: Final = "index.html"

CONTENT_TYPES: Final[Mapping[str, str]] = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
}

#: Where a page served without :data:`ENV_VIEWER_CONNECT_ORIGINS` (``video-index local``,
#: whose bucket is a loopback port) may connect besides its own origin.
LOOPBACK_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*")
#: An origin the deployment names: https, a host, perhaps a port; nothing else.
_HTTPS_ORIGIN: Final = re.compile(r"https://[A-Za-z0-9.-]+(:[0-9]{1,5})?")


def content_security_policy(environ: Mapping[str, str] | None = None) -> str:
    """What the page may do: scripts and styles of its own origin only (no inline code),
    media from MediaSource blobs, no framing, and requests to its own origin (the API) and
    the origins the deployment names (:data:`ENV_VIEWER_CONNECT_ORIGINS`: the segment
    bucket, the identity provider), https only. Without that variable (the local stack)
    the page may reach loopback ports, where the local bucket is."""
    env = os.environ if environ is None else environ
    return _policy(env.get(ENV_VIEWER_CONNECT_ORIGINS))


@cache
def _policy(named: str | None) -> str:
    connect: tuple[str, ...]
    if named is None:
        connect = LOOPBACK_ORIGINS
    else:
        connect = tuple(named.split())
        wrong = [origin for origin in connect if not _HTTPS_ORIGIN.fullmatch(origin)]
        if wrong:
            raise ConfigurationError(
                f"{ENV_VIEWER_CONNECT_ORIGINS} must list https://host[:port] origins only, "
                f"not {', '.join(map(repr, wrong))}"
            )
    return "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data: blob:",
            "media-src 'self' blob:",
            " ".join(("connect-src 'self'", *connect)),
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


class MissingAsset(LookupError):
    """A file the viewer needs is not where it should be (hls.js not installed)."""


@dataclass(frozen=True)
class Asset:
    """One file as answered: its bytes, their gzip, a strong ETag and its type."""

    body: bytes
    gzipped: bytes
    etag: str
    content_type: str

    @classmethod
    def of(cls, body: bytes, content_type: str) -> Asset:
        digest = hashlib.sha256(body).hexdigest()[:32]
        return cls(body, gzip.compress(body, 9, mtime=0), f'"{digest}"', content_type)


def hls_js_path(environ: Mapping[str, str] | None = None) -> Path:
    """The hls.js file to serve: packaged in the asset, else the npm package's."""
    packaged = VENDOR_DIR / HLS_JS_FILE
    return packaged if packaged.is_file() else npm_hls_js(environ)


def npm_hls_js(environ: Mapping[str, str] | None = None) -> Path:
    """hls.js as npm installed it: next to ``$HLS_JS``, else in the project's ``.cache/npm``
    (what the synthesis packages for the deployed viewer)."""
    env = os.environ if environ is None else environ
    candidates = []
    if env.get(ENV_HLS_JS):
        candidates.append(Path(env[ENV_HLS_JS]).parent / HLS_JS_FILE)
    candidates.append(NPM_DIST_DIR / HLS_JS_FILE)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise MissingAsset(
        f"hls.js ({HLS_JS_FILE}) is not installed: run `make install` (looked in "
        + ", ".join(str(c.parent) for c in candidates)
        + ")"
    )


def static_names() -> frozenset[str]:
    """The page's own files (``static/``), by name."""
    return frozenset(
        path.name
        for path in STATIC_DIR.iterdir()
        if path.is_file() and path.suffix in CONTENT_TYPES and not path.name.startswith(".")
    )


def page_config(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """What the page needs to know at run time: how to sign in, and which of the tokens a
    sign-in gives to send (``token``: the one the access policy's ``token_use`` names, the
    ID token unless it names the access token, docs/access.md). Nothing secret: an OIDC
    public client (authorization code with PKCE) has no secret."""
    env = os.environ if environ is None else environ
    issuer = env.get(ENV_VIEWER_OIDC_ISSUER) or None
    client_id = env.get(ENV_VIEWER_OIDC_CLIENT_ID) or None
    if not (issuer and client_id):
        return {"oidc": None}
    policy = env.get(ENV_ACCESS_POLICY)
    token_use = AccessPolicy.from_json(policy).token_use if policy else DEFAULT_POLICY.token_use
    token = ACCESS_TOKEN if token_use == ACCESS_TOKEN else ID_TOKEN
    return {"oidc": {"issuer": issuer, "client_id": client_id, "token": token}}


@cache
def asset(name: str) -> Asset:
    """The file answered as ``/viewer/<name>`` (``index.html`` for ``/viewer``).

    Raises :class:`KeyError` for a name that is not one of the viewer's files and
    :class:`MissingAsset` when hls.js is not installed.
    """
    if name == HLS_JS_NAME:
        return Asset.of(hls_js_path().read_bytes(), CONTENT_TYPES[".mjs"])
    if name == CONFIG_NAME:
        return Asset.of(json.dumps(page_config()).encode(), CONTENT_TYPES[".json"])
    if name not in static_names():
        raise KeyError(name)
    path = STATIC_DIR / name
    return Asset.of(path.read_bytes(), CONTENT_TYPES[path.suffix])
