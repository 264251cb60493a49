"""The one decision point, before the resolver parses or validates anything.

Each route declares its rule in the OpenAPI document (``openapi_extensions=allow(Role.X)``
or ``public()``, :mod:`video_index.core.access`). :func:`refusal` finds the route the
resolver will call (in the resolver's own route table), builds the caller from the
identity API Gateway verified, and answers

* 401 without a verified caller (or for a token without ``sub``, or a Cognito token of
  the kind the access policy does not take), 403 below the route's role, 404 ``no such
  device`` for a ``{device}`` outside the caller's scope (the same answer whether that
  device exists or not);
* otherwise hands the caller to the route
  (:func:`video_index.api.caller.current_caller`), and :func:`finish` marks the
  answer of every authorized route ``Cache-Control: no-store`` (they carry presigned
  URLs, footage metadata, or both).

The same decision notes what the request is recorded as in the audit trail (the route's
``x-audit``, and whether it refused), and :func:`recorded` writes that record once the
answer is known (:mod:`video_index.api.audit`, docs/audit.md).

A route without a rule is refused (403): forgetting one fails closed, and the access
matrix test (tests/api/test_access_matrix.py), whose hand-written table must name every
route of the OpenAPI document, names it. A
middleware (:func:`backstop`) refuses any route the decision did not see.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextvars import ContextVar
from functools import cache
from typing import Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Route
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from video_index.api import audit
from video_index.api.caller import set_caller
from video_index.core.access import (
    ACCESS_EXTENSION,
    ENV_ACCESS_POLICY,
    AccessDenied,
    Forbidden,
    Rule,
    decide,
)
from video_index.core.access_policy import DEFAULT_POLICY, AccessPolicy, caller_from_event
from video_index.core.errors import ConfigurationError

#: The answer for a device outside the caller's scope.
NO_SUCH_DEVICE: Final = "no such device"

_configured: AccessPolicy | None = None
#: The rule the decision applied to the current request (None: not decided).
_decided: Final[ContextVar[Rule | None]] = ContextVar("video_index_decided", default=None)


def configure_policy(policy: AccessPolicy | None) -> None:
    """Use ``policy`` (tests, ``video-index local``); None: read it from the environment."""
    global _configured
    _configured = policy
    _policy_from_env.cache_clear()


def policy() -> AccessPolicy:
    return _configured if _configured is not None else _policy_from_env()


@cache
def _policy_from_env() -> AccessPolicy:
    """The deployment's policy (``VIDEO_INDEX_ACCESS_POLICY``), read on the first request."""
    text = os.environ.get(ENV_ACCESS_POLICY)
    if not text:
        return DEFAULT_POLICY
    try:
        return AccessPolicy.from_json(text)
    except ValueError as exc:
        raise ConfigurationError(f"{ENV_ACCESS_POLICY} is not a valid policy: {exc}") from None


def rule_of(route: Route | None) -> Rule | None:
    """The route's declared rule; None for the resolver's own not-found route (404/405)."""
    if route is None:
        return None
    declared = (route.openapi_extensions or {}).get(ACCESS_EXTENSION)
    if declared is not None:
        return Rule.parse(declared)
    if route.responses is None:  # the not-found route: every documented route has responses
        return None
    raise Forbidden(f"{route.method} {route.path} declares no access rule")


def _matched(
    app: ApiGatewayResolver, event: Mapping[str, Any]
) -> tuple[Route, dict[str, str]] | None:
    """The route the resolver will call for ``event``, found as the resolver finds it (its
    own route table, in its own order), with its path parameters."""
    proxy = APIGatewayProxyEventV2(dict(event))
    method, path = proxy.http_method.upper(), proxy.path
    for route in (*app._static_routes, *app._dynamic_routes):
        if route.method != method:
            continue
        found = route.rule.match(path)
        if found:
            return route, found.groupdict()
    return None


def refusal(app: ApiGatewayResolver, event: Mapping[str, Any]) -> dict[str, Any] | None:
    """The decision, before the resolver parses or validates anything: None (go on; the
    route reads its caller from :func:`~video_index.api.caller.current_caller`), or the
    refusal to answer (401, 403, or 404 for a device outside the caller's scope)."""
    set_caller(None)
    _decided.set(None)
    matched = _matched(app, event)
    if matched is None:
        audit.forget()
        return None  # the resolver answers 404 or 405
    route, arguments = matched
    # What the request is recorded as once answered (docs/audit.md), refusals included.
    audit.begin(route.method, route.path, route.openapi_extensions or {}, arguments, event)
    try:
        rule = rule_of(route)
        if rule is None:
            return None
        if rule.role is not None:
            caller = caller_from_event(event, policy())
            set_caller(caller)
            decide(rule, caller)
            device = arguments.get("device")
            if caller is not None and device is not None and not caller.sees(device):
                audit.refused()
                return _answer(404, NO_SUCH_DEVICE, "device")
        _decided.set(rule)
    except AccessDenied as exc:
        audit.refused()
        return _answer(exc.status, exc.message, exc.parameter)
    return None


def recorded(event: Mapping[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` once the request's audit record is stored (a 503 if it cannot be:
    :func:`video_index.api.audit.recorded`), refusals included."""
    return audit.recorded(event, answer)


def finish(answer: dict[str, Any]) -> dict[str, Any]:
    """Mark the answer of an authorized route ``Cache-Control: no-store``."""
    rule = _decided.get()
    if rule is not None and rule.role is not None:
        headers = answer.setdefault("headers", {})
        if not any(name.lower() == "cache-control" for name in headers):
            headers["Cache-Control"] = "no-store"
    return answer


def backstop(app: ApiGatewayResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """A route with a rule runs only if :func:`refusal` decided it: a route the decision
    did not find (a future change of the resolver's matching) is refused, not run."""
    if rule_of(app.context.get("_route")) is not None and _decided.get() is None:
        raise Forbidden("the request was not decided")
    return next_middleware(app)


def _answer(status: int, message: str, parameter: str | None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Cache-Control": "no-store"}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    body = {"error": {"parameter": parameter, "message": message}}
    return {
        "statusCode": status,
        "headers": headers,
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def _refused(exc: AccessDenied) -> Response[Any]:
    return Response(
        status_code=exc.status,
        content_type="application/json",
        body={"error": {"parameter": exc.parameter, "message": exc.message}},
        headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None,
    )


def install(app: ApiGatewayResolver) -> None:
    """The backstop on every route, and refusals raised by routes (erase, quota, others'
    requests and annotations) mapped to their status. The decision itself is
    :func:`refusal`, called by the resolver before it resolves."""
    app.use(middlewares=[backstop])
    app.exception_handler(AccessDenied)(_refused)
