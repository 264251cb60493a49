"""Clip export: one MP4 of a device's video in a window (docs/playback.md).

``create`` checks the request (window at most 6 hours, the window's files at most
``max_export_bytes``), writes the job to S3 and queues it; a worker (the export
Lambda, or a thread of ``video-index local``) ``run``s it: the window's files are
stream-copied, in time order and gaps skipped, into one MP4 with ``faststart``
(:func:`video_index.media.remux.export_mp4`), stored as derived data beside the
job and served by a presigned URL.

A job's whole state is two objects in the segment bucket, outside ``v1/``:
``exports/<id>/job.json`` (written at every state change) and
``exports/<id>/clip.mp4``; a lifecycle rule expires both (default 7 days). No
table holds exports: S3 is the only truth here too, and a rebuild of the read
model cannot lose one. ``run`` is idempotent: a job already done or failed is
left as it is, and a job interrupted while running is simply run again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel

from video_index.aws.kms import SigningKey, signing_key
from video_index.aws.objects import CheckedObject, ObjectMissing, ObjectStore
from video_index.core.contract import ENV_EXPORT_SIGNING_KEY, EXPORTS_PREFIX
from video_index.core.errors import BadInput, NotFound
from video_index.core.keys import parse_key
from video_index.core.timeunits import HOUR_MS, iso_ms
from video_index.media import manifest

#: The longest window one export covers.
MAX_EXPORT_WINDOW_MS: Final = 6 * HOUR_MS
EXPORT_ID_PATTERN: Final = r"^[0-9a-f]{32}$"

Progress = Callable[[int, int], None]
#: The least time between two writes of a running job's progress (each is an S3 PUT).
PROGRESS_EVERY_S: Final = 1.0


class ExportState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    #: Stopped by Ctrl-C while ``video-index export`` ran it in its own process (a worker
    #: never stops halfway); running it again makes the clip.
    INTERRUPTED = "interrupted"


class ExportJob(BaseModel):
    """``exports/<id>/job.json``: what was asked, what it covers, how it ended."""

    export_id: str
    device: str
    from_ms: int
    to_ms: int
    state: ExportState = ExportState.QUEUED
    #: The window's files, in time order, as they were when the job was created.
    keys: list[str]
    segments: int
    bytes: int
    created_at: str
    updated_at: str
    error: str | None = None
    #: The clip's size once done.
    clip_bytes: int | None = None
    #: Who asked (the verified caller, docs/access.md); None for jobs made before it was kept.
    created_by: str | None = None
    #: How far a running job is, 0..1: each file counts once read and once joined into the
    #: clip (written at most every :data:`PROGRESS_EVERY_S` seconds).
    progress: float = 0.0
    #: The zone the window was chosen in (IANA name), for the manifest.
    time_zone: str = "UTC"
    #: The window's gaps as the index lists them when the job is made (docs/api.md#gaps),
    #: and the holds covering it: written into the manifest.
    gaps: list[dict[str, Any]] = []
    holds: list[dict[str, Any]] = []
    #: The signed manifest's size once done (None: made before manifests existed).
    manifest_bytes: int | None = None


def job_key(export_id: str) -> str:
    return f"{EXPORTS_PREFIX}{export_id}/job.json"


def clip_key(export_id: str) -> str:
    return f"{EXPORTS_PREFIX}{export_id}/clip.mp4"


def manifest_key(export_id: str) -> str:
    return f"{EXPORTS_PREFIX}{export_id}/manifest.json"


def erased_key(export_id: str) -> str:
    """Written by an erasure before it ends the job: a run that made its clip meanwhile
    removes it (its own writes of ``job.json`` cannot undo the erasure's)."""
    return f"{EXPORTS_PREFIX}{export_id}/erased.json"


def remove_clip(objects: ObjectStore, export_id: str) -> None:
    """Every version and delete marker of the export's clip and its manifest (an erasure,
    :mod:`.erasure`: the manifest names and hashes the erased footage)."""
    keys = {clip_key(export_id), manifest_key(export_id)}
    found = objects.versions(f"{EXPORTS_PREFIX}{export_id}/")
    objects.delete_versions([(v.key, v.version_id) for v in found if v.key in keys])


def _source(key: str, got: CheckedObject) -> manifest.Source:
    """A source as read: S3's stored SHA-256 when it is the whole object's (the SDK checked
    the bytes against it), otherwise the bytes' own, saying so."""
    digest = hashlib.sha256(got.body).hexdigest()
    stored = got.checksum_sha256
    whole = stored is not None and "-" not in stored and got.checksum_type != "COMPOSITE"
    if whole and base64.b64decode(str(stored)).hex() != digest:
        raise BadInput("sources", f"{key}: its bytes are not the SHA-256 S3 stored for it")
    return manifest.Source(
        key=key,
        version_id=got.version_id,
        size=len(got.body),
        sha256=digest,
        sha256_from=manifest.FROM_S3 if whole else manifest.FROM_BYTES,
        start_ms=parse_key(key).start_ms,
        s3_checksum=stored if stored is not None and not whole else None,
    )


@dataclass(frozen=True)
class VideoEntries:
    """The video entries of a device's window ``[from_ms, to_ms)`` as the read model lists
    them: what an export is made of. The query layer's listing, handed in by the
    composition root (:mod:`video_index.app.services`), so media never imports query."""

    read: Callable[[str, int, int], Iterable[Any]]

    def __call__(self, device: str, from_ms: int, to_ms: int) -> list[Any]:
        return list(self.read(device, from_ms, to_ms))


Facts = tuple[list[dict[str, Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class WindowFacts:
    """What an export's manifest says of its window besides the files: the gaps as the index
    lists them (``GET /devices/{d}/ranges``) and the holds covering it, after checking the
    time zone it was chosen in. Built by the composition root over the query layer and
    holds, which media does not import."""

    read: Callable[[str, int, int, str], Facts]

    def __call__(self, device: str, from_ms: int, to_ms: int, time_zone: str) -> Facts:
        return self.read(device, from_ms, to_ms, time_zone)


class Exports:
    """Create, look up and run clip exports of one deployment."""

    def __init__(
        self,
        objects: ObjectStore,
        *,
        enqueue: Callable[[str], None],
        max_bytes: int,
        clock: Callable[[], float] = time.time,
        signer: Callable[[], SigningKey] | None = None,
    ) -> None:
        self._objects = objects
        #: The export signing key (docs/playback.md#signed-exports): without one, ``run``
        #: refuses naming the setting — no clip leaves unsigned.
        self._signer = signer or signing_key(None, None, ENV_EXPORT_SIGNING_KEY)
        self._enqueue = enqueue
        self.max_bytes = max_bytes
        self._clock = clock

    def create(
        self,
        device: str,
        from_ms: int,
        to_ms: int,
        entries: list[Any],
        created_by: str | None = None,
        *,
        time_zone: str = "UTC",
        gaps: list[dict[str, Any]] | None = None,
        holds: list[dict[str, Any]] | None = None,
    ) -> ExportJob:
        """A queued job over ``entries`` (the window's video entries, in time order)."""
        if to_ms - from_ms > MAX_EXPORT_WINDOW_MS:
            raise BadInput(
                "to", f"an export covers at most {MAX_EXPORT_WINDOW_MS // HOUR_MS} hours"
            )
        files = [e for e in entries if e.playable]
        total = sum(e.size for e in files)
        if total > self.max_bytes:
            raise BadInput(
                "to",
                f"the window holds {total} bytes of video, more than max_export_bytes "
                f"({self.max_bytes}): export a shorter window",
            )
        now = iso_ms(int(self._clock() * 1000))
        job = ExportJob(
            export_id=uuid.uuid4().hex,
            device=device,
            from_ms=from_ms,
            to_ms=to_ms,
            keys=[e.key for e in files],
            segments=len(files),
            bytes=total,
            created_at=now,
            updated_at=now,
            created_by=created_by,
            time_zone=time_zone,
            gaps=gaps or [],
            holds=holds or [],
        )
        self._save(job)
        self._enqueue(job.export_id)
        return job

    def get(self, export_id: str) -> ExportJob:
        try:
            return ExportJob.model_validate(self._objects.get_json(job_key(export_id)))
        except ObjectMissing:
            raise NotFound("export_id", f"no export {export_id}") from None

    def clip_url(self, job: ExportJob, presign: Callable[..., str]) -> str:
        """A presigned GET of the job's clip, answered as an attachment (a browser saves it
        as ``<device>_<from>.mp4``)."""
        start = iso_ms(job.from_ms).replace("-", "").replace(":", "").replace(".000", "")
        return presign(clip_key(job.export_id), download_as=f"{job.device}_{start}.mp4")

    def manifest_url(self, job: ExportJob, presign: Callable[..., str]) -> str | None:
        """A presigned GET of the job's signed manifest (None for jobs made without one)."""
        if job.manifest_bytes is None:
            return None
        start = iso_ms(job.from_ms).replace("-", "").replace(":", "").replace(".000", "")
        return presign(
            manifest_key(job.export_id), download_as=f"{job.device}_{start}.manifest.json"
        )

    def run(self, export_id: str, progress: Progress | None = None) -> ExportJob:
        """Make the job's clip and its signed manifest; a job that cannot be made ends
        ``failed`` with the reason, one stopped by Ctrl-C (the command line runs jobs in
        its own process) ``interrupted``. Without a signing key: a ConfigurationError
        naming the setting, before anything is read."""
        key = self._signer()
        job = self.get(export_id)
        if job.state in (ExportState.DONE, ExportState.FAILED):
            return job
        job = self._update(job, state=ExportState.RUNNING, error=None)
        try:
            return self._make(job, progress, key)
        except KeyboardInterrupt:
            self._update(job, state=ExportState.INTERRUPTED, error="stopped by Ctrl-C")
            raise

    def _make(self, job: ExportJob, progress: Progress | None, key: SigningKey) -> ExportJob:
        from video_index.media.remux import export_mp4  # PyAV: only where clips are made

        export_id = job.export_id
        if not job.keys:
            return self._update(
                job, state=ExportState.FAILED, error="no playable video in the window"
            )
        note = self._progress_writer(job)
        with tempfile.TemporaryDirectory(prefix="export-") as folder:
            sources, read = [], []
            for index, source_key in enumerate(job.keys):
                path = Path(folder) / f"{index:06d}"
                note(index, 2 * len(job.keys))
                try:
                    got = self._objects.get_checked(source_key)
                except ObjectMissing:
                    continue  # deleted since the request: the clip is what still exists
                path.write_bytes(got.body)
                sources.append(path)
                read.append(_source(source_key, got))
            if not sources:
                return self._update(
                    job, state=ExportState.FAILED, error="the window's video no longer exists"
                )
            clip = Path(folder) / "clip.mp4"
            try:
                result = export_mp4(
                    sources,
                    clip,
                    progress=self._joined(progress, note, len(job.keys)),
                )
            except BadInput as exc:
                return self._update(job, state=ExportState.FAILED, error=exc.message)
            self._objects.put_file(clip_key(export_id), str(clip), "video/mp4")
            signed = manifest.sign(
                manifest.build(job, read, result.starts_ms, clip, int(self._clock() * 1000)),
                key.sign,
            )
            body = json.dumps(signed, indent=1).encode()
            self._objects.put_checked(manifest_key(export_id), body, "application/json")
        erased = self._objects.get_optional_bytes(erased_key(export_id))
        if erased is not None:  # its footage was erased while it ran (:mod:`.erasure`)
            remove_clip(self._objects, export_id)
            reason = str(json.loads(erased).get("reason", "erased"))
            return self._update(job, state=ExportState.FAILED, error=reason)
        return self._update(
            job,
            state=ExportState.DONE,
            clip_bytes=result.bytes,
            progress=1.0,
            manifest_bytes=len(body),
        )

    def _progress_writer(self, job: ExportJob) -> Progress:
        """Writes the job's ``progress`` (step / steps) at most every PROGRESS_EVERY_S."""
        written = [self._clock()]

        def note(done: int, total: int) -> None:
            now = self._clock()
            if total and now - written[0] >= PROGRESS_EVERY_S:
                written[0] = now
                self._save(job.model_copy(update={"progress": round(done / total, 3)}))

        return note

    @staticmethod
    def _joined(progress: Progress | None, note: Progress, files: int) -> Progress:
        """The clip's joining steps: to the caller's ``progress`` as files joined of the
        sources, to the job as the second half of its steps (the first: files read)."""

        def joined(done: int, total: int) -> None:
            if progress is not None:
                progress(done, total)
            note(files + done, 2 * files)

        return joined

    def _update(self, job: ExportJob, **changes: Any) -> ExportJob:
        updated = job.model_copy(
            update={**changes, "updated_at": iso_ms(int(self._clock() * 1000))}
        )
        self._save(updated)
        return updated

    def _save(self, job: ExportJob) -> None:
        self._objects.put_json(job_key(job.export_id), job.model_dump(mode="json"))
