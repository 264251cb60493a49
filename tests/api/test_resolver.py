"""The resolver machinery (docs/architecture.md): a check before every route, services by
type, one app per function with the routes each serves."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Route, Router

from video_index.api import context
from video_index.api.context import optional_service, service
from video_index.api.errors import responses
from video_index.api.resolver import create_app
from video_index.app.routes import api_paths, media_app, media_paths, route_methods
from video_index.core.access import public
from video_index.core.audit import AuditLog
from video_index.core.errors import BadInput, ConfigurationError
from worlds import events as ev
from worlds.audit_log import MemoryAuditLog


@pytest.fixture(autouse=True)
def _services_restored() -> Any:
    """Other tests' services, as they were (the provider is process-wide)."""
    before = context._provider
    yield
    context._provider = before


class _Greeting:
    def __init__(self, text: str) -> None:
        self.text = text


def _router() -> Router:
    router = Router()  # type: ignore[no-untyped-call]

    @router.get("/open", responses=responses(), openapi_extensions=public())
    def get_open() -> dict[str, str]:
        return {"said": service(_Greeting).text}

    @router.get(
        "/guarded", responses=responses(), openapi_extensions={**public(), "x-role": "admin"}
    )
    def get_guarded() -> dict[str, str]:
        return {"said": "secret"}

    @router.get("/undeclared", responses=responses())
    def get_undeclared() -> dict[str, str]:
        return {"said": "never"}

    return router


def _call(app: Any, path: str) -> tuple[int, Any]:
    response = app.resolve(ev.http_request(path), None)
    return response["statusCode"], json.loads(response["body"])


def test_a_check_runs_before_every_route_and_refuses_with_a_product_error() -> None:
    # Given an app whose check refuses routes that declare a role
    seen: list[str] = []

    def needs_no_role(route: Route, event: Any) -> None:
        seen.append(route.path)
        if (route.openapi_extensions or {}).get("x-role"):
            raise BadInput("role", "this route needs a role")

    app = create_app([_router()], checks=[needs_no_role])
    # (its refusal is recorded in an audit log, docs/audit.md)
    context.configure(lambda: {_Greeting: _Greeting("hello"), AuditLog: MemoryAuditLog()})
    # When both routes are called
    # Then the open one answers with the service asked for by its type
    assert _call(app, "/open") == (200, {"said": "hello"})
    # And the guarded one is refused before it runs, the error mapped like any other
    status, body = _call(app, "/guarded")
    assert (status, body["error"]["parameter"]) == (400, "role")
    assert seen == ["/open", "/guarded"]


def test_a_route_without_an_access_rule_is_refused_in_any_app() -> None:
    # Given an app of routers the product did not write, one route declaring no rule
    app = create_app([_router()])
    # (its refusal is recorded in an audit log, docs/audit.md)
    context.configure(lambda: {_Greeting: _Greeting("hello"), AuditLog: MemoryAuditLog()})
    # When it is called
    status, body = _call(app, "/undeclared")
    # Then the decision every app runs refuses it (fails closed, docs/access.md)
    assert status == 403 and "declares no access rule" in body["error"]["message"]


def test_a_service_the_deployment_lacks_is_none_or_a_configuration_error() -> None:
    # Given services without any greeting
    context.configure(lambda: {_Greeting: None})
    # Then asking for it optionally gives None, and requiring it is a ConfigurationError (503)
    assert optional_service(_Greeting) is None
    with pytest.raises(ConfigurationError, match="_Greeting"):
        service(_Greeting)


def test_the_media_function_serves_the_media_path_and_the_api_function_every_other() -> None:
    # Given the paths of the whole API
    every = set(route_methods())
    # Then the media function serves only the routes that decode or remux (PyAV)
    assert media_paths() == [
        "/devices/{device}/frame",
        "/devices/{device}/media/{file}",
        "/shares/{share_id}/frame",
        "/shares/{share_id}/media/{file}",
    ]
    # And the API function every other one, the document included
    assert set(api_paths()) == every - set(media_paths())
    assert "/openapi.json" in api_paths()
    # And the media app answers 404 for a path of the API function
    status, body = _call(media_app(), "/devices")
    assert status == 404 and body["error"]["message"] == "no such route"
