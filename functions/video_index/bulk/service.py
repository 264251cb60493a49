"""The bulk steps' objects, built from settings and clients (lazily, by callers).

Deletion units delete and restore units decide what comes back around the holds: without
the holds table (``VIDEO_INDEX_HOLDS_TABLE``) the bulk function does not start."""

from __future__ import annotations

from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.bulk.steps import Bulk
from video_index.core.contract import ENV_REPORTS_BUCKET
from video_index.core.errors import ConfigurationError
from video_index.core.settings import Settings
from video_index.deletion.service import build_deletion_jobs, build_enforcer, held_windows


def build_bulk(settings: Settings, clients: Clients) -> Bulk:
    held_windows(settings, clients)  # first: without the holds nothing here may run
    if not settings.reports_bucket:
        raise ConfigurationError(
            f"{ENV_REPORTS_BUCKET} is not set: bulk runs keep their lists there"
        )
    return Bulk(
        s3=clients.s3,
        segments=ObjectStore(clients.s3, settings.bucket),
        reports=ObjectStore(clients.s3, settings.reports_bucket),
        # Bulk deletion units run their jobs themselves: nothing is queued.
        jobs=lambda: build_deletion_jobs(settings, clients, enqueue=lambda _: None),
        enforcer=lambda: build_enforcer(settings, clients),
    )
