"""The API against its own OpenAPI document, fuzzed by an independent tool (schemathesis).

Schemathesis reads ``/openapi.json`` from a running ``video-index local`` and sends
every documented operation generated input, valid and invalid (positive and
negative generation), then checks every answer: no 5xx, no status the document does
not declare, content types and bodies as documented. The stack holds a little data
(one device with video and sidecars) so valid requests find something.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig

from tests.support.local_stack import RunningStack, poll, put_segments

#: Examples per operation and generation mode: enough to reach every parameter's
#: rules (the suite's time budget is shared with the rest of ``make test``).
MAX_EXAMPLES = 60
DEVICE = "cam-fuzz"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def seeded(local_stack: RunningStack) -> RunningStack:
    # Given a device with a few minutes of video in the read model
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    put_segments(local_stack, DEVICE, first, 6)
    poll(
        lambda: local_stack.get(f"/devices/{DEVICE}")[1],
        lambda body: bool(body and body.get("kinds")),
        "the seeded device reaches the read model",
        30,
    )
    return local_stack


@pytest.fixture
def api_schema(seeded: RunningStack) -> Any:
    config = SchemathesisConfig.from_dict(
        {"generation": {"mode": "all", "max-examples": MAX_EXAMPLES}}
    )
    return schemathesis.openapi.from_url(f"{seeded.ready['api']}/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_every_answer_is_documented_and_no_input_is_a_server_error(case: Any) -> None:
    # When schemathesis sends the operation generated input, valid and invalid
    # Then every answer passes every default check (no 5xx, documented status,
    # documented content type and body)
    case.call_and_validate()


@pytest.mark.parametrize("method", ["TRACE", "PATCH", "POST", "PUT", "DELETE"])
def test_a_method_a_route_lacks_is_405_with_allow(local_stack: RunningStack, method: str) -> None:
    # Given a path the API serves with GET only
    request = urllib.request.Request(f"{local_stack.ready['api']}/devices", method=method)
    # When it is asked with another method
    with pytest.raises(urllib.error.HTTPError) as answer:
        _OPENER.open(request, timeout=10)
    # Then it answers 405 naming the allowed methods, like the deployed API
    assert answer.value.code == 405
    assert answer.value.headers["Allow"] == "GET"


def test_an_unknown_path_is_404_whatever_the_method(local_stack: RunningStack) -> None:
    request = urllib.request.Request(f"{local_stack.ready['api']}/nowhere", method="TRACE")
    with pytest.raises(urllib.error.HTTPError) as answer:
        _OPENER.open(request, timeout=10)
    assert answer.value.code == 404
