"""Payload limits of the AWS services the functions answer through, in one place.

The routes size their largest answers against these (docs/api.md, "Limits"); the
ops state machines size their plans against the state payload; ``infra.limits``
re-exports them next to the other service limits, so the stack and the functions
cannot disagree. The tests measure the largest answers against the same figures.
"""

from __future__ import annotations

import json
from typing import Any, Final

#: A synchronous Lambda invocation's response payload (the serialized JSON the function
#: returns, headers and escaping included) is at most 6 MB. An HTTP API's Lambda proxy
#: answer must fit it too; a base64 (binary) body grows by 4/3 inside it.
LAMBDA_RESPONSE_BYTES: Final = 6 * 1024 * 1024
#: Step Functions: a state's input or output (and an execution's input) at most 256 KiB.
STATE_PAYLOAD_BYTES: Final = 256 * 1024
#: What a page of a list route may take of a response: the rest of 6 MB is left to the
#: envelope (headers, status, JSON escaping of the body as a string inside it).
PAGE_BUDGET_BYTES: Final = 5 * 1024 * 1024


def answer_bytes(value: Any) -> int:
    """What ``value`` (plain JSON data) takes of a Lambda response: serialized as the API
    serializes a body (ASCII, escapes included), then escaped again as the body string
    inside the proxy answer."""
    body = json.dumps(value, separators=(",", ":"))
    return len(json.dumps(body)) - 2
