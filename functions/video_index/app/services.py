"""What each capability's routes need, built from settings and clients (lazily, by a
handler or ``video-index local``), and handed to the routes by type
(:mod:`video_index.api.context`).

The one place that builds every capability's services: it joins what the capabilities
must not import from each other (the query layer's segments for annotations and
exports, ingest's write path for the query layer's read repair)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from video_index.annotations.service import Annotations
from video_index.annotations.store import AnnotationStore
from video_index.api import context
from video_index.api.context import Presign
from video_index.api.cursors import CursorKey
from video_index.aws.audit import build_audit_log
from video_index.aws.clients import Clients
from video_index.aws.kms import SigningKey
from video_index.aws.objects import ObjectStore
from video_index.aws.queues import send_message
from video_index.aws.secrets import reader
from video_index.aws.store import build_store
from video_index.core.audit import AuditLog
from video_index.core.contract import ENV_CURSOR_KEY_SECRET, ENV_EXPORT_QUEUE_URL
from video_index.core.cursors import key_from_secret
from video_index.core.errors import ConfigurationError
from video_index.core.settings import Settings
from video_index.deletion.jobs import DeletionJobs
from video_index.deletion.service import build_deletion_jobs
from video_index.holds.service import Holds, HoldsHeldWindows, build_holds
from video_index.ingest.ingestor import Ingestor
from video_index.media.exports import Exports, VideoEntries, WindowFacts
from video_index.media.frames import Frames
from video_index.media.renditions import Renditions
from video_index.query.calendar import parse_zone
from video_index.query.live import LiveEdge
from video_index.query.queries import Queries
from video_index.query.segments import ReadModelSegments
from video_index.query.shapes import gap_out
from video_index.query.timeline import Timeline
from video_index.shares.service import SharePresign, Shares, build_shares


@dataclass
class ApiServices:
    queries: Queries
    #: A short-lived GET URL of a key of the segment bucket (and, given a file name, one
    #: answered as an attachment of that name).
    presign: Callable[..., str]
    renditions: Renditions
    exports: Exports
    #: None when no annotations table is configured (``VIDEO_INDEX_ANNOTATIONS_TABLE``):
    #: the annotation routes answer 503 and segment entries carry no annotations.
    annotations: Annotations | None = None
    #: Deletion requests and jobs (docs/deletion.md); None where the deployment has none.
    deletions: DeletionJobs | None = None
    #: Evidence holds (docs/holds.md); None without ``VIDEO_INDEX_HOLDS_TABLE``.
    holds: Holds | None = None
    #: Pictures of moments (the media function's frame route; here for ``video-index local``).
    frames: Frames | None = None
    #: The key page cursors are sealed with (docs/api.md#pages-and-cursors).
    cursor_key: CursorKey | None = None
    #: A window's ranges with a reason for every gap (docs/api.md#gaps); by default over
    #: ``queries`` alone (no deletion requests, no holds).
    timeline: Timeline | None = None
    #: The newest files of each device (the live playlist, docs/playback.md#live).
    live: LiveEdge | None = None
    #: Share links (docs/shares.md); None without ``VIDEO_INDEX_SHARES_TABLE`` (their
    #: routes refuse naming it).
    shares: Shares | None = None
    #: A presigned GET living as long as asked (a share's links: never past its end).
    share_presign: Callable[[str, int, str | None], str] | None = None
    #: The export signing key's public half (GET /exports/public-key); None without
    #: ``VIDEO_INDEX_EXPORT_SIGNING_KEY`` (the route answers 503 naming it).
    signing_key: SigningKey | None = None
    #: Where every audited request's record goes (docs/audit.md); a request that needs a
    #: record without one is answered 503 naming the missing setting.
    audit: AuditLog | None = None
    _by_type: dict[type[Any], object] = field(default_factory=dict, init=False, repr=False)

    def by_type(self) -> dict[type[Any], object]:
        """Each service under the type its routes ask for (``service(Queries)``)."""
        if not self._by_type:
            queries = self.queries
            self._by_type.update(
                {
                    Queries: queries,
                    Presign: Presign(self.presign),
                    Renditions: self.renditions,
                    Frames: self.frames,
                    Exports: self.exports,
                    VideoEntries: VideoEntries(
                        lambda device, start_ms, end_ms: queries.window_entries(
                            device, "video", start_ms, end_ms
                        )
                    ),
                    Annotations: self.annotations,
                    DeletionJobs: self.deletions,
                    Holds: self.holds,
                    CursorKey: self.cursor_key,
                    Timeline: self.timeline or Timeline(queries, None, None),
                    LiveEdge: self.live,
                    Shares: self.shares,
                    SharePresign: SharePresign(self.share_presign)
                    if self.share_presign is not None
                    else None,
                    SigningKey: self.signing_key,
                    AuditLog: self.audit,
                }
            )
            self._by_type[WindowFacts] = window_facts(self._by_type)
        return self._by_type


def window_facts(by_type: dict[type[Any], object]) -> WindowFacts:
    """An export's gaps (as ``GET /devices/{d}/ranges`` lists them) and holds, its zone checked."""
    timeline, holds = by_type[Timeline], by_type[Holds]
    assert isinstance(timeline, Timeline)

    def read(device: str, start_ms: int, end_ms: int, zone: str) -> Any:
        parse_zone(zone)
        gaps = [
            gap_out(g).model_dump(mode="json")
            for g in timeline.answer(device, start_ms, end_ms).gaps
        ]
        held = holds.window(device, start_ms, end_ms) if isinstance(holds, Holds) else []
        return gaps, [h.public() for h in held]

    return WindowFacts(read)


def configure(services: Callable[[], ApiServices]) -> None:
    """Hand ``services`` (built on the first request) to every route."""
    context.configure(lambda: services().by_type())


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
        silent_after=settings.silent_after_seconds,
        retention_days=settings.retention_days,
        clock_tolerance_ms=settings.clock_tolerance_seconds * 1000,
    )
    deletions = (
        build_deletion_jobs(settings, clients, clock=clock, runs_jobs=False)
        if settings.deletions_table
        else None
    )
    holds = build_holds(settings, clients, clock)
    return ApiServices(
        queries=queries,
        presign=lambda key, download_as=None: objects.presign_get(
            key, settings.presign_seconds, download_as
        ),
        renditions=Renditions(objects),
        frames=Frames(objects),
        exports=Exports(
            objects,
            enqueue=export_queue(settings, clients),
            max_bytes=settings.max_export_bytes,
        ),
        annotations=build_annotations(settings, clients, queries, clock),
        deletions=deletions,
        holds=holds,
        cursor_key=cursor_key(settings, clients),
        timeline=Timeline(
            queries,
            deletions.table if deletions is not None else None,
            HoldsHeldWindows(holds) if holds is not None else None,
        ),
        live=LiveEdge(store, objects, queries.generation, clock),
        shares=build_shares(settings, clients, clock),
        share_presign=objects.presign_get,
        signing_key=(
            SigningKey(settings.export_signing_key, clients.kms)
            if settings.export_signing_key
            else None
        ),
        audit=audit_log(settings, clients, clock),
    )


def audit_log(
    settings: Settings, clients: Clients, clock: Callable[[], float] = time.time
) -> AuditLog:
    """The audit trail (docs/audit.md): :func:`video_index.aws.audit.build_audit_log`."""
    return build_audit_log(settings, clients.s3, clients.dynamodb, clock)


def cursor_key(settings: Settings, clients: Clients) -> CursorKey:
    """The cursor key, derived from the secret ``VIDEO_INDEX_CURSOR_KEY_SECRET`` names when a
    request first needs it. Without the setting, such a request is refused naming it: a
    cursor is never handed out unsealed."""
    secret_id = settings.cursor_key_secret
    if not secret_id:

        def missing() -> bytes:
            raise ConfigurationError(
                f"{ENV_CURSOR_KEY_SECRET} is not set: page cursors cannot be sealed"
            )

        return CursorKey(missing)
    read = reader(clients.secretsmanager)
    return CursorKey(lambda: key_from_secret(read(secret_id)))


def build_annotations(
    settings: Settings, clients: Clients, queries: Queries, clock: Callable[[], float] = time.time
) -> Annotations | None:
    """The annotations service over the annotations table, if one is configured."""
    if not settings.annotations_table:
        return None
    store = AnnotationStore(clients.dynamodb, settings.annotations_table)
    return Annotations(store, ReadModelSegments(queries), clock=clock)


def export_queue(settings: Settings, clients: Clients) -> Callable[[str], None]:
    """Queue an export job for the export worker (``VIDEO_INDEX_EXPORT_QUEUE_URL``)."""

    def enqueue(export_id: str) -> None:
        if not settings.export_queue_url:
            raise ConfigurationError(f"{ENV_EXPORT_QUEUE_URL} is not set: exports are off")
        send_message(clients.sqs, settings.export_queue_url, {"export_id": export_id})

    return enqueue


def build_media_services(settings: Settings, clients: Clients) -> dict[type[Any], object]:
    """What the media function's route needs: the segment bucket's presigned GETs and the
    renditions and pictures made there (no table, no queue)."""
    objects = ObjectStore(clients.s3, settings.bucket)
    return {
        Presign: Presign(
            lambda key, download_as=None: objects.presign_get(
                key, settings.presign_seconds, download_as
            )
        ),
        Renditions: Renditions(objects),
        Frames: Frames(objects),
        Shares: build_shares(settings, clients, creates=False),
        SharePresign: SharePresign(objects.presign_get),
        AuditLog: audit_log(settings, clients),
    }
