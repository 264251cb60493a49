"""The stream consumer's objects, built from settings and clients (by its handler, lazily)."""

from __future__ import annotations

from video_index.aggregate.consumer import Aggregator
from video_index.aggregate.store import AggregateStore
from video_index.aws.clients import Clients
from video_index.aws.store import build_store
from video_index.core.settings import Settings


def build_aggregator(settings: Settings, clients: Clients) -> Aggregator:
    aggregates = AggregateStore(
        clients.dynamodb, settings.table, gap_tolerance_ms=settings.gap_tolerance_ms
    )
    return Aggregator(build_store(settings, clients), aggregates)
