"""Fixtures of the annotation tests: an API world with an annotations table, on either engine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.tables import make_tables
from video_index.core.keys import SegmentKey
from worlds import events as ev
from worlds.api_world import ApiWorld, make_world

DEVICE = "cam-001"


@pytest.fixture
def world(aws: None, engine: str, request: pytest.FixtureRequest) -> ApiWorld:
    """Bucket, read model, ingest and API in-process, with an annotations table."""
    client, read_model, annotations = make_tables(engine, request)
    return make_world(client, read_model, annotations_table=annotations)


def jwt(sub: str, role: str = "admin") -> dict[str, Any]:
    """``requestContext.authorizer`` of a request API Gateway verified with a Cognito ID token
    naming ``role`` in ``cognito:groups`` and every device in its scope (docs/access.md)."""
    return ev.cognito_authorizer(sub, [role], devices="*")


def post(world: ApiWorld, body: dict[str, Any], device: str = DEVICE, **kw: Any) -> Any:
    return world.call("POST", f"/devices/{device}/annotations", body=json.dumps(body), **kw)


def put(
    world: ApiWorld, aid: str, body: dict[str, Any], etag: str | None, device: str = DEVICE
) -> Any:
    headers = {"If-Match": etag} if etag is not None else {}
    path = f"/devices/{device}/annotations/{aid}"
    return world.call("PUT", path, body=json.dumps(body), headers=headers)


def delete(world: ApiWorld, aid: str, etag: str | None, device: str = DEVICE) -> Any:
    headers = {"If-Match": etag} if etag is not None else {}
    return world.call("DELETE", f"/devices/{device}/annotations/{aid}", headers=headers)


def get(world: ApiWorld, aid: str, device: str = DEVICE) -> Any:
    return world.call("GET", f"/devices/{device}/annotations/{aid}")


def window(start: str, end: str, **extra: str | int) -> str:
    from urllib.parse import urlencode

    return urlencode({"from": start, "to": end, **extra})


def on(segment: SegmentKey) -> dict[str, str]:
    """A segment target as a client sends it: the segment entry's kind and name."""
    return {"kind": segment.kind, "name": segment.filename}


def shown(segment: SegmentKey) -> dict[str, str]:
    """A segment target as the API shows it: its id, kind and name."""
    return {"segment": segment.id, **on(segment)}
