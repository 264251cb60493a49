"""The ways back (docs/deletion.md): undelete within the undelete window, restore from a
replica. On moto's S3 (versioned) and moto's DynamoDB."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.support.deletion_world import (
    BUCKET,
    REPLICA,
    World,
    at,
    current,
    meets,
    put,
    put_run,
    versioned_bucket,
    versions,
)
from video_index.aws.objects import ObjectStore, ObjectStoreError
from video_index.core.errors import Conflict
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.model import DeletionState
from video_index.deletion.restore import RESTORED_ETAG, Restorer
from video_index.deletion.undelete import NO_VERSION_LEFT, Undeleter

DEVICE = "cam-back"
FROM, TO = at(22, 12), at(22, 12, 2)


def _window(world: World, *, erase: bool = False) -> tuple[list[str], set[str], str]:
    keys = put_run(world.s3, DEVICE, at(22, 11, 59), 24)
    jobs = world.jobs()
    request = jobs.create(
        DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=erase, created_by="t"
    )
    assert jobs.run(request.deletion_id).request.state is DeletionState.DONE
    return keys, meets(keys, DEVICE, FROM, TO), request.deletion_id


def _undeleter(world: World) -> Undeleter:
    return Undeleter(ObjectStore(world.s3, BUCKET), world.jobs())


def _undelete(world: World, **options: object) -> object:
    return _undeleter(world).run(
        DEVICE,
        to_epoch_ms(FROM),
        to_epoch_ms(TO),
        by="t",
        **options,  # type: ignore[arg-type]
    )


def test_undelete_refuses_while_the_request_is_in_force_and_withdraws_it_when_told(
    moto_world: World,
) -> None:
    # Given a deleted window whose request is in force
    keys, covered, deletion_id = _window(moto_world)
    before = current(moto_world.s3)
    # When undelete is asked without --withdraw, it refuses, naming the request
    with pytest.raises(Conflict, match=deletion_id):
        _undelete(moto_world)
    assert current(moto_world.s3) == before
    # When it is told to withdraw, a dry run changes nothing and reports what would come back
    dry = _undelete(moto_world, withdraw=True, dry_run=True)
    assert sorted(dry.restored) == sorted(covered)
    assert current(moto_world.s3) == before and moto_world.jobs().windows(DEVICE) != []
    # Then the real run withdraws the request and brings back exactly the deleted keys,
    # with the same bytes (ETags) as before
    report = _undelete(moto_world, withdraw=True)
    assert report.withdrawn == [deletion_id]
    assert sorted(report.restored) == sorted(covered)
    assert report.not_restorable == []
    assert moto_world.jobs().get(deletion_id).state is DeletionState.WITHDRAWN
    restored = current(moto_world.s3)
    assert set(restored) == set(keys)
    originals = {
        key: [v for v in found if not v.marker][-1].etag
        for key, found in versions(moto_world.s3).items()
    }
    assert restored == originals
    # And undeleting again finds nothing deleted
    again = _undelete(moto_world)
    assert again.restored == [] and again.not_restorable == []


def test_undelete_of_an_erased_window_reports_nothing_restorable(moto_world: World) -> None:
    _, covered, deletion_id = _window(moto_world, erase=True)
    moto_world.jobs().withdraw(deletion_id, "t")
    # An erased key has no version and no marker left: it is simply gone
    report = _undelete(moto_world)
    assert report.restored == [] and report.not_restorable == []
    # A key whose versions expired while its marker stayed is reported as such
    key = sorted(covered)[0]
    put(moto_world.s3, DEVICE, at(22, 12))  # the same key again
    marker = moto_world.s3.delete_object(Bucket=BUCKET, Key=key)
    listed = moto_world.s3.list_object_versions(Bucket=BUCKET, Prefix=key)
    for version in listed.get("Versions", []):
        moto_world.s3.delete_object(Bucket=BUCKET, Key=key, VersionId=version["VersionId"])
    assert marker["DeleteMarker"]
    report = _undelete(moto_world)
    assert report.restored == []
    assert report.not_restorable == [(key, NO_VERSION_LEFT)]


def _replicate(world: World) -> None:
    versioned_bucket(world.s3, REPLICA)
    for key in current(world.s3):
        world.s3.copy_object(Bucket=REPLICA, Key=key, CopySource={"Bucket": BUCKET, "Key": key})


def _empty(world: World) -> None:
    listed = world.s3.list_object_versions(Bucket=BUCKET)
    doomed = [
        {"Key": v["Key"], "VersionId": v["VersionId"]}
        for v in listed.get("Versions", []) + listed.get("DeleteMarkers", [])
    ]
    if doomed:
        world.s3.delete_objects(Bucket=BUCKET, Delete={"Objects": doomed})


def test_restore_copies_back_what_is_missing_or_different_and_then_nothing(
    moto_world: World,
) -> None:
    # Given a bucket replicated, then damaged: emptied but for one changed object
    keys = put_run(moto_world.s3, DEVICE, at(22, 11), 30)
    before = current(moto_world.s3)
    _replicate(moto_world)
    _empty(moto_world)
    moto_world.s3.put_object(Bucket=BUCKET, Key=keys[0], Body=b"not what it was")
    restorer = Restorer(ObjectStore(moto_world.s3, BUCKET))
    # When restore runs dry, it reports and copies nothing
    dry = restorer.run(REPLICA, dry_run=True)
    assert (dry.compared, dry.copied, dry.identical) == (30, 30, 0)
    assert set(current(moto_world.s3)) == {keys[0]}
    # When it runs, the bucket holds exactly what it held before
    report = restorer.run(REPLICA)
    assert (report.copied, report.identical) == (30, 0)
    assert current(moto_world.s3) == before
    # And a second run copies nothing
    again = restorer.run(REPLICA)
    assert (again.compared, again.copied, again.identical) == (30, 0, 30)


def test_restore_does_not_bring_back_what_a_request_in_force_covers(moto_world: World) -> None:
    keys = put_run(moto_world.s3, DEVICE, at(22, 11, 59), 24)
    _replicate(moto_world)  # the replica still has what is deleted below
    jobs = moto_world.jobs()
    jobs.create(DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=True, created_by="t")
    covered = meets(keys, DEVICE, FROM, TO)
    _empty(moto_world)
    report = Restorer(ObjectStore(moto_world.s3, BUCKET), moto_world.enforcer()).run(REPLICA)
    assert report.withheld == len(covered)
    assert set(current(moto_world.s3)) == set(keys) - covered


def test_restore_brings_back_what_a_hold_keeps_inside_a_deletion_window(
    moto_world: World,
) -> None:
    # Given a replicated run, a deletion window over part of it and a hold inside that
    keys = put_run(moto_world.s3, DEVICE, at(22, 11, 59), 24)
    _replicate(moto_world)
    jobs = moto_world.jobs()
    jobs.create(DEVICE, to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=True, created_by="t")
    held_from, held_to = at(22, 12, 0, 30), at(22, 12, 1)
    moto_world.hold(DEVICE, held_from, held_to)  # placed after the request
    covered = meets(keys, DEVICE, FROM, TO)
    held = meets(keys, DEVICE, held_from, held_to)
    assert held and held < covered
    _empty(moto_world)
    # When restore runs with the hold in force
    report = Restorer(ObjectStore(moto_world.s3, BUCKET), moto_world.enforcer()).run(REPLICA)
    # Then what the hold keeps comes back, the rest of the window stays deleted
    assert (report.withheld, report.held) == (len(covered - held), len(held))
    assert set(current(moto_world.s3)) == set(keys) - (covered - held)


def test_a_multipart_object_restored_once_is_recognized_the_next_time(moto_world: World) -> None:
    # Given a replica object uploaded in two parts (its ETag is not its MD5)
    versioned_bucket(moto_world.s3, REPLICA)
    key = put(moto_world.s3, DEVICE, at(22, 11), bucket=REPLICA)
    upload = moto_world.s3.create_multipart_upload(Bucket=REPLICA, Key=key, ContentType="video/mp4")
    parts = []
    for number, body in enumerate((b"a" * 5 * 1024 * 1024, b"b" * 1024), start=1):
        part = moto_world.s3.upload_part(
            Bucket=REPLICA, Key=key, UploadId=upload["UploadId"], PartNumber=number, Body=body
        )
        parts.append({"ETag": part["ETag"], "PartNumber": number})
    moto_world.s3.complete_multipart_upload(
        Bucket=REPLICA, Key=key, UploadId=upload["UploadId"], MultipartUpload={"Parts": parts}
    )
    replica_etag = current(moto_world.s3, REPLICA)[key]
    assert "-" in replica_etag
    restorer = Restorer(ObjectStore(moto_world.s3, BUCKET))
    # When it is restored, it carries the replica's ETag and its content type
    assert restorer.run(REPLICA).copied == 1
    head = moto_world.s3.head_object(Bucket=BUCKET, Key=key)
    assert head["Metadata"][RESTORED_ETAG] == replica_etag
    assert head["ContentType"] == "video/mp4"
    # And a second restore sees it as identical
    assert restorer.run(REPLICA).identical == 1


def test_a_restore_stopped_by_a_failing_copy_is_continued_by_running_it_again(
    moto_world: World,
) -> None:
    # Given a replica of 40 objects, and a bucket that refuses one copy
    put_run(moto_world.s3, DEVICE, at(22, 11), 40)
    before = current(moto_world.s3)
    _replicate(moto_world)
    _empty(moto_world)
    victim = sorted(before)[7]

    def refuse(params: dict[str, object], **_: object) -> None:
        if params.get("Key") == victim:
            error = {"Error": {"Code": "AccessDenied"}, "ResponseMetadata": {"HTTPStatusCode": 403}}
            raise ClientError(error, "CopyObject")  # type: ignore[arg-type]

    moto_world.s3.meta.events.register("before-parameter-build.s3.CopyObject", refuse)
    restorer = Restorer(ObjectStore(moto_world.s3, BUCKET))
    # When the restore meets the refusal, it stops with the reason
    with pytest.raises(ObjectStoreError, match="denied"):
        restorer.run(REPLICA, workers=4)
    # And running it again once S3 accepts copies what is still missing, and only that
    moto_world.s3.meta.events.unregister("before-parameter-build.s3.CopyObject", refuse)
    again = restorer.run(REPLICA)
    assert again.copied == 40 - again.identical and again.copied >= 1
    assert current(moto_world.s3) == before
