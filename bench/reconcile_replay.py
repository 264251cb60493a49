"""A DynamoDB endpoint that answers the Scan of one table from a generator.

DynamoDB Local loads ~3,000 items/s and scans ~3,000–4,500 items/s on this kind of
machine, so a read model of a million segments would take ~6 minutes to load and
~4 minutes per Scan. For the largest world the benchmark therefore puts this
endpoint in front of DynamoDB Local:

* ``Scan`` of the read-model table is answered here, page by page, with the wire
  items of the whole read model (:meth:`World.read_model_items`), cut into pages by
  DynamoDB's rule (a page ends once 1 MB of items has been read; item sizes by
  :func:`bench.capacity.item_size`), honouring the ``begins_with(pk, :prefix)``
  filter reconcile sends and its ``ProjectionExpression`` of top-level names, and
  returning ``LastEvaluatedKey``/``ConsumedCapacity`` (of the whole items, as DynamoDB);
* every other request (GetItem, Query, TransactWriteItems, UpdateItem, PutItem, ...)
  is forwarded unchanged to DynamoDB Local, which holds the same items for the
  partitions reconcile reads and repairs.

The process under measurement runs the product's code on an ordinary boto3 client:
its requests are counted and its responses parsed exactly as with the real service.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import urlsplit

from bench.capacity import item_size

PAGE_BYTES: Final = 1 << 20
READ_UNIT: Final = 4096
_FORWARDED_HEADERS: Final = ("content-type", "x-amz-crc32", "x-amzn-requestid")

WireItem = dict[str, dict[str, Any]]


def page_count(items: Iterable[WireItem]) -> tuple[int, int]:
    """(Scan pages, bytes) DynamoDB's 1 MB rule gives for these items."""
    pages, size, total = 1, 0, 0
    for item in items:
        bytes_ = item_size(item)
        size += bytes_
        total += bytes_
        if size >= PAGE_BYTES:
            pages, size = pages + 1, 0
    return pages, total


@dataclass(frozen=True)
class _Page:
    body: bytes
    #: (pk, sk) of the page's last item, None when the table is exhausted
    last: tuple[str, str] | None
    scanned: int


class ScanReplay:
    """``with ScanReplay(upstream, table, items) as replay:`` then use ``replay.endpoint``.

    The next page of a Scan is built in the background as soon as a page is sent, the way
    a server works ahead, so the client does not wait for the bench's page building.
    """

    def __init__(self, upstream: str, table: str, items: Callable[[], Iterator[WireItem]]) -> None:
        self.upstream = urlsplit(upstream)
        self.table = table
        self._items = items
        self._cursors: dict[tuple[str, str], tuple[Iterator[WireItem], Future[_Page]]] = {}
        self._lock = threading.Lock()
        self._ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan-replay")
        self.pages = 0
        self.items_read = 0
        self.forwarded = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.replay = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScanReplay:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._ahead.shutdown(wait=True, cancel_futures=True)

    # -- Scan ------------------------------------------------------------------------

    def scan_page(self, request: dict[str, Any]) -> tuple[int, bytes]:
        matches = _filter(request)
        if matches is None:
            return 400, _error("ValidationException", "replay supports begins_with(pk, :p) only")
        start = request.get("ExclusiveStartKey")
        ahead: Future[_Page] | None = None
        with self._lock:
            if start is None:
                cursor: Iterator[WireItem] | None = iter(self._items())
            else:
                cursor, ahead = self._cursors.pop(_ident(start), (None, None))
        if cursor is None:
            return 400, _error("ValidationException", "unknown ExclusiveStartKey")
        page = ahead.result() if ahead is not None else self._page(cursor, request, matches)
        with self._lock:
            if page.last is not None:
                following = self._ahead.submit(self._page, cursor, request, matches)
                self._cursors[page.last] = (cursor, following)
            self.pages += 1
            self.items_read += page.scanned
        return 200, page.body

    def _page(
        self,
        cursor: Iterator[WireItem],
        request: dict[str, Any],
        matches: Callable[[WireItem], bool],
    ) -> _Page:
        limit = request.get("Limit")
        found: list[WireItem] = []
        scanned = size = 0
        last: WireItem | None = None
        for item in cursor:
            scanned += 1
            size += item_size(item)
            last = item
            if matches(item):
                found.append(item)
            if size >= PAGE_BYTES or (limit is not None and scanned >= int(limit)):
                break
        else:
            last = None  # the table is exhausted: no LastEvaluatedKey
        kept = _projection(request)
        if kept is not None:  # only the attributes asked for; the read units stay whole
            found = [{name: v for name, v in item.items() if name in kept} for item in found]
        page: dict[str, Any] = {"Items": found, "Count": len(found), "ScannedCount": scanned}
        if last is not None:
            page["LastEvaluatedKey"] = {"pk": last["pk"], "sk": last["sk"]}
        if request.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES"):
            units = math.ceil(size / READ_UNIT) or 1
            consistent = bool(request.get("ConsistentRead"))
            page["ConsumedCapacity"] = {
                "TableName": self.table,
                "CapacityUnits": units if consistent else units / 2,
            }
        body = json.dumps(page, separators=(",", ":")).encode()
        return _Page(body, None if last is None else _ident(last), scanned)

    # -- everything else ---------------------------------------------------------------

    def forward(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        host = self.upstream.hostname or "127.0.0.1"
        connection = http.client.HTTPConnection(host, self.upstream.port or 80, timeout=60)
        try:
            connection.request("POST", self.upstream.path or "/", body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            kept = {
                name: value
                for name, value in response.getheaders()
                if name.lower() in _FORWARDED_HEADERS
            }
            with self._lock:
                self.forwarded += 1
            return response.status, kept, payload
        finally:
            connection.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: Headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm and
    #: the client's delayed ACK would hold every response back ~40 ms.
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        replay: ScanReplay = self.server.replay  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("X-Amz-Target", "").endswith(".Scan"):
            request = json.loads(body)
            if request.get("TableName") == replay.table:
                status, payload = replay.scan_page(request)
                self._reply(status, {"Content-Type": "application/x-amz-json-1.0"}, payload)
                return
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        status, kept, payload = replay.forward(body, headers)
        self._reply(status, kept, payload)

    def _reply(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _ident(key: dict[str, Any]) -> tuple[str, str]:
    return str(key["pk"]["S"]), str(key["sk"]["S"])


def _filter(request: dict[str, Any]) -> Callable[[WireItem], bool] | None:
    expression = request.get("FilterExpression")
    if expression is None:
        return lambda _item: True
    names = request.get("ExpressionAttributeNames", {})
    text = "".join(str(expression).split())
    if not text.startswith("begins_with(") or not text.endswith(")"):
        return None
    attribute, _, placeholder = text[len("begins_with(") : -1].partition(",")
    attribute = names.get(attribute, attribute)
    value = request.get("ExpressionAttributeValues", {}).get(placeholder, {})
    if "S" not in value:
        return None
    prefix = str(value["S"])

    def matches(item: WireItem) -> bool:
        field = item.get(attribute, {})
        return "S" in field and str(field["S"]).startswith(prefix)

    return matches


def _projection(request: dict[str, Any]) -> set[str] | None:
    """The attribute names a ``ProjectionExpression`` of top-level names asks for."""
    expression = request.get("ProjectionExpression")
    if expression is None:
        return None
    names = request.get("ExpressionAttributeNames", {})
    return {names.get(part.strip(), part.strip()) for part in str(expression).split(",")}


def _error(code: str, message: str) -> bytes:
    return json.dumps({"__type": f"com.amazon.coral.validate#{code}", "message": message}).encode()
