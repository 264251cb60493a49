"""What the API routes need, built from settings and clients (lazily, by the handler)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.aws.store import build_store
from video_index.core.settings import Settings
from video_index.ingest.ingestor import Ingestor
from video_index.query.queries import Queries


@dataclass
class ApiServices:
    queries: Queries
    #: A short-lived GET URL of a segment key.
    presign: Callable[[str], str]


def build_api_services(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> ApiServices:
    store = build_store(settings, clients)
    objects = ObjectStore(clients.s3, settings.bucket)
    queries = Queries(
        store,
        objects,
        Ingestor(store, objects),
        gap_tolerance_ms=settings.gap_tolerance_ms,
        fresh_window_ms=settings.fresh_window_seconds * 1000,
        clock=clock,
    )
    return ApiServices(
        queries=queries,
        presign=lambda key: objects.presign_get(key, settings.presign_seconds),
    )
