"""The distributed plan finds exactly what the one-pass plan finds (docs/operations.md).

The reconcile worlds of ``test_reconcile`` (the ingest property test's histories,
fully ingested, then damaged: lost items, ghost entries, bent aggregates), an
inventory report taken, and then S3 moving on without events (a lagging report: an
upload and a delete it does not show). The one-pass plan (``Reconciler.plan`` over the
report's rows, one Scan) is the reference; the distributed plan runs with units small
enough that data files are split into parts, several Scan segments and several reduce
shards: once as Step Functions runs it (every step through ``dispatch``, partials in
the reports bucket) and once in process (local workers, partials in memory).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.ops.test_ops import plan_as_step_functions_does
from tests.ops.test_reconcile import build, corrupt, ingest_all
from tests.support.s3_world import OTHER_KEYS, Op, World, ops, segments
from tests.support.tables import ENGINES, make_table_factory
from video_index.aws.clients import Clients
from video_index.aws.objects import ListedObject
from video_index.core.keys import SegmentKey, format_key
from video_index.core.settings import Settings
from video_index.ops.fingerprints import Partition
from video_index.ops.planning import Sizing
from video_index.ops.service import build_ops
from video_index.ops.steps import dispatch
from worlds import events as ev
from worlds.inventory_fixtures import write_inventory
from worlds.reference_projection import list_bucket

BUCKET = ev.BUCKET
REPORTS = "video-index-reports"
COMPARED = (
    "objects_seen",
    "foreign_keys",
    "invalid_keys",
    "partitions_checked",
    "partitions_differing",
    "read_model_entries",
    "removal_share",
)


def report_rows(s3: Any) -> list[tuple[str, int, str, datetime]]:
    return [
        (o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"])
        for o in list_bucket(s3, BUCKET)
    ]


@pytest.mark.parametrize("engine", ENGINES)
@settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pool=st.lists(segments(), min_size=1, max_size=10, unique_by=lambda s: s.key),
    extra=st.lists(st.sampled_from(OTHER_KEYS), max_size=2),
    history=ops,
    late=segments(),
    fmt=st.sampled_from(["CSV", "Parquet", "ORC"]),
    seed=st.integers(0, 2**32),
)
def test_the_distributed_plan_finds_exactly_the_partitions_the_one_pass_plan_finds(
    engine: str,
    request: pytest.FixtureRequest,
    pool: list[SegmentKey],
    extra: list[str],
    history: list[Op],
    late: SegmentKey,
    fmt: str,
    seed: int,
) -> None:
    rng = random.Random(seed)
    with mock_aws():
        s3 = boto3.client("s3")
        for name in (BUCKET, REPORTS):
            s3.create_bucket(Bucket=name)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        # Given a world fully ingested, then damaged (lost items, ghosts, bent aggregates)
        world = World(s3, BUCKET, rng)
        world.play([format_key(s) for s in pool] + extra, history)
        dynamodb, table = make_table_factory(engine, request)()
        service, reconciler = build(s3, dynamodb, table)
        ingest_all(service, world)
        corrupt(dynamodb, table, rng)
        # And an inventory report in several data files (small row groups and stripes)
        rows = report_rows(s3)
        manifest = write_inventory(
            s3,
            dest_bucket=REPORTS,
            prefix="inventory",
            source_bucket=BUCKET,
            config_id="daily",
            objects=rows,
            fmt=fmt,
            files=2,
            created=datetime(2026, 11, 30, 1, tzinfo=UTC),
            rows_per_group=2,
            orc_stripe_bytes=1024,
        )
        # And S3 moved on since, without events: the report lags
        s3.put_object(Bucket=BUCKET, Key=late.key, Body=b"late")
        if rows:
            s3.delete_object(Bucket=BUCKET, Key=rng.choice(rows)[0])
        # When the one-pass plan and the distributed plan compare the same report
        one = reconciler.plan(
            [ListedObject(k, size, etag) for k, size, etag, _ in rows],
            source="inventory",
            force=True,
        )
        o = build_ops(
            Settings(bucket=BUCKET, table=table, reports_bucket=REPORTS),
            Clients(dynamodb=dynamodb, s3=s3, sqs=None),
            pump=service.aggregation.drain,
        )
        # (units so small that each data file is split into parts; 3 Scan segments and
        # 3 reduce shards)
        o.sizing = Sizing(unit_bytes=200, prefixes_per_unit=1, scan_segments=3, shards=3)
        plan = dispatch(
            o,
            {
                "action": "reconcile-plan",
                "source": "inventory",
                "manifest": manifest,
                "force": True,
            },
        )
        decided = dispatch(
            o, {"action": "reconcile-decide", **plan_as_step_functions_does(o, plan)}
        )
        planned = o.get_json(REPORTS, f"reconcile/{plan['run_id']}/plan.json")
        stepped = {
            Partition.from_dict(p)
            for p in o.get_json(decided["partitions"]["Bucket"], decided["partitions"]["Key"])
        }
        local_plan, units = o.plan(
            run_id="local",
            folder="reconcile/local/",
            source="inventory",
            manifest=manifest,
            generation=one.report.generation,
        )
        local = o.run_plan_locally(local_plan, units)
        # Then all three find exactly the same partitions, with the same figures
        assert stepped == set(one.differing) == set(local.differing)
        assert {name: planned[name] for name in COMPARED} == {
            name: getattr(one.report, name) for name in COMPARED
        }
        assert plan["unit_count"] > 3  # the files were split, and the Scan too
        dynamodb.delete_table(TableName=table)


@pytest.mark.parametrize("engine", ["moto"])
def test_the_distributed_listing_plan_equals_the_one_pass_listing_plan(
    aws: None, new_table: Any
) -> None:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    dynamodb, table = new_table()
    service, reconciler = build(s3, dynamodb, table)
    world = World(s3, BUCKET, random.Random(7))
    keys = [
        f"v1/{kind}/cam-{d}/2026/11/29/23/20261129T23{m:02d}00.000Z_{dur}_{d}{m:03d}.{ext}"
        for d in "abc"
        for m in range(0, 60, 7)
        for kind, dur, ext in (("video", 900_000, "mp4"), ("sensor", 0, "json"))
    ]
    for key in [*keys, "v1/x.mp4", "v1/video/y.mp4", "v1/bogus/cam-a/z.mp4"]:
        world.upload(key, 0)
    ingest_all(service, world)
    corrupt(dynamodb, table, random.Random(3))
    o = build_ops(
        Settings(bucket=BUCKET, table=table),
        Clients(dynamodb=dynamodb, s3=s3, sqs=None),
        pump=service.aggregation.drain,
    )
    o.sizing = Sizing(prefixes_per_unit=2, scan_segments=2, shards=2)
    # When a listing is fingerprinted in one pass and by device prefixes
    one = reconciler.plan(o.segments.list("v1/"), source="list", force=True)
    plan, units = o.plan(
        run_id="local", folder="reconcile/local/", source="list", manifest=None, generation=1
    )
    local = o.run_plan_locally(plan, units)
    # Then they find the same partitions and count the same keys, invalid ones included
    assert local.differing == one.differing
    assert (local.units.objects_seen, local.units.invalid_keys) == (
        one.report.objects_seen,
        one.report.invalid_keys,
    )
    assert one.report.invalid_keys == 3
    assert len(units) > 3
