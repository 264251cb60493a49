"""The API's error answers: one body for every 4xx/5xx, each status documented once."""

from __future__ import annotations

from typing import Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

#: What each error status means, as the OpenAPI document describes it.
ERROR_DESCRIPTIONS: Final[dict[int, str]] = {
    400: "A parameter or the body breaks a rule; `error.parameter` names it",
    401: "No verified caller: sign in (a token must carry `sub`)",
    403: "The caller's role does not allow this (docs/access.md)",
    404: "No such device, segment or route (or a device outside the caller's scope)",
    405: "The path does not have this method",
    409: "The request conflicts with the current state",
    410: "The share link has expired or was revoked (docs/shares.md)",
    412: "`If-Match` names a version that is not the current one: read it again",
    413: "The body is larger than 64 KiB",
    414: "The request line is too long (more than 64 KiB)",
    415: "The body is not `application/json`",
    428: "`If-Match` is missing: send the ETag of the version you edited",
    429: "The caller's daily quota of deletion requests is spent",
    503: "The read model or the segment store is unavailable: retry later",
}


class ErrorOut(BaseModel):
    parameter: str | None
    message: str


class ErrorBody(BaseModel):
    """Every 4xx/5xx answer of the API: ``{"error": {"parameter", "message"}}``."""

    error: ErrorOut


def responses(
    *statuses: int, success: int = 200, ok: OpenAPIResponse | None = None
) -> dict[int, OpenAPIResponse]:
    """A route's OpenAPI ``responses``: its success (by default the route's return model)
    and its error statuses (400, 401, 403, 414 and 503 always), each with the error body."""
    documented: dict[int, OpenAPIResponse] = {
        success: ok or {"description": "Success"},
    }
    for status in sorted({400, 401, 403, 414, 503, *statuses}):
        documented[status] = {
            "description": ERROR_DESCRIPTIONS[status],
            "content": {"application/json": {"model": ErrorBody}},
        }
    return documented


def error(
    status: int, message: str, parameter: str | None = None, headers: dict[str, str] | None = None
) -> Response[Any]:
    """An error answer: ``{"error": {"parameter", "message"}}``."""
    return Response(
        status_code=status,
        content_type="application/json",
        body={"error": {"parameter": parameter, "message": message}},
        headers=headers,
    )
