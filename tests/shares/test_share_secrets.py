"""A share's secret reaches no log (docs/shares.md#the-secret): not API Gateway's access
log (its format records the path, never the query), not the functions' logs (no event is
logged, and nothing the resolver logs while serving a share carries it), never a path."""

from __future__ import annotations

import ast
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

import video_index
from tests.shares.conftest import DEVICE, ShareWorld
from tests.shares.test_shares_api import STARTS, WINDOW, secret_of
from video_index.app.routes import route_methods

#: Variables of API Gateway's HTTP API access logs that never hold the query string or a
#: header (AWS: "API Gateway HTTP API access logging variables": ``$context.path`` is the
#: request path, the query string is no part of it). Written here, not read from infra.
SAFE_VARIABLES = {
    "$context.requestId",
    "$context.identity.sourceIp",
    "$context.requestTime",
    "$context.requestTimeEpoch",
    "$context.authorizer.claims.sub",
    "$context.identity.userArn",
    "$context.httpMethod",
    "$context.routeKey",
    "$context.path",
    "$context.status",
    "$context.protocol",
    "$context.responseLength",
    "$context.integrationErrorMessage",
    "$context.authorizer.error",
}


def test_the_access_log_records_no_query_and_no_header(synth: Any) -> None:
    # Given the synthesized stage's access log format
    (stage,) = synth.of_type("AWS::ApiGatewayV2::Stage").values()
    log_format = json.loads(stage["Properties"]["AccessLogSettings"]["Format"])
    variables = set(re.findall(r"\$[A-Za-z.]+", " ".join(map(str, log_format.values()))))
    # Then it records the path (which names the share, not its key) and nothing that
    # carries the query string or a header
    assert "$context.path" in variables
    assert variables <= SAFE_VARIABLES, sorted(variables - SAFE_VARIABLES)


def test_no_route_takes_a_key_in_its_path() -> None:
    # Given every route of the API: the share routes name the share and a file, never a key
    shares = [path for path in route_methods() if path.startswith("/shares/")]
    assert len(shares) == 5
    for path in shares:
        assert set(re.findall(r"\{(\w+)\}", path)) <= {"share_id", "file"}, path


def test_no_handler_logs_its_event(synth: Any) -> None:
    # Given every handler module: no Powertools decorator logs the event
    handlers = Path(video_index.__file__).parent / "handlers"
    for source in handlers.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "log_event":
                assert not (isinstance(node.value, ast.Constant) and node.value.value), source
    # And no function of the stack turns it on by its environment
    for name, function in synth.of_type("AWS::Lambda::Function").items():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        assert env.get("POWERTOOLS_LOGGER_LOG_EVENT", "false") == "false", name


def test_serving_a_share_logs_nothing_of_its_secret(
    shares_world: ShareWorld, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a share, and every logger of the process at DEBUG (botocore's included)
    for start in STARTS[1:3]:
        shares_world.api.put("video", DEVICE, start, 10_000, media="ts")
    caplog.set_level(logging.DEBUG)
    status, share, _ = shares_world.call(
        "POST", f"/devices/{DEVICE}/shares", body={**WINDOW, "expires_in_s": 60}, who="operator"
    )
    assert status == 201
    secret = secret_of(share)
    # When its public routes are used, rightly and wrongly, then revoked and used again
    base, key = f"/shares/{share['share_id']}", f"key={secret}"
    for path, query in (
        ("", key),
        ("/playlist.m3u8", key),
        ("/frame", f"{key}&t=2026-11-29T09:00:00Z"),
        ("/download", key),
        ("/playlist.m3u8", "key=" + secret[:-1] + "!"),
    ):
        shares_world.call("GET", base + path, query)
    shares_world.call("DELETE", base, who="operator")
    assert shares_world.call("GET", base + "/playlist.m3u8", key)[0] == 410
    # Then some records were logged, and none holds the secret
    assert caplog.records
    assert not [r for r in caplog.records if secret in r.getMessage() or secret in str(r.args)]


def test_the_local_http_server_logs_request_lines_without_their_query(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given the local stack's HTTP handler logging a request line the way http.server does
    from video_index.local import http_api

    key = "PnMoZjWw_7wzJvd1QJkAfDqapCOCGsvVa0oUwkvJzj4"
    line = f"GET /shares/{'a' * 32}/playlist.m3u8?key={key} HTTP/1.1"
    stand_in = type("Handler", (), {"address_string": lambda self: "127.0.0.1"})()
    caplog.set_level(logging.INFO, logger=http_api.__name__)
    # When it logs that request
    http_api._Handler.log_message(stand_in, '"%s" %s %s', line, "200", "-")  # type: ignore[arg-type]
    # Then the line names the path, without the query
    (record,) = caplog.records
    assert record.getMessage() == f'127.0.0.1 "GET /shares/{"a" * 32}/playlist.m3u8 HTTP/1.1" 200 -'
