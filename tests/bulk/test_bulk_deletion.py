"""A deletion over many partitions fanned out on the local engine (docs/bulk.md): one
ordinary job per device and ≤ 31 days, each with its checkpoint and lease; a unit
killed mid-way is resumed from its checkpoint; held footage is never deleted."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.bulk.conftest import REPORTS
from tests.support.deletion_world import (
    BUCKET,
    Killed,
    Killer,
    World,
    at,
    current,
    meets,
    put,
)
from video_index.aws.deletions import DeletionTable
from video_index.aws.objects import ObjectStore
from video_index.bulk.local import LocalEngine
from video_index.bulk.steps import Bulk
from video_index.core.errors import BadInput
from video_index.core.timeunits import to_epoch_ms
from video_index.deletion.jobs import DEFAULT_LEASE_SECONDS, DeletionJobs
from video_index.deletion.model import DeletionState
from video_index.holds.service import HoldsHeldWindows

START = at(1, 0)
END = START + timedelta(days=70)  # three 31-day slices per device
HELD_FROM, HELD_TO = START + timedelta(days=40), START + timedelta(days=42)


def _bulk(world: World) -> Bulk:
    def jobs() -> DeletionJobs:
        return DeletionJobs(
            DeletionTable(world.dynamodb, world.table),
            ObjectStore(world.s3, BUCKET),
            enqueue=lambda _: None,
            clock=world.clock,
            batch_size=25,
            holds=HoldsHeldWindows(world.holds),
        )

    return Bulk(
        s3=world.s3,
        segments=ObjectStore(world.s3, BUCKET),
        reports=ObjectStore(world.s3, REPORTS),
        jobs=jobs,
        enforcer=lambda: None,
    )


def test_a_bulk_deletion_fans_out_and_a_unit_killed_mid_way_resumes(moto_world: World) -> None:
    # Given two cameras with 80 days of footage (a segment every 6 hours) and a third one
    keys: list[str] = []
    for device in ("cam-a", "cam-b", "cam-keep"):
        first = START - timedelta(days=5)
        keys += [put(moto_world.s3, device, first + timedelta(hours=6 * i)) for i in range(320)]
    moto_world.hold("cam-a", HELD_FROM, HELD_TO)
    doomed = (meets(keys, "cam-a", START, END) | meets(keys, "cam-b", START, END)) - meets(
        keys, "cam-a", HELD_FROM, HELD_TO
    )
    assert meets(keys, "cam-a", HELD_FROM, HELD_TO)
    execution = {
        "devices": ["cam-a", "cam-b"],
        "from_ms": to_epoch_ms(START),
        "to_ms": to_epoch_ms(END),
        "created_by": "t",
        "run_id": "d1",
    }
    # When the run's process dies mid-way through its second unit
    bulk = _bulk(moto_world)
    killer = Killer([moto_world.s3, moto_world.dynamodb], at_call=60, after=True)
    with pytest.raises(Killed):
        LocalEngine(bulk).delete(execution)
    killer.disarm()
    units = ObjectStore(moto_world.s3, REPORTS).get_json("bulk-delete/d1/units.json")
    assert len(units) == 6  # two devices, three slices each
    jobs = bulk.jobs()
    states = [jobs.get(u["deletion_id"]).state for u in units]
    assert DeletionState.RUNNING in states  # the dead unit holds its job's lease
    partly = set(current(moto_world.s3))
    assert doomed & partly and doomed - partly  # some deleted, some not yet

    # And the execution is run again (a new process): the busy unit is retried once its
    # lease has expired
    def expire(_: BaseException) -> None:
        moto_world.clock.now += DEFAULT_LEASE_SECONDS + 1

    engine = LocalEngine(bulk, before_retry=expire)
    report = engine.delete(execution)
    # Then the plan was not recorded twice, every job is done, resumed from its checkpoint
    assert ObjectStore(moto_world.s3, REPORTS).get_json("bulk-delete/d1/units.json") == units
    assert engine.retried  # the killed unit's JobBusy, retried
    assert all(jobs.get(u["deletion_id"]).state is DeletionState.DONE for u in units)
    assert (report["units"], report["done"], report["failed_batches"]) == (6, 6, 0)
    # And exactly the window's keys are gone, counted once; held footage and others stay
    assert set(current(moto_world.s3)) == set(keys) - doomed
    assert report["deleted"] == len(doomed)
    assert report["kept_held"] == len(meets(keys, "cam-a", HELD_FROM, HELD_TO))


def test_a_bulk_deletion_is_refused_when_it_names_nothing_or_too_much(moto_world: World) -> None:
    engine = LocalEngine(_bulk(moto_world))
    window = {"from_ms": to_epoch_ms(START), "to_ms": to_epoch_ms(END), "created_by": "t"}
    with pytest.raises(BadInput, match="devices"):
        engine.delete({**window, "devices": []})
    with pytest.raises(BadInput, match="to_ms"):
        engine.delete({**window, "devices": ["cam-a"], "to_ms": to_epoch_ms(START)})
    with pytest.raises(BadInput, match="devices"):
        engine.delete({**window, "devices": ["cam-a", "cam-a"]})
