"""The ingest function's objects, built from settings and clients (by its handler, lazily)."""

from __future__ import annotations

from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.aws.store import build_store
from video_index.core.settings import Settings
from video_index.deletion.service import build_enforcer
from video_index.ingest.batches import DeadLetterParking, IngestService
from video_index.ingest.ingestor import Ingestor


def build_ingest_service(settings: Settings, clients: Clients) -> IngestService:
    objects = ObjectStore(clients.s3, settings.bucket)
    ingestor = Ingestor(
        build_store(settings, clients), objects, enforcer=build_enforcer(settings, clients)
    )
    parking = DeadLetterParking(clients.sqs, settings.dlq_url) if settings.dlq_url else None
    return IngestService(ingestor, parking)
