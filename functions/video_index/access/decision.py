"""The one decision point: a resolver middleware that decides every route before it runs.

Each route declares its rule in the OpenAPI document (``openapi_extensions=allow(Role.X)``
or ``public()``, :mod:`video_index.core.access`); this middleware reads the matched route's
rule, builds the caller from the identity API Gateway verified, and

* answers 401 without a verified caller (or for a token without ``sub``), 403 below the
  route's role, and 404 ``no such device`` for a ``{device}`` outside the caller's scope
  (the same answer whether that device exists or not);
* hands the caller to the route (:func:`video_index.access.caller.current_caller`);
* marks every answer of an authorized route ``Cache-Control: no-store`` (they carry
  presigned URLs, footage metadata, or both).

A documented route without a rule is refused (403): forgetting one fails closed, and the
test generated from the OpenAPI document (tests/api/test_access_matrix.py) names it.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any, Final

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Route
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from video_index.access.caller import set_caller
from video_index.core.access import (
    ACCESS_EXTENSION,
    DEFAULT_POLICY,
    ENV_ACCESS_POLICY,
    AccessDenied,
    AccessPolicy,
    Forbidden,
    Rule,
    caller_from_event,
    decide,
)
from video_index.core.errors import ConfigurationError, NotFound

#: The answer for a device outside the caller's scope.
NO_SUCH_DEVICE: Final = "no such device"

_configured: AccessPolicy | None = None


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


def decide_route(app: ApiGatewayResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """The middleware: decide, scope, run the route, mark its answer ``no-store``."""
    set_caller(None)
    rule = rule_of(app.context.get("_route"))
    if rule is None or rule.role is None:
        return next_middleware(app)
    caller = caller_from_event(app.current_event.raw_event, policy())
    set_caller(caller)
    decide(rule, caller)
    device = (app.context.get("_route_args") or {}).get("device")
    if caller is not None and device is not None and not caller.sees(str(device)):
        raise NotFound("device", NO_SUCH_DEVICE)
    response = next_middleware(app)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _refused(exc: AccessDenied) -> Response[Any]:
    return Response(
        status_code=exc.status,
        content_type="application/json",
        body={"error": {"parameter": exc.parameter, "message": exc.message}},
        headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None,
    )


def install(app: ApiGatewayResolver) -> None:
    """Make the middleware the first step of every route, and map refusals to 401/403."""
    app.use(middlewares=[decide_route])
    app.exception_handler(AccessDenied)(_refused)
