"""What the API routes need, built from settings and clients (lazily, by the handler)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from video_index.ingest import Ingestor
from video_index.objects import ObjectReader
from video_index.queries import Queries
from video_index.services import Clients, build_store
from video_index.settings import Settings


@dataclass
class ApiServices:
    queries: Queries
    objects: ObjectReader
    ingestor: Ingestor
    presign: Callable[[str], str]


def build_api_services(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> ApiServices:
    store = build_store(settings, clients)
    objects = ObjectReader(clients.s3, settings.bucket)

    def presign(key: str) -> str:
        url: str = clients.s3.generate_presigned_url(
            "get_object",
            Params={"Bucket": settings.bucket, "Key": key},
            ExpiresIn=settings.presign_seconds,
        )
        return url

    return ApiServices(
        queries=Queries(
            store,
            clients.s3,
            settings.bucket,
            gap_tolerance_ms=settings.gap_tolerance_ms,
            fresh_window_ms=settings.fresh_window_seconds * 1000,
            clock=clock,
        ),
        objects=objects,
        ingestor=Ingestor(store, objects),
        presign=presign,
    )
