"""The deletion capability's objects, built from settings and clients (lazily, by callers).

A deployment without a deletion requests table (``VIDEO_INDEX_DELETIONS_TABLE``) records
no requests and enforces none. Whatever deletes — a job, enforcement — fails closed
without the holds table (``VIDEO_INDEX_HOLDS_TABLE``): a ``ConfigurationError`` naming
it, never "nothing is held" (docs/holds.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from video_index.aws.clients import Clients
from video_index.aws.deletions import DeletionTable
from video_index.aws.objects import ObjectStore
from video_index.aws.queues import send_message
from video_index.core.contract import ENV_DELETION_QUEUE_URL, ENV_DELETIONS_TABLE, ENV_HOLDS_TABLE
from video_index.core.errors import ConfigurationError
from video_index.core.holding import HeldWindows
from video_index.core.settings import Settings
from video_index.deletion.enforcement import Enforcer
from video_index.deletion.jobs import DEFAULT_LEASE_SECONDS, DeletionJobs
from video_index.holds.service import HoldsHeldWindows, build_holds


def deletion_table(settings: Settings, clients: Clients) -> DeletionTable:
    if not settings.deletions_table:
        raise ConfigurationError(f"{ENV_DELETIONS_TABLE} is not set: deletion requests are off")
    return DeletionTable(clients.dynamodb, settings.deletions_table)


def build_enforcer(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> Enforcer | None:
    """The windows in force, when the deployment records deletion requests; it deletes
    again, so it needs the holds."""
    if not settings.deletions_table:
        return None
    return Enforcer(
        deletion_table(settings, clients),
        ObjectStore(clients.s3, settings.bucket),
        held_windows(settings, clients, clock),
    )


def build_deletion_jobs(
    settings: Settings,
    clients: Clients,
    *,
    enqueue: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.time,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    runs_jobs: bool = True,
) -> DeletionJobs:
    """Deletion jobs of the deployment; ``enqueue`` defaults to the deletion queue. Without
    ``runs_jobs`` (the API records, reads and withdraws requests, and never runs a job)
    the replica an erasure erases in is not read."""
    replica = (
        ObjectStore(clients.s3, settings.replica_bucket)
        if runs_jobs and settings.replica_bucket
        else None
    )
    return DeletionJobs(
        deletion_table(settings, clients),
        ObjectStore(clients.s3, settings.bucket),
        enqueue=enqueue or deletion_queue(settings, clients),
        replica=replica,
        clock=clock,
        lease_seconds=lease_seconds,
        holds=held_windows(settings, clients, clock),
    )


def held_windows(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> HeldWindows:
    """The holds whatever deletes must respect (docs/holds.md): without the holds table
    nothing that deletes may start."""
    holds = build_holds(settings, clients, clock)
    if holds is None:
        raise ConfigurationError(
            f"{ENV_HOLDS_TABLE} is not set: nothing that deletes footage runs without the "
            "holds (docs/holds.md)"
        )
    return HoldsHeldWindows(holds)


def deletion_queue(settings: Settings, clients: Clients) -> Callable[[str], None]:
    """Queue a deletion job for the deletion worker (``VIDEO_INDEX_DELETION_QUEUE_URL``)."""

    def enqueue(deletion_id: str) -> None:
        if not settings.deletion_queue_url:
            raise ConfigurationError(f"{ENV_DELETION_QUEUE_URL} is not set: no deletion worker")
        send_message(clients.sqs, settings.deletion_queue_url, {"deletion_id": deletion_id})

    return enqueue
