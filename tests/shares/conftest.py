"""A world of the API with share links, its clock in the test's hands (no sleeps)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest

from video_index.aws.shares import ShareStore
from video_index.core.table_schema import create_tables
from video_index.shares.service import Shares
from worlds import events as ev
from worlds.api_world import NOW, ApiWorld, make_world

DEVICE = "cam-share"
OTHER = "cam-other"


@dataclass
class Clock:
    """The shares' clock: a test moves it on instead of sleeping."""

    now: float = field(default_factory=NOW.timestamp)

    def __call__(self) -> float:
        return self.now


@dataclass
class ShareWorld:
    api: ApiWorld
    clock: Clock
    dynamodb: Any

    def call(
        self, method: str, path: str, query: str = "", *, body: Any = None, who: str | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        """A request; ``who``: ``"<role>"`` or ``"<role>:<name>"`` signed in, None: anonymous."""
        authorizer: dict[str, Any] = {}
        if who is not None:
            role, _, name = who.partition(":")
            authorizer = ev.cognito_authorizer(name or f"user-{role}", [role], devices="cam-*")
        return self.api.call(
            method,
            path,
            query,
            body=json.dumps(body) if body is not None else None,
            authorizer=authorizer,
        )


@pytest.fixture
def shares_world(aws: None) -> ShareWorld:
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", shares="shares")
    world = make_world(dynamodb, "read-model")
    clock = Clock()
    world.services.shares = Shares(
        ShareStore(dynamodb, "shares"),
        max_window_s=3600,
        max_lifetime_s=7 * 24 * 3600,
        presign_seconds=900,
        clock=clock,
    )
    world.services.exports._enqueue = lambda _: None
    # (the export worker signs with the world's key, as the export function does)
    key = world.services.signing_key
    world.services.exports._signer = lambda: key  # type: ignore[assignment,return-value]
    return ShareWorld(world, clock, dynamodb)
