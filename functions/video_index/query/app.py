"""The HTTP API as one Powertools resolver: its routers, its error answers, its document.

Every route lives in a router of its capability (:mod:`video_index.query.routes`
…); this module joins them and maps the product's errors to answers once, for
all of them (docs/api.md):

* :class:`~video_index.core.errors.BadInput` and request validation → 400,
* :class:`~video_index.core.errors.NotFound` and an unknown path → 404,
* a method the path does not have → 405 with ``Allow``,
* :class:`~video_index.core.errors.Conflict` → 409,
* :class:`~video_index.core.errors.PreconditionFailed` (a stale ``If-Match``) → 412,
* :class:`~video_index.core.errors.PreconditionRequired` (no ``If-Match``) → 428,
* a body larger than :data:`MAX_BODY_BYTES` → 413, one that is not JSON → 415 or 400,
* :class:`~video_index.core.errors.ServiceError` (DynamoDB or S3 failing) and a
  missing setting → 503.

Each body is ``{"error": {"parameter", "message"}}``; every status a route can
answer is declared in ``/openapi.json`` (:func:`~video_index.query.context.responses`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from video_index.access import decision as access
from video_index.annotations import routes as annotation_routes
from video_index.core.access import Role, allow
from video_index.core.errors import (
    BadInput,
    ConfigurationError,
    Conflict,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    ServiceError,
)
from video_index.deletion import routes as deletion_routes
from video_index.media import routes as media_routes
from video_index.query import context, routes
from video_index.query.context import error, responses
from video_index.viewer import routes as viewer_routes

logger = Logger(child=True)

TITLE: Final = "video-index"
_METHODS: Final = ("get", "put", "post", "delete", "patch")
#: The largest body read (413 above it). Every valid body of the API is far smaller: an
#: annotation of 4,000 characters, each escaped as a surrogate pair, is about 48 KB.
MAX_BODY_BYTES: Final = 64 * 1024


class _Resolver(APIGatewayHttpResolver):
    """The resolver, refusing a body it cannot read as JSON before anything parses it
    (Powertools would parse a form or multipart body, or decode a base64 body as UTF-8,
    and fail with a 500 on a bad one)."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        # Who may call the route comes first (docs/access.md), before the body is read.
        denied = access.refusal(self, event)
        if denied is not None:
            return denied
        refusal = _unreadable_body(event)
        if refusal is None:
            return access.finish(super().resolve(event, context))
        return {
            "statusCode": refusal.status_code,
            "headers": {"Content-Type": refusal.content_type},
            "body": json.dumps(refusal.body),
            "isBase64Encoded": False,
        }


def _unreadable_body(event: Mapping[str, Any]) -> Response[Any] | None:
    """413 for a body over :data:`MAX_BODY_BYTES`, 415 for a body declared as anything but
    JSON, 400 for one that is not UTF-8 or not JSON (nested too deeply included, which
    would otherwise end in a RecursionError inside the parser)."""
    body = event.get("body")
    if not body:
        return None
    headers = event.get("headers") or {}
    declared = str(headers.get("content-type", "")).split(";", 1)[0].strip().lower()
    size = len(body) * 3 // 4 if event.get("isBase64Encoded") else len(str(body).encode())
    if size > MAX_BODY_BYTES:
        return error(413, f"the body is larger than {MAX_BODY_BYTES // 1024} KiB", "body")
    if declared and declared != "application/json":
        return error(415, f"the body must be application/json, not {declared!r}", "Content-Type")
    text = str(body)
    if event.get("isBase64Encoded"):
        try:
            text = base64.b64decode(body).decode()
        except (ValueError, UnicodeDecodeError):
            return error(400, "the body is not UTF-8 text (JSON is)", "body")
    try:
        json.loads(text)
    except RecursionError:
        return error(400, "the body nests JSON too deeply", "body")
    except ValueError as exc:
        return error(400, f"the body is not JSON: {exc}", "body")
    return None


app = _Resolver(enable_validation=True)
# Refusals raised by routes (erase, quota, others' requests) and the decision's backstop.
access.install(app)
# The handler and the local stack configure the services through the app module.
configure = context.configure


@app.exception_handler(BadInput)
def _bad_input(exc: BadInput) -> Response[Any]:
    return error(400, exc.message, exc.parameter)


@app.exception_handler(RequestValidationError)
def _validation_error(exc: RequestValidationError) -> Response[Any]:
    first = exc.errors()[0] if exc.errors() else {}
    return error(400, str(first.get("msg", "invalid request")), _parameter(first.get("loc", ())))


def _parameter(location: Any) -> str | None:
    """The parameter a validation error is about: a query or path parameter by its name, a
    header as it is spelled (``If-Match``), a body field by its path (``target.from``,
    ``tags[3]``)."""
    parts = list(location)
    if not parts:
        return None
    if parts[0] == "header" and len(parts) > 1:  # as the header is usually spelled
        return "-".join(word.capitalize() for word in str(parts[-1]).split("-"))
    if parts[0] != "body" or len(parts) == 1:
        return str(parts[-1])
    path = ""
    for part in parts[1:]:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


@app.exception_handler(PreconditionFailed)
def _precondition_failed(exc: PreconditionFailed) -> Response[Any]:
    return error(412, str(exc), "If-Match")


@app.exception_handler(PreconditionRequired)
def _precondition_required(exc: PreconditionRequired) -> Response[Any]:
    return error(428, str(exc), "If-Match")


@app.exception_handler(NotFound)
def _not_found_error(exc: NotFound) -> Response[Any]:
    return error(404, exc.message, exc.parameter)


@app.exception_handler(Conflict)
def _conflict(exc: Conflict) -> Response[Any]:
    return error(409, str(exc))


@app.exception_handler(ServiceError)
def _service_error(exc: ServiceError) -> Response[Any]:
    logger.exception("a backing service is unavailable")
    return error(503, "the read model or the segment store is unavailable, retry later")


@app.exception_handler(ConfigurationError)
def _configuration_error(exc: ConfigurationError) -> Response[Any]:
    logger.exception("the API is misconfigured")
    return error(503, "the API is misconfigured, see its logs")


@app.not_found
def _no_route(_: Exception) -> Response[Any]:
    event = app.current_event
    allowed = _methods_of(event.path)
    if allowed:
        allow = ", ".join(sorted(allowed))
        return error(
            405,
            f"{event.http_method} is not allowed here (allowed: {allow})",
            headers={"Allow": allow},
        )
    return error(404, "no such route")


@cache
def route_methods() -> dict[str, frozenset[str]]:
    """Every documented path (OpenAPI form, ``/devices/{device}``) with its methods.

    The deployed HTTP API declares exactly these paths (``infra/api.py``), so the
    routes API Gateway forwards and the routes this resolver serves cannot drift.
    """
    schema = app.get_openapi_schema(title=TITLE, version="1")
    return {
        path: frozenset(m.upper() for m in _METHODS if getattr(item, m))
        for path, item in (schema.paths or {}).items()
    }


@cache
def _route_patterns() -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """Each documented path as a regular expression, with its methods."""
    patterns = []
    for path, methods in route_methods().items():
        regex = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path))
        patterns.append((re.compile(regex + "$"), methods))
    return patterns


def _methods_of(path: str) -> frozenset[str]:
    for pattern, methods in _route_patterns():
        if pattern.match(path):
            return methods
    return frozenset()


app.include_router(routes.router)
app.include_router(media_routes.router)
app.include_router(viewer_routes.router)
app.include_router(annotation_routes.router)
app.include_router(deletion_routes.router)


@app.get(
    "/openapi.json",
    openapi_extensions=allow(Role.VIEWER),
    responses=responses(
        ok={
            "description": "This document (OpenAPI 3)",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    ),
)
def openapi() -> Response[str]:
    return Response(
        status_code=200,
        content_type="application/json",
        body=app.get_openapi_json_schema(title=TITLE, version="1"),
    )
