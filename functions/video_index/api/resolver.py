"""The HTTP API as a Powertools resolver: routers joined, errors answered, one document.

:func:`create_app` joins the routers it is given (each capability's, chosen by
:mod:`video_index.app`) and maps the product's errors to answers once, for all of
them (docs/api.md):

* :class:`~video_index.core.errors.BadInput` and request validation → 400,
* :class:`~video_index.core.errors.NotFound` and an unknown path → 404,
* a method the path does not have → 405 with ``Allow``,
* :class:`~video_index.core.errors.Conflict` → 409,
* :class:`~video_index.core.errors.Gone` (a share link expired or revoked) → 410,
* :class:`~video_index.core.errors.PreconditionFailed` (a stale ``If-Match``) → 412,
* :class:`~video_index.core.errors.PreconditionRequired` (no ``If-Match``) → 428,
* a body larger than :data:`MAX_BODY_BYTES` → 413, one that is not JSON → 415 or 400,
* :class:`~video_index.core.errors.ServiceError` (DynamoDB or S3 failing) and a
  missing setting → 503.

Each body is ``{"error": {"parameter", "message"}}``; every status a route can
answer is declared in ``/openapi.json`` (:func:`~video_index.api.errors.responses`).
Who may call a route is decided first, before the body is read or a parameter
validated (:mod:`video_index.api.access`, docs/access.md): 401, 403, or 404 for a device
outside the caller's scope; every authorized answer is ``Cache-Control: no-store``. A
check given to :func:`create_app` (``checks``) runs before every route, after that
decision and the request's validation.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, Final

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Route, Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from video_index.api import access
from video_index.api.errors import error, responses
from video_index.core.access import Role, allow
from video_index.core.audit import NOT_AUDITED
from video_index.core.errors import (
    BadInput,
    ConfigurationError,
    Conflict,
    Gone,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    ServiceError,
)

logger = Logger(child=True)

TITLE: Final = "video-index"
_METHODS: Final = ("get", "put", "post", "delete", "patch")
#: The largest body read (413 above it). Every valid body of the API is far smaller: an
#: annotation of 4,000 characters, each escaped as a surrogate pair, is about 48 KB.
MAX_BODY_BYTES: Final = 64 * 1024


#: A check run before every route: the route (its path, method and
#: ``openapi_extensions``) and the request; it refuses by raising a product error
#: (mapped to its answer like any other). Authorization plugs in here.
Check = Callable[[Route, APIGatewayProxyEventV2], None]


class Resolver(APIGatewayHttpResolver):
    """The resolver, refusing a body it cannot read as JSON before anything parses it
    (Powertools would parse a form or multipart body, or decode a base64 body as UTF-8,
    and fail with a 500 on a bad one)."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        # Who may call the route comes first (docs/access.md), before the body is read.
        # Every answer, refusals included, is recorded once known (docs/audit.md).
        return access.recorded(event, self._answer(event, context))

    def _answer(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
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

    def openapi_json(self) -> str:
        """This resolver's OpenAPI document (every route it serves)."""
        return self.get_openapi_json_schema(title=TITLE, version="1")

    @cache  # noqa: B019 - one resolver per function, alive as long as the process
    def route_methods(self) -> dict[str, frozenset[str]]:
        """Every documented path (OpenAPI form, ``/devices/{device}``) with its methods.

        The deployed HTTP API declares exactly these paths (``infra/api.py``,
        ``infra/media.py``), so the routes API Gateway forwards and the routes a resolver
        serves cannot drift.
        """
        schema = self.get_openapi_schema(title=TITLE, version="1")
        return {
            path: frozenset(m.upper() for m in _METHODS if getattr(item, m))
            for path, item in (schema.paths or {}).items()
        }

    @cache  # noqa: B019 - as above
    def _route_patterns(self) -> list[tuple[re.Pattern[str], frozenset[str]]]:
        """Each documented path as a regular expression, with its methods."""
        patterns = []
        for path, methods in self.route_methods().items():
            regex = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path))
            patterns.append((re.compile(regex + "$"), methods))
        return patterns

    def methods_of(self, path: str) -> frozenset[str]:
        for pattern, methods in self._route_patterns():
            if pattern.match(path):
                return methods
        return frozenset()


def create_app(routers: Sequence[Router], *, checks: Sequence[Check] = ()) -> Resolver:
    """A resolver serving ``routers`` and ``GET /openapi.json`` (their document), every
    error answered as above; ``checks`` run before every route, in order."""
    app = Resolver(enable_validation=True)
    _quiet_route_arguments()
    _answer_errors(app)
    # Refusals raised by routes (erase, quota, others' requests) and the decision's backstop.
    access.install(app)
    for router in routers:
        app.include_router(router)
    if checks:
        app.use(middlewares=[_checking(checks)])

    @app.get(
        "/openapi.json",
        openapi_extensions=allow(Role.VIEWER, audit=NOT_AUDITED),
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
            body=app.openapi_json(),
        )

    return app


def _checking(checks: Sequence[Check]) -> Callable[..., Response[Any]]:
    def middleware(app: Resolver, next_middleware: Callable[[Resolver], Response[Any]]) -> Any:
        route = app.context.get("_route")
        if isinstance(route, Route):
            for check in checks:
                check(route, app.current_event)
        return next_middleware(app)

    return middleware


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


class _WithoutArguments(logging.Filter):
    """Powertools logs each route's arguments at DEBUG ("Calling API Route Handler: {…}"),
    query parameters included; a share link's secret is one (docs/shares.md#the-secret).
    The line is kept, its arguments are not."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Calling API Route Handler"):
            record.msg, record.args = "Calling API Route Handler", None
        return True


_QUIET: Final = _WithoutArguments()


def _quiet_route_arguments() -> None:
    """Install :class:`_WithoutArguments` on Powertools' resolver logger (once)."""
    powertools = logging.getLogger("aws_lambda_powertools.event_handler.api_gateway")
    if _QUIET not in powertools.filters:
        powertools.addFilter(_QUIET)


def _answer_errors(app: Resolver) -> None:
    """Map the product's errors (and an unknown path or method) to their answers."""
    for kind, answer in (
        (BadInput, _bad_input),
        (RequestValidationError, _validation_error),
        (PreconditionFailed, _precondition_failed),
        (PreconditionRequired, _precondition_required),
        (NotFound, _not_found_error),
        (Conflict, _conflict),
        (Gone, _gone),
        (ServiceError, _service_error),
        (ConfigurationError, _configuration_error),
    ):
        app.exception_handler(kind)(answer)

    @app.not_found
    def _no_route(_: Exception) -> Response[Any]:
        event = app.current_event
        allowed = app.methods_of(event.path)
        if allowed:
            listed = ", ".join(sorted(allowed))
            return error(
                405,
                f"{event.http_method} is not allowed here (allowed: {listed})",
                headers={"Allow": listed},
            )
        return error(404, "no such route")


def _bad_input(exc: BadInput) -> Response[Any]:
    return error(400, exc.message, exc.parameter)


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


def _precondition_failed(exc: PreconditionFailed) -> Response[Any]:
    return error(412, str(exc), "If-Match")


def _precondition_required(exc: PreconditionRequired) -> Response[Any]:
    return error(428, str(exc), "If-Match")


def _not_found_error(exc: NotFound) -> Response[Any]:
    return error(404, exc.message, exc.parameter)


def _conflict(exc: Conflict) -> Response[Any]:
    return error(409, str(exc))


def _gone(exc: Gone) -> Response[Any]:
    return error(410, exc.message, exc.parameter)


def _service_error(exc: ServiceError) -> Response[Any]:
    logger.exception("a backing service is unavailable")
    return error(503, "the read model or the segment store is unavailable, retry later")


def _configuration_error(exc: ConfigurationError) -> Response[Any]:
    logger.exception("the API is misconfigured")
    return error(503, "the API is misconfigured, see its logs")
