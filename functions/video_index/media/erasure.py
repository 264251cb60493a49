"""What an erasure removes beside the footage: the media made from it (docs/deletion.md,
"Erase means gone").

Derived media lives in the segment bucket outside ``v1/`` (:mod:`.renditions`,
:mod:`.frames`, :mod:`.exports`), in a versioned bucket, so deleting it leaves its bytes
as noncurrent versions; an erasure removes every version and delete marker:

* **renditions and frame pictures** of an erased source, everything under
  ``renditions/<source key>/``. Source keys sort by time, so the derived objects of a key
  range of ``v1/`` are one key range of ``renditions/``: listed once, in key order;
* **clip exports** whose files include an erased source: the clip (every version) goes,
  and the job reads ``failed`` with the reason (``GET /exports/{id}``). An
  ``exports/<id>/erased.json`` is written first, so an export running meanwhile removes
  the clip it made itself instead of reporting it done.

The replica holds none of these: replication copies ``v1/`` only (docs/deletion.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from pydantic import ValidationError

from video_index.aws.objects import ObjectMissing, ObjectStore, ObjectVersion
from video_index.core.contract import EXPORTS_PREFIX, RENDITIONS_PREFIX
from video_index.media.exports import (
    ExportJob,
    ExportState,
    erased_key,
    job_key,
    remove_clip,
)

#: A source key has this many ``/``-separated parts (``v1/<kind>/<device>/Y/M/D/H/<name>``).
_SOURCE_KEY_PARTS: Final = 8
_JOB_NAME: Final = "/job.json"
#: Versions per DeleteObjects request (S3 takes at most 1,000).
DELETE_BATCH: Final = 1000

Erased = Callable[[str], bool]


def source_of(derived_key: str) -> str:
    """The source key a ``renditions/<source key>/…`` object was made from."""
    rest = derived_key[len(RENDITIONS_PREFIX) :]
    return "/".join(rest.split("/", _SOURCE_KEY_PARTS)[:_SOURCE_KEY_PARTS])


def erase_renditions(
    objects: ObjectStore, prefix: str, after: str, last: str, erased: Erased
) -> int:
    """Remove every version of the renditions and pictures of the sources in ``(after,
    last]`` under ``prefix`` (a key range of ``v1/``) that ``erased`` names: one LIST of
    versions per 1,000 derived objects, one DeleteObjects per 1,000 versions. The number
    of versions removed."""
    doomed: list[tuple[str, str]] = []
    removed = 0
    answer: tuple[str, bool] = ("", False)  # a source's objects are listed together
    for version in _listed(objects, prefix, after, last):
        source = source_of(version.key)
        if source != answer[0]:
            answer = (source, erased(source))
        if answer[1]:
            doomed.append((version.key, version.version_id))
        if len(doomed) == DELETE_BATCH:
            objects.delete_versions(doomed)
            removed, doomed = removed + len(doomed), []
    objects.delete_versions(doomed)
    return removed + len(doomed)


def _listed(objects: ObjectStore, prefix: str, after: str, last: str) -> Iterator[ObjectVersion]:
    high = RENDITIONS_PREFIX + last
    for version in objects.versions(RENDITIONS_PREFIX + prefix, RENDITIONS_PREFIX + after):
        if version.key > high:
            return
        yield version


def erase_exports(
    objects: ObjectStore, device: str, erased: Erased, reason: str, now_iso: str
) -> list[str]:
    """End every export of ``device`` made of an erased file: its clip removed (every
    version), its job ``failed`` with ``reason`` (at ``now_iso``). One LIST per 1,000
    export objects and a GET per export job (exports expire after days, so few are
    listed). The ids ended."""
    ended = []
    for listed in objects.list(EXPORTS_PREFIX):
        if not listed.key.endswith(_JOB_NAME):
            continue
        job = _job(objects, listed.key)
        if job is None or job.device != device or not any(erased(k) for k in job.keys):
            continue
        objects.put_json(erased_key(job.export_id), {"reason": reason, "at": now_iso})
        if job.state is not ExportState.FAILED or job.error != reason:
            failed = job.model_copy(
                update={
                    "state": ExportState.FAILED,
                    "error": reason,
                    "clip_bytes": None,
                    "updated_at": now_iso,
                }
            )
            objects.put_json(job_key(job.export_id), failed.model_dump(mode="json"))
        remove_clip(objects, job.export_id)
        ended.append(job.export_id)
    return ended


def _job(objects: ObjectStore, key: str) -> ExportJob | None:
    try:
        return ExportJob.model_validate(objects.get_json(key))
    except (ObjectMissing, ValidationError, ValueError):
        return None  # gone meanwhile (expired), or not a job: nothing of ours to end
