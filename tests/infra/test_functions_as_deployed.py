"""Each function run as Lambda would receive it: the synthesized asset, unpacked into an
empty folder, in an environment holding only the runtime's and the Powertools layer's
packages, without system zone data, against a moto server and the DynamoDB endpoint over
HTTP (moto's server in its own process).

The assets of functions without native packages are the synthesized ones, zipped and
unpacked. Those with native packages (PyAV) are built for arm64 and this machine is
x86_64, so they run as built for this machine by the same code (``build_asset`` with
this machine's platform); the first test holds that build to the synthesized asset:
the same files, byte for byte, but the native packages' own.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit
from zoneinfo import ZoneInfo

import av
import pytest

from infra.assets import WheelTarget, build_asset
from infra.dependencies import (
    FUNCTIONS,
    LAMBDA_GLIBC,
    LAMBDA_PYTHON_VERSION,
    FunctionPackaging,
    powertools_layer,
)
from infra.settings import StackSettings
from tests.infra.template import Synth
from tests.support.deployed_world import DeployedWorld
from video_index.core.access import ENV_ACCESS_POLICY
from video_index.core.contract import ACTION_RECONCILE, INVENTORY_ID, INVENTORY_PREFIX
from video_index.core.keys import parse_key
from video_index.core.settings import Settings
from video_index.deletion.model import DeletionState
from video_index.deletion.service import build_deletion_jobs
from video_index.local.stack import MotoServer
from video_index.media.exports import ExportJob, clip_key, job_key
from video_index.media.renditions import rendition_keys
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.inventory_fixtures import write_inventory
from worlds.lambda_env import (
    Invocation,
    LambdaEnvironment,
    invoke,
    lambda_environ,
    unzip,
    zip_folder,
)
from worlds.read_model_view import view

DEVICE = "cam-deployed"
ZONE = "Australia/Lord_Howe"


def _function(name: str) -> FunctionPackaging:
    (function,) = [f for f in FUNCTIONS if f.name == name]
    return function


@pytest.fixture(scope="module")
def runnable(
    synth: Synth, lambda_env: LambdaEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Each function's code as the tests run it (see the module documentation)."""
    folders = synth.asset_folders()
    here = WheelTarget(
        python_version=lambda_env.interpreter.minor,
        machine=platform.machine(),
        glibc=min(LAMBDA_GLIBC, _glibc()),
    )
    root = tmp_path_factory.mktemp("functions")
    runnable = {}
    for function in FUNCTIONS:
        if function.native:
            runnable[function.name] = root / function.name
            build_asset(function, runnable[function.name], target=here)
        else:
            archive = zip_folder(folders[function.handler], root / f"{function.name}.zip")
            runnable[function.name] = unzip(archive, root / function.name)
    return runnable


def _glibc() -> tuple[int, int]:
    major, minor = platform.libc_ver()[1].split(".")[:2]
    return int(major), int(minor)


@pytest.fixture
def world(moto_server: MotoServer, dynamodb_endpoint: str) -> DeployedWorld:
    return DeployedWorld.create(moto_server.endpoint, dynamodb_endpoint)


def _run(
    lambda_env: LambdaEnvironment,
    runnable: dict[str, Path],
    name: str,
    event: Any,
    world: DeployedWorld,
    **environ: str,
) -> Invocation:
    function = _function(name)
    return invoke(
        lambda_env,
        runnable[name],
        function.handler,
        event,
        environ=world.environ(**environ),
        origins=["video_index", "tzdata", "av", "pyarrow", "numpy"],
    )


def _digests(folder: Path, skip_top: set[str]) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and p.relative_to(folder).parts[0] not in skip_top
    }


def test_a_native_asset_built_here_is_the_deployed_one_but_for_its_native_packages(
    synth: Synth, runnable: dict[str, Path]
) -> None:
    folders = synth.asset_folders()
    for function in (f for f in FUNCTIONS if f.native):
        # Given the synthesized (arm64) asset and the one built for this machine
        deployed, here = folders[function.handler], runnable[function.name]
        native = set()
        for package in (p for p in function.packages if p.native):
            record = deployed / f"{package.name}-{package.version}.dist-info" / "RECORD"
            native |= {line.split("/")[0] for line in record.read_text().splitlines()}
            assert (here / f"{package.name}-{package.version}.dist-info").is_dir()
        # Then every other file is the same, byte for byte
        assert _digests(here, native) == _digests(deployed, native), function.name


def test_the_environment_has_only_the_runtime_and_the_layer(
    lambda_env: LambdaEnvironment, tmp_path: Path
) -> None:
    # Given the Lambda-like environment
    installed = lambda_env.distributions()
    # Then it runs the runtime's Python (3.13), never the one running the tests
    ran = subprocess.run(
        [str(lambda_env.python), "-I", "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.strip() == str(tuple(map(int, LAMBDA_PYTHON_VERSION.split("."))))
    # And it holds the runtime's SDK and the layer's Powertools release with its extras
    layer = powertools_layer(StackSettings().powertools_layer_version)
    assert installed["aws-lambda-powertools"] == layer.release
    assert {"boto3", "botocore", "pydantic", "aws-xray-sdk"} <= set(installed)
    # And nothing a function's asset has to bring, nor the project itself
    assert not {"tzdata", "av", "numpy", "pyarrow", "video-index"} & set(installed)
    # And without an asset it knows no time zone (no system zone data, no tzdata)
    bare = tmp_path / "empty"
    bare.mkdir()
    probe = subprocess.run(
        [str(lambda_env.python), "-c", f"import zoneinfo; zoneinfo.ZoneInfo({ZONE!r})"],
        env=lambda_environ(bare, tmp_path, "probe"),
        cwd=bare,
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0 and "ZoneInfoNotFoundError" in probe.stderr, probe.stderr


def test_every_handler_imports_from_its_asset_alone(
    lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    for function in FUNCTIONS:
        # When the function's handler module is imported as Lambda's init phase does
        imported = invoke(
            lambda_env, runnable[function.name], function.handler, None, origins=["video_index"]
        )
        # Then the project's code came from the asset (the bench times this import)
        origin = imported.origins["video_index"]
        assert origin and origin.startswith(str(runnable[function.name])), function.name


def test_ingest_indexes_a_batch(
    world: DeployedWorld, lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    # Given three clips in the bucket (MPEG-TS, fragmented and progressive MP4) and the
    # batch the notification queue delivers for them
    first = datetime(2025, 11, 29, 8, 0, tzinfo=UTC)
    keys = [
        world.put_clip(DEVICE, first + timedelta(seconds=n), container)
        for n, container in enumerate(("ts", "fmp4", "mp4"))
    ]
    # When the ingest function handles it
    ran = _run(lambda_env, runnable, "ingest", world.created_event(*keys), world)
    # Then no record failed and the read model holds the three segments, as segment
    # items only (buckets and device items are the stream consumer's)
    assert ran.result == {"batchItemFailures": []}, ran.output
    stored = view(world.client("dynamodb"), world.table)
    assert {s.id for s in stored.segments.values()} == {parse_key(k).id for k in keys}
    assert stored.devices == set() and stored.buckets == {}
    assert ran.origins["av"] is None  # never_imports in infra/dependencies.py


def test_aggregate_turns_the_streams_records_into_buckets_and_device_totals(
    world: DeployedWorld, lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    # Given two clips in one hour and one in the next, indexed by the ingest function
    first = datetime(2025, 11, 29, 8, 59, 58, tzinfo=UTC)
    keys = [world.put_clip(DEVICE, first + timedelta(seconds=n), "ts") for n in (0, 1, 2)]
    ingested = _run(lambda_env, runnable, "ingest", world.created_event(*keys), world)
    assert ingested.result == {"batchItemFailures": []}, ingested.output
    # And the events Lambda's stream event source delivers for the read model's records
    events = world.stream_events()
    assert sum(len(e["Records"]) for e in events) == 3
    # When the aggregate function handles each of them
    for event in events:
        ran = _run(lambda_env, runnable, "aggregate", event, world)
        # Then no record failed
        assert ran.result == {"batchItemFailures": []}, ran.output
    # And the device and its video totals are there, with one bucket per hour
    stored = view(world.client("dynamodb"), world.table)
    assert stored.devices == {DEVICE}
    segments, size = stored.totals[(DEVICE, "video")][:2]
    assert segments == 3 and size == sum(s.size for s in stored.segments.values())
    hours = {
        hour: sum(v for f, v in figures.items() if f[0] == "n")
        for (_, _, hour), figures in stored.buckets.items()
    }
    assert hours == {"20251129T08": 2, "20251129T09": 1}
    # And the control item says when it applied them
    control = world.client("dynamodb").get_item(
        TableName=world.table, Key={"pk": {"S": "control"}, "sk": {"S": "aggregate"}}
    )["Item"]
    assert int(control["t"]["N"]) >= int(control["a"]["N"]) > 0


def _local_day(moment: datetime) -> int:
    return moment.astimezone(ZoneInfo(ZONE)).day


def _http(
    lambda_env: LambdaEnvironment,
    runnable: dict[str, Path],
    world: DeployedWorld,
    path: str,
    query: str,
    function: str = "api",
) -> tuple[Invocation, dict[str, Any]]:
    # (as its access policy would: the request's IAM user sees every camera, docs/access.md)
    policy = json.dumps({"iam_scopes": {f"arn:aws:iam::{ev.ACCOUNT}:user/*": ["*"]}})
    event = ev.http_request(path, query)
    ran = _run(lambda_env, runnable, function, event, world, **{ENV_ACCESS_POLICY: policy})
    response: dict[str, Any] = ran.result
    return ran, response


def test_api_answers_a_calendar_in_lord_howe(
    world: DeployedWorld, lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    # Given two segments ten minutes apart on one UTC day, around Lord Howe's midnight
    # (UTC+11 in November: the first ends a local day, the second starts the next)
    starts = [
        datetime(2025, 11, 29, 12, 50, tzinfo=UTC),
        datetime(2025, 11, 29, 13, 20, tzinfo=UTC),
    ]
    world.ingest_here(*(world.put_clip(DEVICE, start, "ts") for start in starts))
    # When the API function answers the month's calendar in that zone
    ran, response = _http(
        lambda_env, runnable, world, f"/devices/{DEVICE}/calendar", f"month=2025-11&tz={ZONE}"
    )
    # Then each segment counts on its own local day (zone data from the asset's tzdata)
    assert response["statusCode"] == 200, ran.output
    body = json.loads(response["body"])
    assert body["tz"] == ZONE and len(body["days"]) == 30
    with_video = {int(d["date"][-2:]): d["segments"] for d in body["days"] if d["has_video"]}
    assert with_video == {_local_day(starts[0]): 1, _local_day(starts[1]): 1} == {29: 1, 30: 1}
    tzdata = ran.origins["tzdata"]
    assert tzdata and tzdata.startswith(str(runnable["api"])), ran.origins


def _frames(path: Path) -> int:
    with av.open(str(path)) as container:
        return sum(1 for _ in container.decode(video=0))


def test_media_function_makes_a_rendition_with_the_assets_pyav(
    world: DeployedWorld,
    lambda_env: LambdaEnvironment,
    runnable: dict[str, Path],
    tmp_path: Path,
) -> None:
    # Given a progressive MP4 in the index (no HLS player plays it as it is)
    key = world.put_clip(DEVICE, datetime(2025, 11, 29, 9, 0, tzinfo=UTC), "mp4")
    world.ingest_here(key)
    # When a player asks the media function for its rendition's init
    file = key.rsplit("/", 1)[1]
    ran, response = _http(
        lambda_env, runnable, world, f"/devices/{DEVICE}/media/{file}", "part=init", "media"
    )
    # Then it is redirected to the init the function made with the asset's PyAV
    assert response["statusCode"] == 302, ran.output
    init_key, data_key = rendition_keys(key)
    location = urlsplit(response["headers"]["Location"])
    assert location.path.endswith(init_key) and dict(parse_qsl(location.query))
    pyav = ran.origins["av"]
    assert pyav and pyav.startswith(str(runnable["media"])), ran.origins
    # And init + media play every frame of the source
    s3 = world.client("s3")
    source, rendition = tmp_path / "source.mp4", tmp_path / "rendition.mp4"
    source.write_bytes(s3.get_object(Bucket=world.bucket, Key=key)["Body"].read())
    rendition.write_bytes(
        b"".join(
            s3.get_object(Bucket=world.bucket, Key=k)["Body"].read() for k in (init_key, data_key)
        )
    )
    assert _frames(rendition) == _frames(source) > 0


def test_reconcile_repairs_the_read_model_from_a_csv_inventory(
    world: DeployedWorld, lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    # Given two clips in the bucket that the read model never heard of, and the daily
    # inventory report that lists them (CSV, as the stack configures it)
    first = datetime(2025, 11, 28, 23, 0, tzinfo=UTC)
    keys = [world.put_clip(DEVICE, first + timedelta(minutes=n), "ts") for n in range(2)]
    s3 = world.client("s3")
    rows = []
    for key in keys:
        head = s3.head_object(Bucket=world.bucket, Key=key)
        rows.append((key, head["ContentLength"], head["ETag"].strip('"'), head["LastModified"]))
    write_inventory(
        s3,
        dest_bucket=world.reports_bucket,
        prefix=INVENTORY_PREFIX,
        source_bucket=world.bucket,
        config_id=INVENTORY_ID,
        objects=rows,
        fmt="CSV",
        created=datetime.now(UTC),
    )
    # When the reconcile function runs a reconcile from the newest inventory report (the
    # stream consumer running beside it, as deployed: its mend waits for it)
    with Aggregation(world.client("dynamodb"), world.table).running():
        ran = _run(
            lambda_env,
            runnable,
            "reconcile",
            {"action": ACTION_RECONCILE, "source": "inventory"},
            world,
        )
    # Then it added both entries, read the report column-wise with the asset's pyarrow,
    # and the index has them
    assert ran.result["entries_added"] == 2 and ran.result["entries_removed"] == 0, ran.output
    pyarrow = ran.origins["pyarrow"]
    assert pyarrow and pyarrow.startswith(str(runnable["reconcile"])), ran.origins
    assert ran.origins["av"] is None
    stored = view(world.client("dynamodb"), world.table)
    assert {s.id for s in stored.segments.values()} == {parse_key(k).id for k in keys}


def test_export_joins_the_windows_files_into_one_mp4(
    world: DeployedWorld,
    lambda_env: LambdaEnvironment,
    runnable: dict[str, Path],
    tmp_path: Path,
) -> None:
    # Given a queued export job over two back-to-back clips (MPEG-TS, then fragmented MP4)
    first = datetime(2025, 11, 29, 10, 0, tzinfo=UTC)
    keys = [
        world.put_clip(DEVICE, first, "ts"),
        world.put_clip(DEVICE, first + timedelta(seconds=1), "fmp4"),
    ]
    s3 = world.client("s3")
    now = datetime.now(UTC).isoformat()
    job = ExportJob(
        export_id="a" * 32,
        device=DEVICE,
        from_ms=int(first.timestamp() * 1000),
        to_ms=int(first.timestamp() * 1000) + 2000,
        keys=keys,
        segments=2,
        bytes=sum(s3.head_object(Bucket=world.bucket, Key=k)["ContentLength"] for k in keys),
        created_at=now,
        updated_at=now,
    )
    s3.put_object(
        Bucket=world.bucket, Key=job_key(job.export_id), Body=job.model_dump_json().encode()
    )
    # When the export function handles the queue's message for it
    message = ev.sqs_event(ev.sqs_record({"export_id": job.export_id}))
    ran = _run(lambda_env, runnable, "export", message, world)
    # Then the job is done and its clip plays every frame of both files
    assert ran.result == {"batchItemFailures": []}, ran.output
    done = json.loads(s3.get_object(Bucket=world.bucket, Key=job_key(job.export_id))["Body"].read())
    assert done["state"] == "done", done
    clip, sources = tmp_path / "clip.mp4", []
    clip.write_bytes(s3.get_object(Bucket=world.bucket, Key=clip_key(job.export_id))["Body"].read())
    for n, key in enumerate(keys):
        sources.append(tmp_path / f"{n}.bin")
        sources[-1].write_bytes(s3.get_object(Bucket=world.bucket, Key=key)["Body"].read())
    assert _frames(clip) == sum(_frames(s) for s in sources) > 0
    pyav = ran.origins["av"]
    assert pyav and pyav.startswith(str(runnable["export"])), ran.origins
    assert os.path.getsize(clip) == done["clip_bytes"]


def test_deletion_deletes_a_windows_objects_and_leaves_the_rest(
    world: DeployedWorld, lambda_env: LambdaEnvironment, runnable: dict[str, Path]
) -> None:
    # Given a versioned bucket holding three clips, and a request recorded for the window
    # of the first two (by the deletion service, with the world's tables and queue)
    s3 = world.client("s3")
    s3.put_bucket_versioning(Bucket=world.bucket, VersioningConfiguration={"Status": "Enabled"})
    first = datetime(2025, 11, 30, 8, 0, tzinfo=UTC)
    keys = [world.put_clip(DEVICE, first + timedelta(minutes=n), "ts") for n in range(3)]
    settings = Settings.from_env(world.environ())
    from_ms = int(first.timestamp() * 1000)
    request = build_deletion_jobs(settings, world.clients()).create(
        DEVICE, from_ms, from_ms + 2 * 60_000, kind="video", erase=False, created_by="tester"
    )
    # When the deletion function handles the queue's message for it
    message = ev.sqs_event(ev.sqs_record({"deletion_id": request.deletion_id}))
    ran = _run(lambda_env, runnable, "deletion", message, world)
    # Then the window's two clips are gone (behind delete markers), the third stays
    assert ran.result == {"batchItemFailures": []}, ran.output
    listed = s3.list_objects_v2(Bucket=world.bucket).get("Contents", [])
    assert [o["Key"] for o in listed] == keys[2:]
    markers = s3.list_object_versions(Bucket=world.bucket).get("DeleteMarkers", [])
    assert sorted(m["Key"] for m in markers) == sorted(keys[:2])
    # And the request is done, with both counted
    done = build_deletion_jobs(settings, world.clients()).get(request.deletion_id)
    assert done.state is DeletionState.DONE and done.deleted == 2, done
