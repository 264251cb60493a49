"""Wiring: boto3 clients and the objects built on them, created on first use, never at import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

from video_index.ingest import Ingestor
from video_index.ingest_batches import DeadLetterParking, IngestService
from video_index.objects import ObjectReader
from video_index.settings import Settings
from video_index.store import ReadModelStore

#: SDK-level retries absorb short throttling; what remains becomes an SQS retry.
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=3,
    read_timeout=10,
)
#: Presigned URLs must be SigV4 (the only scheme newer regions accept).
S3_CONFIG = CLIENT_CONFIG.merge(Config(signature_version="s3v4"))


@dataclass(frozen=True)
class Clients:
    dynamodb: Any
    s3: Any
    sqs: Any

    @classmethod
    def default(cls, session: boto3.session.Session | None = None) -> Clients:
        session = session or boto3.session.Session()
        return cls(
            dynamodb=session.client("dynamodb", config=CLIENT_CONFIG),
            s3=session.client("s3", config=S3_CONFIG),
            sqs=session.client("sqs", config=CLIENT_CONFIG),
        )


def build_store(settings: Settings, clients: Clients) -> ReadModelStore:
    return ReadModelStore(clients.dynamodb, settings.table, tombstone_days=settings.tombstone_days)


def build_ingest_service(settings: Settings, clients: Clients) -> IngestService:
    store = build_store(settings, clients)
    ingestor = Ingestor(store, ObjectReader(clients.s3, settings.bucket))
    parking = DeadLetterParking(clients.sqs, settings.dlq_url) if settings.dlq_url else None
    return IngestService(ingestor, parking)
