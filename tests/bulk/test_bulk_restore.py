"""Restore at fleet size through the local engine (docs/bulk.md): the manifest built
from the replica's S3 Inventory, filtered by a deletion window and a hold inside it,
units run with injected failures and retries, the completion report read back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.bulk.conftest import REPORTS
from tests.support.deletion_world import (
    BUCKET,
    REPLICA,
    World,
    at,
    current,
    meets,
    put_run,
    versioned_bucket,
)
from video_index.aws.objects import ObjectStore
from video_index.bulk.local import LocalEngine
from video_index.bulk.steps import Bulk
from video_index.core.timeunits import to_epoch_ms
from video_index.ops.planning import Sizing
from worlds.inventory_fixtures import write_inventory

DEVICES = ("cam-a", "cam-b", "cam-c")
FROM, TO = at(22, 12), at(22, 13)
HELD_FROM, HELD_TO = at(22, 12, 20), at(22, 12, 30)


class FlakyCopies:
    """Every ``every``-th CopyObject fails with SlowDown before it is sent (a unit
    fails mid-way; what it copied before stays copied)."""

    def __init__(self, s3: Any, every: int) -> None:
        self.every = every
        self.calls = 0
        self.failed = 0
        s3.meta.events.register("before-call.s3.CopyObject", self._before)

    def _before(self, **_: Any) -> None:
        self.calls += 1
        if self.calls % self.every == 0:
            self.failed += 1
            raise _error("SlowDown", 503)


def _error(code: str, status: int) -> ClientError:
    response: Any = {"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(response, "CopyObject")


def _replica(world: World) -> list[str]:
    """Three devices, two hours of 1-minute segments each, in the replica."""
    keys = []
    for device in DEVICES:
        keys += put_run(world.s3, device, at(22, 11), 120, step_s=60)
    versioned_bucket(world.s3, REPLICA)
    for key in keys:
        world.s3.copy_object(Bucket=REPLICA, Key=key, CopySource={"Bucket": BUCKET, "Key": key})
    return keys


def _inventory(world: World) -> str:
    rows = [
        (o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"])
        for page in world.s3.get_paginator("list_objects_v2").paginate(Bucket=REPLICA)
        for o in page.get("Contents", [])
    ]
    return write_inventory(
        world.s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket=REPLICA,
        config_id="replica-all",
        objects=rows,
        fmt="CSV",
        files=3,
        created=datetime(2026, 11, 23, tzinfo=UTC),
    )


def _empty(world: World) -> None:
    for key in current(world.s3):
        world.s3.delete_object(Bucket=BUCKET, Key=key)


def _bulk(world: World) -> Bulk:
    return Bulk(
        s3=world.s3,
        segments=ObjectStore(world.s3, BUCKET),
        reports=ObjectStore(world.s3, REPORTS),
        jobs=world.jobs,
        enforcer=world.enforcer,
        sizing=Sizing(prefixes_per_unit=1, unit_bytes=2048),
        workers=4,
    )


@pytest.mark.parametrize("source", ["inventory", "listing"])
def test_restore_fans_out_filters_retries_and_a_second_run_copies_nothing(
    moto_world: World, source: str
) -> None:
    # Given a replica of three devices, a deletion window over cam-a and a hold inside it
    keys = _replica(moto_world)
    moto_world.jobs().create(
        "cam-a", to_epoch_ms(FROM), to_epoch_ms(TO), kind=None, erase=True, created_by="t"
    )
    moto_world.hold("cam-a", HELD_FROM, HELD_TO)  # placed after the request
    covered = meets(keys, "cam-a", FROM, TO)
    held = meets(keys, "cam-a", HELD_FROM, HELD_TO)
    assert held and held < covered
    expected = set(keys) - (covered - held)
    manifest = _inventory(moto_world) if source == "inventory" else None
    # And the segment bucket lost, and copies that fail now and then
    _empty(moto_world)
    flaky = FlakyCopies(moto_world.s3, every=97)
    engine = LocalEngine(_bulk(moto_world))
    # When the restore runs on the engine
    report = engine.restore({"source_bucket": REPLICA, "manifest": manifest, "run_id": "r1"})
    # Then units failed and were retried, and none is left failed
    assert flaky.failed > 0 and engine.retried
    assert report["failed_batches"] == 0
    # And the bucket is the replica minus what must stay deleted
    assert set(current(moto_world.s3)) == expected
    assert (report["withheld"], report["held"]) == (len(covered - held), len(held))
    assert report["copied"] + report["identical"] == len(expected)
    assert report["units"] > 1
    # And the completion report is the one written to the reports bucket
    written = ObjectStore(moto_world.s3, REPORTS).get_json("bulk-restore/r1/report.json")
    assert written == report
    # When it runs again, it copies nothing
    again = LocalEngine(_bulk(moto_world)).restore(
        {"source_bucket": REPLICA, "manifest": manifest, "run_id": "r2"}
    )
    assert (again["copied"], again["identical"]) == (0, len(expected))


def test_a_unit_that_keeps_failing_is_reported_and_the_others_are_done(moto_world: World) -> None:
    # Given a replica and a bucket where copies of cam-b are always refused
    keys = _replica(moto_world)
    _empty(moto_world)

    def refuse(params: dict[str, Any], **_: Any) -> None:
        if "/cam-b/" in params["Key"]:
            raise _error("AccessDenied", 403)

    moto_world.s3.meta.events.register("before-parameter-build.s3.CopyObject", refuse)
    engine = LocalEngine(_bulk(moto_world), attempts=2)
    # When the restore runs from a listing of the replica
    report = engine.restore({"source_bucket": REPLICA, "run_id": "r3"})
    # Then the failed unit is in the report, and the rest is restored
    assert report["failed_batches"] == 1
    assert "cam-b" in report["failures"][0]["input"]
    assert "denied" in report["failures"][0]["cause"]
    assert set(current(moto_world.s3)) == {k for k in keys if "/cam-b/" not in k}


def test_restore_refuses_the_segment_bucket_as_its_source(moto_world: World) -> None:
    engine = LocalEngine(_bulk(moto_world))
    with pytest.raises(Exception, match="source_bucket"):
        engine.restore({"source_bucket": BUCKET})
