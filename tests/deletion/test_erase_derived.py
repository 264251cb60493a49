"""Erase means gone (docs/deletion.md): an erasure removes the media made from the erased
footage — renditions, frame pictures, export clips — every version of it, and ends those
exports ``failed`` with the reason; what it does not erase keeps its media.

On moto (a versioned bucket and a replica), with real H.264: renditions and pictures are
made by the product's own code, as the media function makes them on a viewer's request.
End to end over HTTP: tests/local/test_deletion_ends_local.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tests.support.deletion_world import BUCKET, REPLICA, World, at, segment_key, versioned_bucket
from video_index.aws.objects import ObjectStore
from video_index.core.timeunits import to_epoch_ms
from video_index.media.erasure import erase_exports
from video_index.media.exports import ExportJob, Exports, ExportState
from video_index.media.frames import Frames
from video_index.media.renditions import Renditions
from video_index.media.synthetic import synthetic_clip

DEVICE = "cam-derived"
OTHER = "cam-other"
T0 = at(21, 8)
STEP = timedelta(seconds=1)


def _put_video(world: World, device: str, start: datetime, *, replica: bool = False) -> str:
    """A one-second progressive MP4 (played through a rendition): its key."""
    key = segment_key(device, start, 1_000, tag="clip")
    body = synthetic_clip(seconds=1, container="mp4", fps=10, size=(64, 48), start=start)
    for bucket in (BUCKET, REPLICA) if replica else (BUCKET,):
        world.s3.put_object(Bucket=bucket, Key=key, Body=body)
    return key


@dataclass(frozen=True)
class Entry:
    """A video entry as the read model lists it (what an export is made of)."""

    key: str
    size: int
    playable: bool = True


def _exports(world: World) -> Exports:
    import boto3

    from video_index.aws.kms import SigningKey, create_signing_key

    kms = boto3.client("kms", region_name="us-east-1")
    key = SigningKey(create_signing_key(kms, "test: export manifests"), kms)
    return Exports(
        ObjectStore(world.s3, BUCKET), enqueue=lambda _: None, max_bytes=10**9, signer=lambda: key
    )


def _export(world: World, device: str, keys: list[str]) -> ExportJob:
    exports = _exports(world)
    starts = [
        to_epoch_ms(datetime.fromisoformat(k.rsplit("/", 1)[1][:15] + "+00:00")) for k in keys
    ]
    entries = [Entry(k, 1) for k in keys]
    job = exports.create(device, min(starts), max(starts) + 1_000, entries, "ann")
    return exports.run(job.export_id)


def _versions(world: World, prefix: str, bucket: str = BUCKET) -> list[str]:
    listed = world.s3.list_object_versions(Bucket=bucket, Prefix=prefix)
    return [v["Key"] for v in listed.get("Versions", []) + listed.get("DeleteMarkers", [])]


def _derived(world: World, key: str) -> list[str]:
    return _versions(world, f"renditions/{key}/")


def test_an_erasure_removes_every_version_of_what_was_made_from_its_footage(
    world: World,
) -> None:
    # Given five files of a device (one held) and one of another device, in the replica
    # too, each with a rendition and two pictures, one rendition made twice (a noncurrent
    # version) and one forgotten once (a delete marker over it)
    versioned_bucket(world.s3, REPLICA)
    keys = [_put_video(world, DEVICE, T0 + n * STEP, replica=True) for n in range(5)]
    other = _put_video(world, OTHER, T0, replica=True)
    objects = ObjectStore(world.s3, BUCKET)
    renditions, frames = Renditions(objects), Frames(objects)
    for key, device in [*((k, DEVICE) for k in keys), (other, OTHER)]:
        renditions.ensure(key)
        start = to_epoch_ms(datetime.fromisoformat(key.rsplit("/", 1)[1][:15] + "+00:00"))
        for width in (64, 128):
            frames.picture(device, start + 500, width)
    world.s3.put_object(Bucket=BUCKET, Key=f"renditions/{keys[0]}/init.mp4", Body=b"old")
    renditions.forget(keys[1])
    assert all(len(_derived(world, k)) >= 4 for k in [*keys, other])
    # When the window of the first four files is erased, the fourth held
    world.hold(DEVICE, T0 + 3 * STEP, T0 + 4 * STEP)
    jobs = world.jobs(replica=REPLICA)
    request = jobs.create(
        DEVICE,
        to_epoch_ms(T0),
        to_epoch_ms(T0 + 4 * STEP),
        kind=None,
        erase=True,
        created_by="ann",
        spare_held=True,
    )
    done = jobs.run(request.deletion_id).request
    # Then the three erased files have no version left, nor anything made from them
    assert done.state.value == "done" and done.deleted == 3
    for key in keys[:3]:
        assert _versions(world, key) == [] and _versions(world, key, REPLICA) == []
        assert _derived(world, key) == [], key
    # And the held file, the file after the window and the other device keep theirs
    for key in (keys[3], keys[4], other):
        assert len(_derived(world, key)) >= 4, key
    # And the replica never held derived media (replication copies v1/ only)
    assert _versions(world, "renditions/", REPLICA) == []
    assert _versions(world, "exports/", REPLICA) == []


def test_an_erasure_ends_the_exports_made_of_its_footage_and_removes_their_clips(
    world: World,
) -> None:
    # Given three files of a device and one of another, and four done exports: of the
    # first two files, of the third only, of the other device, and one already failed
    keys = [_put_video(world, DEVICE, T0 + n * STEP) for n in range(3)]
    other = _put_video(world, OTHER, T0)
    erased = _export(world, DEVICE, keys[:2])
    kept = _export(world, DEVICE, keys[2:])
    elsewhere = _export(world, OTHER, [other])
    assert {erased.state, kept.state, elsewhere.state} == {ExportState.DONE}
    # When the first two files are erased
    jobs = world.jobs()
    request = jobs.create(
        DEVICE, to_epoch_ms(T0), to_epoch_ms(T0 + 2 * STEP), kind=None, erase=True, created_by="a"
    )
    jobs.run(request.deletion_id)
    # Then the export made of them reads failed, naming the erasure, its clip gone for good
    exports = _exports(world)
    failed = exports.get(erased.export_id)
    assert failed.state is ExportState.FAILED and failed.clip_bytes is None
    assert failed.error == f"erased: deletion {request.deletion_id} erased the window's footage"
    assert _versions(world, f"exports/{erased.export_id}/clip.mp4") == []
    assert _versions(world, f"exports/{erased.export_id}/manifest.json") == []
    # And the others are done, their clips there
    for job in (kept, elsewhere):
        assert exports.get(job.export_id).state is ExportState.DONE
        assert _versions(world, f"exports/{job.export_id}/clip.mp4") != []
    # And running the job's erasure again changes nothing
    again = erase_exports(
        ObjectStore(world.s3, BUCKET), DEVICE, set(keys[:2]).__contains__, failed.error, "t"
    )
    assert again == [erased.export_id]
    assert exports.get(erased.export_id) == failed


def test_an_export_running_while_its_footage_is_erased_removes_its_own_clip(
    world: World,
) -> None:
    # Given an export of two files, queued
    keys = [_put_video(world, DEVICE, T0 + n * STEP) for n in range(2)]
    exports = _exports(world)
    job = exports.create(
        DEVICE, to_epoch_ms(T0), to_epoch_ms(T0 + 2 * STEP), [Entry(k, 1) for k in keys], "ann"
    )
    objects = ObjectStore(world.s3, BUCKET)
    reason = "erased: deletion x erased the window's footage"
    erasures: list[Any] = []

    def erase_meanwhile(done: int, total: int) -> None:
        # (the export has read its files and is joining them when the erasure runs)
        if not erasures:
            erasures.append(erase_exports(objects, DEVICE, set(keys).__contains__, reason, "t"))

    # When it runs, and the erasure ends it while it joins its files
    ended = exports.run(job.export_id, progress=erase_meanwhile)
    # Then the erasure found it, and the run removed the clip it made and reads failed
    assert erasures == [[job.export_id]]
    assert (ended.state, ended.error) == (ExportState.FAILED, reason)
    assert exports.get(job.export_id).state is ExportState.FAILED
    assert _versions(world, f"exports/{job.export_id}/clip.mp4") == []
