"""A tiny threaded static file server for the browser harness's own tests.

It serves one folder on ``127.0.0.1:<free port>`` the way a CDN serves HLS: byte ranges
(``Range: bytes=a-b`` → 206 with ``Content-Range``), CORS for a chosen set of origins
(the request's ``Origin`` echoed when allowed, ``Range`` allowed in preflights, the length
headers exposed), and the content types players expect. It logs nothing; it remembers each
request (method, path, Origin, Range) so tests can see what the browser really sent.
The product has its own local stack; this server only lets the harness test itself.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final, NamedTuple
from urllib.parse import unquote, urlsplit

CONTENT_TYPES: Final[dict[str, str]] = {
    ".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t", ".mp4": "video/mp4",
    ".m4s": "video/mp4", ".html": "text/html; charset=utf-8", ".js": "text/javascript",
}  # fmt: skip
_RANGE: Final = re.compile(r"bytes=(\d*)-(\d*)$")


class Seen(NamedTuple):
    """One request as the server received it (``origin``, ``range``: those headers)."""

    method: str
    path: str
    origin: str | None
    range: str | None


@dataclass
class HlsServer:
    """What a running server offers: its origin, and the requests it has answered."""

    root: Path
    origin: str
    allowed_origins: set[str]
    requests: list[Seen] = field(default_factory=list)

    def url(self, name: str) -> str:
        return f"{self.origin}/{name}"


class _Handler(BaseHTTPRequestHandler):
    server_info: HlsServer  # set on the subclass made per server

    def log_message(self, format: str, *args: object) -> None:
        """No access log."""

    def _cors(self, *, preflight: bool = False) -> None:
        origin = self.headers.get("Origin")
        if origin is not None and origin in self.server_info.allowed_origins:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")
            self.send_header("Access-Control-Expose-Headers", "Content-Length, Content-Range")
            if preflight:
                self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "Range")

    def _remember(self) -> None:
        path, headers = urlsplit(self.path).path, self.headers
        seen = Seen(self.command, path, headers.get("Origin"), headers.get("Range"))
        self.server_info.requests.append(seen)

    def do_OPTIONS(self) -> None:
        self._remember()
        self._status(204, preflight=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        self._serve(body=True)

    def _serve(self, *, body: bool) -> None:
        self._remember()
        root = self.server_info.root
        path = (root / unquote(urlsplit(self.path).path).lstrip("/")).resolve()
        if not path.is_file() or not path.is_relative_to(root):
            self._status(404)
            return
        data = path.read_bytes()
        wanted = self.headers.get("Range")
        span = (0, len(data) - 1) if wanted is None else _byte_range(wanted, len(data))
        if span is None:
            self._status(416, total=len(data))
            return
        (start, end), status = span, 200 if wanted is None else 206
        self.send_response(status)
        self._cors()
        self.send_header("Content-Type", CONTENT_TYPES.get(path.suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Cache-Control", "no-store")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.end_headers()
        if body:
            self.wfile.write(data[start : end + 1])

    def _status(self, status: int, *, total: int | None = None, preflight: bool = False) -> None:
        self.send_response(status)
        self._cors(preflight=preflight)
        if total is not None:
            self.send_header("Content-Range", f"bytes */{total}")
        self.send_header("Content-Length", "0")
        self.end_headers()


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """First and last byte asked for by ``bytes=a-b``, ``bytes=a-`` or ``bytes=-n``."""
    match = _RANGE.match(header.strip())
    if match is None or not any(match.groups()):
        return None
    first, last = match.groups()
    if first:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    else:  # a suffix: the last n bytes
        start, end = max(0, size - int(last)), size - 1
    return (start, end) if start <= end else None


@contextmanager
def hls_server(root: Path, *, allowed_origins: Iterable[str] = ()) -> Iterator[HlsServer]:
    """Serve ``root`` on 127.0.0.1 in a thread until the block ends.

    ``allowed_origins`` may be replaced on the yielded server while it runs.
    """
    info = HlsServer(root=root.resolve(), origin="", allowed_origins=set(allowed_origins))
    handler = type("Handler", (_Handler,), {"server_info": info})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    info.origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, name="hls-server", daemon=True)
    thread.start()
    try:
        yield info
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
