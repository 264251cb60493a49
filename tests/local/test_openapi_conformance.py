"""The API against its own OpenAPI document, fuzzed by an independent tool (schemathesis).

Schemathesis takes the document the API generates (the same one a running
``video-index local`` serves at ``/openapi.json``: asserted below), sends every
documented operation of the running stack generated input, valid and invalid
(positive and negative generation), and checks every answer: no 5xx, no status the
document does not declare, content types and bodies as documented. The stack holds a
little data (one device with video) so valid requests find something.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig

from tests.support.local_stack import RunningStack, poll, put_segments
from video_index.api.resolver import TITLE
from video_index.app.routes import whole_app

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


DOCUMENT = json.loads(whole_app().get_openapi_json_schema(title=TITLE, version="1"))
schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=SchemathesisConfig.from_dict(
        {
            "generation": {"mode": "all", "max-examples": MAX_EXAMPLES},
            # A schema cannot express the rules across parameters (``to`` after ``from``,
            # a window of at most 31 days, years 1970-9999), so a schema-valid request may
            # rightly be a 400. Every other check stays on.
            # An over-long request line is refused by the HTTP layer with 414 (documented).
            "checks": {
                "positive_data_acceptance": {"enabled": False},
                "negative_data_rejection": {
                    "expected-statuses": ["400", "404", "405", "409", "412", "413", "414", "428"]
                },
            },
        }
    ),
)


def test_the_fuzzed_document_is_the_one_the_running_api_serves(seeded: RunningStack) -> None:
    status, served = seeded.get("/openapi.json")
    assert status == 200
    assert served == DOCUMENT


@schema.parametrize()
def test_every_answer_is_documented_and_no_input_is_a_server_error(
    case: Any, seeded: RunningStack
) -> None:
    # When schemathesis sends the operation generated input, valid and invalid
    # Then every answer passes every default check (no 5xx, documented status,
    # documented content type and body)
    case.call_and_validate(base_url=seeded.ready["api"])


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
