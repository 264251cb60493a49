"""Silent cameras (docs/operations.md#silent-cameras), with an injected clock: the pure rule
against hand-computed moments, and the check over a real read model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.tables import TableFactory
from video_index.aws.store import ReadModelStore
from video_index.core.errors import ConfigurationError
from video_index.core.silence import per_kind, silent_since_ms
from video_index.ops.silence import check, silent_devices
from worlds.api_world import ApiWorld, make_world

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
THRESHOLDS = {"video": 300, "sensor": 900, "analysis": 0}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def item(device: str, **last: datetime) -> dict[str, Any]:
    """A device item as the stream consumer keeps it: count and last start per kind."""
    values: dict[str, Any] = {"sk": device}
    for kind, moment in last.items():
        values[f"n:{kind}"] = 3
        values[f"l:{kind}"] = ms(moment)
    return values


def test_a_kind_is_silent_once_its_threshold_has_passed_since_its_last_start() -> None:
    last = {"video": ms(T0)}
    # Given video files that last started at T0
    # When it is 5 minutes later exactly, then 5 minutes and 1 ms later
    at_threshold = silent_since_ms(last, ms(T0 + timedelta(minutes=5)), THRESHOLDS)
    after = silent_since_ms(last, ms(T0 + timedelta(minutes=5)) + 1, THRESHOLDS)
    # Then it is not silent yet at the threshold, silent since T0 + 5 min after it
    assert at_threshold is None
    assert after == ms(T0 + timedelta(minutes=5))


# (the kinds' last starts, minutes after T0 at which it is asked) → silent since, minutes
# after T0, worked out by hand: video falls silent 5 min after its last start, sensor 15.
DEVICE_SILENCE = [
    # video and sensor both at T0: silent once the sensor is too (T0 + 15), not before
    ({"video": 0, "sensor": 0}, 10, None),
    ({"video": 0, "sensor": 0}, 16, 15),
    # a sensor that stopped a day ago while the video is recent: not a silent camera
    ({"video": 58, "sensor": -24 * 60}, 60, None),
    # both stopped: since the later of the two silences (video's, T0 + 35)
    ({"video": 30, "sensor": -24 * 60}, 60, 35),
    # analysis has no check (0): it neither keeps a camera loud nor makes it silent
    ({"video": 0, "analysis": 59}, 60, 5),
    ({"analysis": 0}, 60, None),
]


@pytest.mark.parametrize(("starts", "asked", "since"), DEVICE_SILENCE)
def test_a_device_is_silent_when_every_kind_it_uploads_is(
    starts: dict[str, int], asked: int, since: int | None
) -> None:
    last = {kind: ms(T0 + timedelta(minutes=m)) for kind, m in starts.items()}
    found = silent_since_ms(last, ms(T0 + timedelta(minutes=asked)), THRESHOLDS)
    assert found == (None if since is None else ms(T0 + timedelta(minutes=since)))


def test_retired_devices_kinds_without_threshold_and_kinds_never_seen_are_never_silent() -> None:
    later = ms(T0 + timedelta(days=3))
    assert silent_since_ms({"video": ms(T0)}, later, THRESHOLDS, retired=True) is None
    assert silent_since_ms({"analysis": ms(T0)}, later, THRESHOLDS) is None
    assert silent_since_ms({"video": None}, later, THRESHOLDS) is None


def test_the_check_lists_silent_devices_oldest_first_and_skips_the_retired() -> None:
    # Given four cameras: one uploading, two silent, one retired and silent
    items = [
        item("cam-live", video=T0 + timedelta(minutes=59)),
        item("cam-late", video=T0 + timedelta(minutes=30)),
        item("cam-gone", video=T0, sensor=T0 - timedelta(minutes=10)),
        item("cam-old", video=T0 - timedelta(days=30)),
    ]
    # When the check runs at T0 + 1 h
    report = silent_devices(items, ms(T0 + timedelta(hours=1)), THRESHOLDS, {"cam-old"})
    # Then it checked all four and names the two silent ones, oldest silence first
    assert report.checked == 4
    assert report.silent == [
        ("cam-gone", ms(T0 + timedelta(minutes=5))),
        ("cam-late", ms(T0 + timedelta(minutes=35))),
    ]


@pytest.mark.parametrize(
    "raw", ['{"video": -1}', '{"audio": 5}', '["video"]', "video=5", '{"video": true}']
)
def test_a_bad_per_kind_setting_is_refused_naming_it(raw: str) -> None:
    with pytest.raises(ConfigurationError, match="VIDEO_INDEX_SILENT_AFTER_SECONDS"):
        per_kind(raw, THRESHOLDS, "VIDEO_INDEX_SILENT_AFTER_SECONDS")


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table, now=T0 + timedelta(hours=1))


def test_the_check_over_the_read_model_follows_uploads_and_retirement(world: ApiWorld) -> None:
    # Given a camera that uploaded at T0 and one that uploads still, one retired
    world.put("video", "cam-a", T0, 10_000)
    world.put("video", "cam-b", T0 + timedelta(minutes=58), 10_000)
    world.put("video", "cam-c", T0, 10_000)
    world.drain()
    store = ReadModelStore(world.dynamodb, world.table, tombstone_days=35)
    store.set_retired("cam-c", True)
    clock = (T0 + timedelta(hours=1)).timestamp
    # When the check runs at T0 + 1 h
    report = check(store, clock, THRESHOLDS)
    # Then cam-a is silent since T0 + 5 min, and the API says the same
    assert report.checked == 3
    assert report.silent == [("cam-a", ms(T0 + timedelta(minutes=5)))]
    status, page, _ = world.get("/devices")
    assert status == 200
    flags = {d["device"]: (d["silent_since"], d["retired"]) for d in page["items"]}
    assert flags == {
        "cam-a": ("2026-11-30T12:05:00.000Z", False),
        "cam-b": (None, False),
        "cam-c": (None, True),
    }
    # And once cam-c is active again, it is silent too
    store.set_retired("cam-c", False)
    assert [d for d, _ in check(store, clock, THRESHOLDS).silent] == ["cam-a", "cam-c"]


def test_the_cli_retires_and_unretires_a_camera(aws: None) -> None:
    # Given a read model on moto
    import boto3

    from video_index.cli.main import main
    from video_index.core.layout import devices_pk
    from video_index.core.table_schema import create_tables

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_tables(client, "cli-read-model")
    store = ReadModelStore(client, "cli-read-model", tombstone_days=35)
    # that knows two cameras (their device items, as the aggregation keeps them)
    for name in ("cam-gone", "cam-back"):
        client.put_item(
            TableName="cli-read-model",
            Item={"pk": {"S": devices_pk(1)}, "sk": {"S": name}, "n:video": {"N": "1"}},
        )
    # When a camera is retired, another retired then made active again
    assert main(["device", "retire", "cam-gone", "--table", "cli-read-model"]) == 0
    assert main(["device", "retire", "cam-back", "--table", "cli-read-model"]) == 0
    assert main(["device", "unretire", "cam-back", "--table", "cli-read-model"]) == 0
    # Then only the first is in the retired set, and a bad name is refused as usage
    item = store.get("control", "retired") or {}
    assert set(item["devices"]) == {"cam-gone"}
    assert main(["device", "retire", "Bad Name!", "--table", "cli-read-model"]) == 2
    # And a name the read model does not know is refused as a likely typo (nothing
    # written), unless --new-device says it is meant
    assert main(["device", "retire", "cam-gonne", "--table", "cli-read-model"]) == 2
    assert set((store.get("control", "retired") or {})["devices"]) == {"cam-gone"}
    new = ["device", "retire", "cam-next", "--new-device", "--table", "cli-read-model"]
    assert main(new) == 0
    assert set((store.get("control", "retired") or {})["devices"]) == {"cam-gone", "cam-next"}
