"""``video-index audit``: the audit trail of a window, as ``GET /audit`` answers it.

    video-index audit --from TIME --to TIME [--device D] [--principal P] [--action A]
                      [--json] [--stack NAME | --ready-file PATH]

It asks the API itself (never the trail's table), so reading the trail is recorded like
any other read (docs/audit.md): a running ``video-index local`` by its ready file (its
API takes a request without identity as a local admin), a deployed stack by its output
``ApiUrl``, signed with SigV4 by the usual AWS profile (IAM authorization, the stack's
default; the caller needs the admin role's policy). Every page is read; the records
print as a table, or with ``--json`` as the API's items.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from video_index.cli.devices import add_where
from video_index.cli.exits import EXIT_OK, guarded

#: Pages read at most (500 records each): a window with more is narrowed by the caller.
MAX_PAGES: Final = 200
COLUMNS: Final = ("time", "principal", "role", "action", "device", "from", "to", "outcome")

Fetch = Callable[[str], tuple[int, Any]]


def register(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="who read footage, changed what is kept or was refused, in a window",
        description=(
            "List the audit records of a window as GET /audit answers them (admins only; "
            "this read is recorded too): time, principal, role, action, device, the "
            "request's window, outcome and status. Exit code 0; 1 refused by the API; "
            "2 bad usage or configuration; 3 the API unavailable."
        ),
    )
    audit.add_argument("--from", dest="from_", required=True, metavar="TIME", help="ISO 8601")
    audit.add_argument("--to", required=True, metavar="TIME", help="ISO 8601 (at most 31 days on)")
    audit.add_argument("--device", help="only this device's records")
    audit.add_argument("--principal", help="only this principal's records")
    audit.add_argument("--action", help="only this action's records (e.g. playlist.read)")
    audit.add_argument("--json", action="store_true", help="print the API's items as JSON")
    add_where(audit)
    audit.set_defaults(handler=lambda args, console, _: _audit(args, console))


def _audit(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        records = read_all(fetcher(args), _query(args))
        if args.json:
            print(json.dumps(records, indent=2))
            return EXIT_OK
        table = Table(title=f"{len(records)} audit records")
        for column in (*COLUMNS, "status"):
            table.add_column(column)
        for record in records:
            table.add_row(*(str(record.get(c) or "") for c in COLUMNS), str(record["status"]))
        console.print(table)
        return EXIT_OK

    return guarded(console, run)


def _query(args: argparse.Namespace) -> dict[str, str]:
    given = {
        "from": args.from_,
        "to": args.to,
        "device": args.device,
        "principal": args.principal,
        "action": args.action,
    }
    return {name: value for name, value in given.items() if value}


def read_all(fetch: Fetch, query: dict[str, str]) -> list[dict[str, Any]]:
    """Every record the query selects, page after page (a refusal raised with its reason)."""
    from video_index.core.errors import BadInput, ServiceError

    records: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = {**query, "limit": "500", **({"cursor": cursor} if cursor else {})}
        status, body = fetch("/audit?" + urllib.parse.urlencode(page))
        error = (body or {}).get("error") if isinstance(body, dict) else None
        if status == 400 and error:
            raise BadInput(error.get("parameter") or "query", error.get("message", ""))
        if status != 200:
            message = error.get("message") if error else body
            raise ServiceError(f"GET /audit answered {status}: {message}")
        records += body["items"]
        cursor = body.get("next_cursor")
        if not cursor:
            return records
    raise ServiceError(f"more than {MAX_PAGES} pages: narrow the window")


def fetcher(args: argparse.Namespace) -> Fetch:
    """GETs on the target's API: the local stack's as is, a deployed one's signed."""
    if getattr(args, "ready_file", None) is not None:
        from video_index.local.ready import ReadyStack

        return _getter(str(ReadyStack.read(args.ready_file)["api"]), None)
    from video_index.cli.targets import open_stack, stack_name
    from video_index.core.contract import OUTPUT_API_URL
    from video_index.core.errors import ConfigurationError

    name = stack_name(args)
    if not name:
        raise ConfigurationError("say where: --stack NAME or --ready-file PATH")
    stack = open_stack(name)
    return _getter(stack[OUTPUT_API_URL].rstrip("/"), stack.session)


def _getter(base: str, session: Any) -> Fetch:
    def get(path: str) -> tuple[int, Any]:
        url = base + path
        headers = _signed(session, url) if session is not None else {}
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as refused:
            body = refused.read()
            try:
                return refused.code, json.loads(body or b"null")
            except ValueError:
                return refused.code, body.decode(errors="replace")

    return get


def _signed(session: Any, url: str) -> dict[str, str]:
    """SigV4 headers of a GET of ``url`` for API Gateway (``execute-api``)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="GET", url=url)
    credentials = session.get_credentials().get_frozen_credentials()
    SigV4Auth(credentials, "execute-api", session.region_name).add_auth(request)
    return dict(request.headers.items())
