"""The local server answers only loopback ``Host`` names (docs/local.md): a web page whose
host name was made to resolve to 127.0.0.1 (DNS rebinding) reaches the port, but sends its
own name as ``Host`` and gets no answer from the API."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.local_stack import RunningStack


def ask(
    stack: RunningStack, host: str | None, method: str = "GET", **headers: str
) -> tuple[int, Any]:
    """A request to the stack's API with exactly this ``Host`` (None: none at all)."""
    api = urlsplit(stack.ready["api"])
    connection = http.client.HTTPConnection(api.hostname or "", api.port, timeout=10)
    try:
        connection.putrequest(method, "/devices", skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        connection.close()


def port_of(stack: RunningStack) -> int:
    return int(urlsplit(stack.ready["api"]).port or 80)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_loopback_names_with_the_servers_port_are_answered(
    local_stack: RunningStack, name: str
) -> None:
    status, body = ask(local_stack, f"{name}:{port_of(local_stack)}")
    assert status == 200 and "items" in body


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}", "localhost:1"],
)
def test_any_other_host_is_refused_with_421_naming_it(local_stack: RunningStack, host: str) -> None:
    # When a page of another host name (resolved to 127.0.0.1) calls the API
    given = host.format(port=port_of(local_stack))
    status, body = ask(local_stack, given)
    # Then it gets 421 Misdirected Request naming the Host, and none of the API's answer
    assert status == 421
    assert body["error"]["parameter"] == "Host" and repr(given) in body["error"]["message"]
    assert "items" not in body


def test_a_preflight_from_a_rebound_host_is_refused_too(local_stack: RunningStack) -> None:
    status, _ = ask(
        local_stack,
        "evil.example",
        "OPTIONS",
        Origin="http://evil.example",
        **{"Access-Control-Request-Method": "DELETE"},
    )
    assert status == 421


@pytest.mark.parametrize("host", [None, "localhost:notaport"])
def test_a_missing_or_malformed_host_is_a_400(local_stack: RunningStack, host: str | None) -> None:
    status, body = ask(local_stack, host)
    assert status == 400 and body["error"]["parameter"] == "Host"
