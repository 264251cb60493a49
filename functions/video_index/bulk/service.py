"""The bulk steps' objects, built from settings and clients (lazily, by callers)."""

from __future__ import annotations

from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.bulk.steps import Bulk
from video_index.core.contract import ENV_REPORTS_BUCKET
from video_index.core.errors import ConfigurationError
from video_index.core.holding import NO_HOLDS, HeldWindows
from video_index.core.settings import Settings
from video_index.deletion.service import build_deletion_jobs, build_enforcer


def build_bulk(settings: Settings, clients: Clients, holds: HeldWindows = NO_HOLDS) -> Bulk:
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
        holds=holds,
    )
