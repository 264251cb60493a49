"""Serve an API Gateway HTTP API handler on 127.0.0.1.

Each HTTP request becomes a payload-format-2.0 event, as API Gateway HTTP APIs
build it: ``rawPath`` / ``requestContext.http.path`` as sent (not decoded),
``rawQueryString`` as sent, ``queryStringParameters`` decoded with repeated names
joined by commas, header names lower-cased with repeated headers joined by
commas, the ``Cookie`` header moved to ``cookies``, the body base64-encoded
unless it is UTF-8 text. There is no authorizer: the server stands in for one, naming
the caller by the ``X-User`` header or ``local``, its roles by ``X-Roles`` and its devices
by ``X-Devices`` (none sent: an admin of every camera)
(:func:`video_index.annotations.identity.local_authorizer`). The handler's response
(``statusCode``, ``headers``, ``multiValueHeaders``, ``cookies``, ``body``,
``isBase64Encoded``) is written
back; a handler error is answered ``500 {"message": "Internal Server Error"}``
like API Gateway does.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.annotations.identity import (
    LOCAL_DEVICES_HEADER,
    LOCAL_ROLES_HEADER,
    LOCAL_USER_HEADER,
    local_authorizer,
)
from video_index.core.contract import (
    CORS_ALLOWED_HEADERS,
    CORS_ALLOWED_METHODS,
    CORS_EXPOSED_HEADERS,
    CORS_MAX_AGE_SECONDS,
)
from video_index.local.context import LOCAL_ACCOUNT_ID, LocalLambdaContext

logger = logging.getLogger(__name__)

Resolve = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]

API_ID: Final = "local"
#: The deployed API's CORS headers, and the local stand-in authorizer's (docs/access.md).
LOCAL_ALLOWED_HEADERS: Final = (
    *CORS_ALLOWED_HEADERS,
    LOCAL_USER_HEADER,
    LOCAL_ROLES_HEADER,
    LOCAL_DEVICES_HEADER,
)
_MONTHS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)
_INTERNAL_ERROR: Final = b'{"message":"Internal Server Error"}'
#: The host names a request may give (``Host``): the loopback interface's (docs/local.md).
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
#: A request line's query (``?…`` up to the next space): left out of the log lines.
_QUERY: Final = re.compile(r"(/\S*?)\?\S*")


def build_event(
    *,
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    source_ip: str,
    now: float | None = None,
) -> dict[str, Any]:
    """The API Gateway HTTP API (payload 2.0) event for one request."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    raw_path, _, raw_query = target.partition("?")
    merged: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in headers:
        key = name.lower()
        if key == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        merged[key] = f"{merged[key]},{value}" if key in merged else value
    host = merged.get("host", "127.0.0.1")
    merged.setdefault("x-forwarded-for", source_ip)
    merged.setdefault("x-forwarded-proto", "http")
    if ":" in host:
        merged.setdefault("x-forwarded-port", host.rsplit(":", 1)[1])
    request_id = base64.b64encode(uuid.uuid4().bytes[:10]).decode("ascii")
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": raw_path or "/",
        "rawQueryString": raw_query,
        "headers": merged,
        "requestContext": {
            "accountId": LOCAL_ACCOUNT_ID,
            "apiId": API_ID,
            "domainName": host,
            "domainPrefix": host.split(".", 1)[0].split(":", 1)[0],
            "http": {
                "method": method,
                "path": raw_path or "/",
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": merged.get("user-agent", ""),
            },
            "requestId": request_id,
            "authorizer": local_authorizer(merged),
            "routeKey": "$default",
            "stage": "$default",
            "time": (f"{moment:%d}/{_MONTHS[moment.month - 1]}/{moment:%Y:%H:%M:%S} +0000"),
            "timeEpoch": int(moment.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if raw_query:
        parameters: dict[str, str] = {}
        for name, value in parse_qsl(raw_query, keep_blank_values=True):
            parameters[name] = f"{parameters[name]},{value}" if name in parameters else value
        event["queryStringParameters"] = parameters
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(body).decode("ascii")
            event["isBase64Encoded"] = True
    return event


def response_parts(response: object) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body bytes of a payload-2.0 handler response."""
    if not isinstance(response, dict) or "statusCode" not in response:
        # API Gateway's rule for 2.0: anything else is a 200 JSON body.
        return 200, [("content-type", "application/json")], json.dumps(response).encode()
    headers: list[tuple[str, str]] = [
        (str(k), str(v)) for k, v in (response.get("headers") or {}).items()
    ]
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers.extend((str(name), str(value)) for value in values)
    headers.extend(("set-cookie", str(cookie)) for cookie in response.get("cookies") or [])
    raw = response.get("body")
    if raw is None:
        body = b""
    elif response.get("isBase64Encoded"):
        body = base64.b64decode(raw)
    else:
        body = str(raw).encode("utf-8")
    return int(response["statusCode"]), headers, body


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    #: One request per connection: a stopped server leaves no idle keep-alive behind.
    protocol_version = "HTTP/1.0"

    def _handle(self) -> None:
        refusal = host_refusal(self.headers.get("host"), int(self.server.server_address[1]))
        if refusal is not None:
            status, reason = refusal
            body = json.dumps({"error": {"parameter": "Host", "message": reason}}).encode()
            self.close_connection = True
            self._write(status, [("content-type", "application/json")], body)
            return
        origin = self.headers.get("origin")
        if self.command == "OPTIONS" and self.headers.get("access-control-request-method"):
            self._preflight(origin)
            return
        try:
            body = self._read_body()
        except ValueError as exc:
            self.send_error(400, str(exc))
            return
        event = build_event(
            method=self.command,
            target=self.path,
            headers=self.headers.items(),
            body=body,
            source_ip=self.client_address[0],
        )
        try:
            status, headers, payload = response_parts(self.server.invoke(event))
        except Exception:
            logger.exception("the API handler raised")
            status, headers, payload = 500, [("content-type", "application/json")], _INTERNAL_ERROR
        self._write(status, headers, payload)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The HTTP layer's own errors (a request line over 64 KiB: 414, a malformed request:
        400) in the API's error shape, as JSON, like every other answer."""
        reason = message or HTTPStatus(code).phrase
        body = json.dumps({"error": {"parameter": None, "message": reason}}).encode()
        self.close_connection = True
        self._write(code, [("content-type", "application/json")], body)

    def __getattr__(self, name: str) -> Any:
        """Any other method (``TRACE``, ``FOO``…) goes to the handler too, which answers
        405 or 404 like the deployed API, instead of the HTTP server's own 501."""
        if name.startswith("do_") and name[3:].isalpha():
            return self._handle
        raise AttributeError(name)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("content-length")
        if not length:
            return b""
        if not length.isdigit():
            raise ValueError("bad Content-Length")
        return self.rfile.read(int(length))

    def _preflight(self, origin: str | None) -> None:
        """A CORS preflight, answered by the server as API Gateway's CORS answers it."""
        if not _loopback(origin):
            self._write(403, [("content-type", "application/json")], b'{"message":"Forbidden"}')
            return
        self._write(
            204,
            [
                ("access-control-allow-methods", ", ".join(CORS_ALLOWED_METHODS)),
                ("access-control-allow-headers", ", ".join(LOCAL_ALLOWED_HEADERS)),
                ("access-control-max-age", str(CORS_MAX_AGE_SECONDS)),
            ],
            b"",
        )

    def _write(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        origin = self.headers.get("origin") if hasattr(self, "headers") and self.headers else None
        if _loopback(origin):
            # Any loopback page may use the local stack (docs/local.md).
            headers = [
                *headers,
                ("access-control-allow-origin", str(origin)),
                ("access-control-expose-headers", ", ".join(CORS_EXPOSED_HEADERS)),
                ("vary", "origin"),
            ]
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        # Without the query: a share link's secret travels there (docs/shares.md), and the
        # deployed API's access log records the path alone too.
        shown = tuple(_QUERY.sub(r"\1", a) if isinstance(a, str) else a for a in args)
        logger.info("%s %s", self.address_string(), format % shown)


def host_refusal(host: str | None, port: int) -> tuple[int, str] | None:
    """Why a request's ``Host`` is refused, as (status, reason); None when it names this
    server on the loopback interface: ``127.0.0.1``, ``localhost`` or ``[::1]`` with the
    server's port. A web page whose own host name was made to resolve to 127.0.0.1 (DNS
    rebinding) sends its own name here, and gets no answer from the API (421)."""
    if not host:
        return 400, "a Host header is required"
    try:
        parts = urlsplit(f"//{host}")
        named, given = parts.hostname, parts.port or 80  # no port: HTTP's own
    except ValueError:
        return 400, f"{host!r} is not a host name and port"
    if named not in LOOPBACK_HOSTS or given != port:
        return 421, (
            f"this server answers only 127.0.0.1:{port}, localhost:{port} or [::1]:{port}, "
            f"not {host!r}"
        )
    return None


def _loopback(origin: str | None) -> bool:
    """An ``http://`` origin on the loopback interface (any port)."""
    if not origin:
        return False
    host = urlsplit(origin).hostname
    return origin.startswith("http://") and host in LOOPBACK_HOSTS


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], invoke: Callable[[dict[str, Any]], Any]):
        super().__init__(address, _Handler)
        self.invoke = invoke


class LocalHttpApi:
    """A threaded HTTP server on ``host:port`` (0 = a free port) invoking ``resolve``.

    ``resolve`` is called under a lock, one request at a time, like one Lambda
    execution environment: the Powertools resolver keeps the current event on the
    app object, so concurrent calls would mix requests up.
    """

    def __init__(
        self,
        resolve: Resolve,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        region: str,
        timeout_seconds: float = 29.0,
        function_name: str = "video-index-api-local",
    ) -> None:
        self._resolve = resolve
        self._lock = threading.Lock()
        self._region = region
        self._timeout = timeout_seconds
        self._function_name = function_name
        self._server = _Server((host, port), self._invoke)
        self.host = host
        self.port = int(self._server.server_address[1])
        self.url = f"http://{host}:{self.port}"
        self._thread: threading.Thread | None = None

    def _invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        context = LocalLambdaContext(self._function_name, self._timeout, self._region)
        with self._lock:
            return self._resolve(event, context)

    def start(self) -> LocalHttpApi:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="http-api"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting requests and close the listening socket; idempotent."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._server.shutdown()
            thread.join(10)
        self._server.server_close()
