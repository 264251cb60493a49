"""The object key contract with cameras (docs/keys.md).

The expectations here are written from docs/keys.md, not from ``keys.py``: the
strategies and the expected folders are derived independently of the module
under test, so a property failing means the module and docs/keys.md disagree.
"""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.core.keys import (
    ForeignKey,
    InvalidKey,
    InvalidKeyError,
    SegmentKey,
    ValidKey,
    classify_key,
    day_prefix,
    device_prefix,
    format_key,
    hour_prefix,
    parse_key,
    segment_id,
)

# --- the docs/keys.md rules, restated independently of keys.py -------------------

KINDS = ("video", "sensor", "analysis")
DURATION_RANGE_MS = {
    "video": (1, 3_600_000),
    "sensor": (0, 86_400_000),
    "analysis": (0, 86_400_000),
}
EXTENSIONS = {"video": ("mp4", "ts"), "sensor": ("json",), "analysis": ("json",)}
LOWER_ALNUM = string.ascii_lowercase + string.digits
KEY_SHAPE = re.compile(
    r"v1/(video|sensor|analysis)/[a-z0-9-]{1,64}/[0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{2}/"
    r"[0-9]{8}T[0-9]{6}\.[0-9]{3}Z_(0|[1-9][0-9]*)_[a-z0-9]{1,64}\.(mp4|ts|json)"
)

EXAMPLE_KEY = "v1/video/cam-001/2026/11/30/12/20261130T120000.000Z_10000_3f9a1c2e7b4d5a60.mp4"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def make_segment(**overrides: object) -> SegmentKey:
    """A valid segment (the example of docs/keys.md) with some fields replaced."""
    fields: dict[str, object] = {
        "kind": "video",
        "device": "cam-001",
        "start": utc(2026, 11, 30, 12, 0, 0),
        "duration_ms": 10_000,
        "id": "3f9a1c2e7b4d5a60",
        "ext": "mp4",
    }
    fields.update(overrides)
    return SegmentKey(**fields)  # type: ignore[arg-type]


def make_key(
    *,
    version: str = "v1",
    kind: str = "video",
    device: str = "cam-001",
    folders: str | None = None,
    start: str = "20261130T120000.000Z",
    duration: str = "10000",
    id: str = "3f9a1c2e7b4d5a60",
    ext: str = "mp4",
) -> str:
    """A key string built part by part; by default the example of docs/keys.md.

    ``folders`` defaults to the date and hour written in ``start`` (whatever it
    says), so overriding ``start`` alone tests the start rule, not the folders.
    """
    if folders is None:
        folders = f"{start[0:4]}/{start[4:6]}/{start[6:8]}/{start[9:11]}"
    return f"{version}/{kind}/{device}/{folders}/{start}_{duration}_{id}.{ext}"


def expected_folders(start: datetime) -> list[str]:
    moment = start.astimezone(UTC)
    return [f"{moment.year:04d}", f"{moment.month:02d}", f"{moment.day:02d}", f"{moment.hour:02d}"]


def assert_invalid(key: str, reason_part: str) -> None:
    # When it is classified and parsed
    classified = classify_key(key)
    with pytest.raises(InvalidKeyError) as raised:
        parse_key(key)
    # Then it is invalid, with a one-line reason naming what is wrong
    assert isinstance(classified, InvalidKey), classified
    assert classified.key == key
    assert reason_part in classified.reason, classified.reason
    assert "\n" not in classified.reason
    assert "pydantic" not in classified.reason.lower()
    if key.startswith("v1/"):
        assert raised.value.reason == classified.reason


# --- strategies ---------------------------------------------------------------

devices = st.one_of(
    st.sampled_from(LOWER_ALNUM),
    st.builds(
        lambda first, middle, last: first + middle + last,
        st.sampled_from(LOWER_ALNUM),
        st.text(alphabet=LOWER_ALNUM + "-", max_size=62),
        st.sampled_from(LOWER_ALNUM),
    ),
)
ids = st.text(alphabet=LOWER_ALNUM, min_size=1, max_size=64)
starts = st.datetimes(
    min_value=datetime(1970, 1, 1),
    max_value=datetime(2100, 12, 31, 23, 59, 59, 999_000),
    timezones=st.just(UTC),
).map(lambda moment: moment.replace(microsecond=moment.microsecond // 1000 * 1000))


@st.composite
def segments(draw: st.DrawFn) -> SegmentKey:
    kind = draw(st.sampled_from(KINDS))
    low, high = DURATION_RANGE_MS[kind]
    duration = draw(st.one_of(st.sampled_from((low, high)), st.integers(low, high)))
    return SegmentKey(
        kind=kind,
        device=draw(devices),
        start=draw(starts),
        duration_ms=duration,
        id=draw(ids),
        ext=draw(st.sampled_from(EXTENSIONS[kind])),
    )


# --- 1. round trip --------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(segment=segments())
def test_every_valid_segment_round_trips_through_its_key(segment: SegmentKey) -> None:
    # Given any valid segment
    # When its key is formatted
    key = format_key(segment)
    # Then the key has the docs/keys.md shape, parses back to the same segment, and is valid
    assert KEY_SHAPE.fullmatch(key), key
    assert parse_key(key) == segment
    assert classify_key(key) == ValidKey(segment)
    assert segment.key == key
    # And its folders are the UTC date and hour of its start, under the device and kind prefixes
    parts = key.split("/")
    assert parts[:3] == ["v1", segment.kind, segment.device]
    assert parts[3:7] == expected_folders(segment.start)
    assert key.startswith(hour_prefix(segment.kind, segment.device, segment.start))
    assert hour_prefix(segment.kind, segment.device, segment.start).startswith(
        day_prefix(segment.kind, segment.device, segment.start)
    )
    assert day_prefix(segment.kind, segment.device, segment.start).startswith(
        device_prefix(segment.kind, segment.device)
    )


def test_spec_example_parses_to_its_facts() -> None:
    # Given the example key of docs/keys.md
    # When it is parsed
    segment = parse_key(EXAMPLE_KEY)
    # Then every fact is read from the key, and formatting gives the same key back
    assert segment == make_segment()
    assert segment.start_ms == 1_796_040_000_000
    assert segment.end == utc(2026, 11, 30, 12, 0, 10)
    assert format_key(segment) == EXAMPLE_KEY


def test_start_in_another_time_zone_is_filed_under_its_utc_hour() -> None:
    # Given a segment whose start is given with a +05:30 offset (17:30 local = 12:00 UTC)
    segment = make_segment(
        start=datetime(2026, 11, 30, 17, 30, tzinfo=timezone(timedelta(hours=5.5)))
    )
    # When its key is formatted
    # Then it is the UTC key of the same instant
    assert format_key(segment) == EXAMPLE_KEY


# --- 2. invalid keys --------------------------------------------------------------

INVALID_KEYS = [
    # folders disagreeing with start
    pytest.param(
        make_key(folders="2025/11/30/12"), "folders 2025/11/30/12 disagree", id="folders-year"
    ),
    pytest.param(
        make_key(folders="2026/10/30/12"), "folders 2026/10/30/12 disagree", id="folders-month"
    ),
    pytest.param(
        make_key(folders="2026/11/29/12"), "folders 2026/11/29/12 disagree", id="folders-day"
    ),
    pytest.param(
        make_key(folders="2026/11/30/13"), "folders 2026/11/30/13 disagree", id="folders-hour"
    ),
    pytest.param(make_key(folders="2026/11/30/2"), "disagree with start", id="folders-unpadded"),
    # device
    pytest.param(make_key(device="Cam-001"), "device 'Cam-001'", id="device-upper-case"),
    pytest.param(make_key(device="cam_001"), "device 'cam_001'", id="device-underscore"),
    pytest.param(make_key(device="cam.001"), "device 'cam.001'", id="device-dot"),
    pytest.param(make_key(device="cam 001"), "device 'cam 001'", id="device-space"),
    pytest.param(make_key(device="-cam"), "device '-cam'", id="device-leading-dash"),
    pytest.param(make_key(device="cam-"), "device 'cam-'", id="device-trailing-dash"),
    pytest.param(make_key(device="a" * 65), "must be 1-64 characters", id="device-65-chars"),
    pytest.param(make_key(device=""), "empty part", id="device-empty"),
    # kind
    pytest.param(make_key(kind="audio"), "kind 'audio' is not one of", id="kind-unknown"),
    pytest.param(make_key(kind="VIDEO"), "kind 'VIDEO' is not one of", id="kind-upper-case"),
    # duration
    pytest.param(
        make_key(duration="0"), "duration 0 ms is out of range for video", id="video-duration-0"
    ),
    pytest.param(
        make_key(duration="3600001"),
        "duration 3600001 ms is out of range for video",
        id="video-too-long",
    ),
    pytest.param(
        make_key(kind="sensor", duration="86400001", ext="json"),
        "duration 86400001 ms is out of range for sensor",
        id="sensor-too-long",
    ),
    pytest.param(
        make_key(kind="analysis", duration="86400001", ext="json"),
        "duration 86400001 ms is out of range for analysis",
        id="analysis-too-long",
    ),
    pytest.param(
        make_key(duration="-1"), "duration '-1' is not a whole number", id="duration-negative"
    ),
    pytest.param(
        make_key(duration="010"), "duration '010' is not a whole number", id="duration-leading-0"
    ),
    pytest.param(
        make_key(duration="10s"), "duration '10s' is not a whole number", id="duration-not-number"
    ),
    pytest.param(make_key(duration=""), "duration '' is not a whole number", id="duration-empty"),
    # extension
    pytest.param(
        make_key(ext="json"), "extension 'json' is not allowed for video", id="video-json"
    ),
    pytest.param(
        make_key(kind="sensor", duration="0", ext="mp4"),
        "extension 'mp4' is not allowed for sensor",
        id="sensor-mp4",
    ),
    pytest.param(
        make_key(kind="analysis", ext="ts"),
        "extension 'ts' is not allowed for analysis",
        id="analysis-ts",
    ),
    pytest.param(
        make_key(ext="MP4"), "extension 'MP4' is not allowed for video", id="ext-upper-case"
    ),
    pytest.param(
        make_key().removesuffix(".mp4"), "is not <start>_<duration>_<id>.<ext>", id="ext-missing"
    ),
    # id
    pytest.param(
        make_key(id="3F9A1C2E7B4D5A60"), "id '3F9A1C2E7B4D5A60' must be", id="id-upper-case"
    ),
    pytest.param(make_key(id="a" * 65), "must be 1-64 characters of [a-z0-9]", id="id-65-chars"),
    pytest.param(make_key(id=""), "id '' must be", id="id-empty"),
    pytest.param(make_key(id="3f9a-1c2e"), "id '3f9a-1c2e' must be", id="id-dash"),
    pytest.param(make_key(id="3f9a_1c2e"), "id '3f9a_1c2e' must be", id="id-extra-underscore"),
    # parts
    pytest.param(make_key(device=".."), "'.' or '..' part", id="dot-dot-part"),
    pytest.param(make_key(folders="2026/11/./12"), "'.' or '..' part", id="dot-part"),
    pytest.param(make_key(kind=""), "empty part", id="double-slash"),
    pytest.param("v1/video/cam-001/2026/11/30/12/", "empty part", id="trailing-slash"),
    pytest.param(make_key(folders="2026/11/30"), "key has 7 parts", id="too-few-parts"),
    pytest.param(make_key(folders="2026/11/30/12/00"), "key has 9 parts", id="too-many-parts"),
    pytest.param(make_key(device="cam//001"), "key has 10 parts", id="double-slash-in-device"),
    pytest.param("v1/", "key has 2 parts", id="version-only"),
    # start
    pytest.param(
        make_key(start="20261130T120000.000"),
        "start '20261130T120000.000' is not YYYYMMDDTHHMMSS.fffZ",
        id="start-no-z",
    ),
    pytest.param(
        make_key(start="20261130T120000Z"), "is not YYYYMMDDTHHMMSS.fffZ", id="start-no-millis"
    ),
    pytest.param(
        make_key(start="20261130T120000.000000Z"),
        "is not YYYYMMDDTHHMMSS.fffZ",
        id="start-microseconds",
    ),
    pytest.param(
        make_key(start="20261130t120000.000z"), "is not YYYYMMDDTHHMMSS.fffZ", id="start-lower-case"
    ),
    pytest.param(
        make_key(start="2026-11-30T12:00:00.000Z"),
        "is not YYYYMMDDTHHMMSS.fffZ",
        id="start-iso-extended",
    ),
    pytest.param(
        make_key(start="20260230T120000.000Z"),
        "start '20260230T120000.000Z' is not a real date",
        id="start-feb-30",
    ),
    pytest.param(
        make_key(start="20261130T250000.000Z"), "is not a real date and time", id="start-hour-25"
    ),
    pytest.param(
        make_key(start="20261130T126000.000Z"), "is not a real date and time", id="start-minute-60"
    ),
    pytest.param(
        make_key(start="20261130T120060.000Z"), "is not a real date and time", id="start-second-60"
    ),
    pytest.param(
        make_key(start="20270229T120000.000Z"), "is not a real date and time", id="feb-29-2027"
    ),
    pytest.param(
        make_key(start="21000229T120000.000Z"), "is not a real date and time", id="feb-29-2100"
    ),
    pytest.param(
        # full-width digits are digits to int(), but not to the key format (and not to S3 listings)
        make_key(start="\uff12\uff10\uff12\uff16" + "1130T120000.000Z", folders="2026/11/30/12"),
        "is not YYYYMMDDTHHMMSS.fffZ",
        id="start-non-ascii-digits",
    ),
    # other versions: reported, not indexed
    pytest.param(make_key(version="v2"), "key format version 'v2' is not indexed", id="version-v2"),
    pytest.param(
        make_key(version="v10"), "key format version 'v10' is not indexed", id="version-v10"
    ),
    pytest.param("v0/whatever", "key format version 'v0' is not indexed", id="version-v0"),
]


@pytest.mark.parametrize(("key", "reason_part"), INVALID_KEYS)
def test_key_breaking_a_rule_is_invalid_with_a_clear_reason(key: str, reason_part: str) -> None:
    # Given a key that breaks one rule of docs/keys.md (built from the example by changing one part)
    # When/Then it is invalid with a reason naming the broken rule
    assert_invalid(key, reason_part)


def test_invalid_table_keys_differ_from_a_valid_key_by_one_part_only() -> None:
    # Given the factory with no overrides
    # When it builds a key
    # Then it is the example of docs/keys.md, and valid: each table entry fails for its own reason
    assert make_key() == EXAMPLE_KEY
    assert isinstance(classify_key(make_key()), ValidKey)


# --- 3. foreign keys -----------------------------------------------------------------

FOREIGN_KEYS = [
    pytest.param(
        "inventory/bucket/config/2026-11-30T01-00Z/manifest.json", id="inventory-manifest"
    ),
    pytest.param("inventory/bucket/config/data/5f1c0e9a.csv.gz", id="inventory-data"),
    pytest.param("tmp/upload.part", id="temp-file"),
    pytest.param("", id="empty"),
    pytest.param("v1", id="version-without-slash"),
    pytest.param("v1x/video/cam-001", id="v1-lookalike"),
    pytest.param("/v1/video/cam-001/2026/11/30/12/x.mp4", id="leading-slash"),
    pytest.param(EXAMPLE_KEY.removeprefix("v1/"), id="no-version"),
    # S3 keys are case-sensitive and the key format's version is lower-case 'v<digits>':
    # 'V1/' lies outside 'v1/', so it is foreign (not a version to report).
    pytest.param("V1" + EXAMPLE_KEY.removeprefix("v1"), id="upper-case-version"),
]


@pytest.mark.parametrize("key", FOREIGN_KEYS)
def test_key_outside_v1_is_foreign(key: str) -> None:
    # Given a key outside v1/
    # When it is classified
    # Then it is foreign: not indexed, not an error
    assert classify_key(key) == ForeignKey(key)


@pytest.mark.parametrize("key", FOREIGN_KEYS)
def test_parse_key_refuses_a_foreign_key(key: str) -> None:
    # Given a key outside v1/
    # When it is parsed
    # Then parse_key refuses it, saying it is not a v1 key
    with pytest.raises(InvalidKeyError, match="does not start with 'v1/'"):
        parse_key(key)


# --- 4. segment_id ----------------------------------------------------------------------


@st.composite
def id_inputs(draw: st.DrawFn) -> dict[str, object]:
    segment = draw(segments())
    return {
        "kind": segment.kind,
        "device": segment.device,
        "start": segment.start,
        "duration_ms": segment.duration_ms,
        "content": draw(st.binary(max_size=64)),
    }


def changed(inputs: dict[str, object], field: str, draw: st.DrawFn) -> dict[str, object]:
    """The same inputs with ``field`` set to a different value (drawn, never equal)."""
    current = inputs[field]
    new: object
    if field == "kind":
        new = draw(st.sampled_from([kind for kind in KINDS if kind != current]))
    elif field == "device":
        device = draw(devices)
        # a different first character keeps the device valid and makes it differ
        new = ("a" if device[0] != "a" else "b") + device[1:] if device == current else device
    elif field == "start":
        step = draw(st.integers(1, 10**12)) * draw(st.sampled_from((1, -1)))
        new = current + timedelta(milliseconds=step)  # type: ignore[operator]
    elif field == "duration_ms":
        new = current + draw(st.integers(1, 86_400_000))  # type: ignore[operator]
    else:
        content = draw(st.binary(max_size=64))
        new = content + b"\0" if content == current else content
    assert new != current
    return {**inputs, field: new}


@settings(max_examples=300, deadline=None)
@given(
    inputs=id_inputs(),
    field=st.sampled_from(("kind", "device", "start", "duration_ms", "content")),
    data=st.data(),
)
def test_segment_id_is_stable_and_changes_with_every_input(
    inputs: dict[str, object], field: str, data: st.DataObject
) -> None:
    # Given the inputs of a segment
    # When its id is derived twice
    first = segment_id(**inputs)  # type: ignore[arg-type]
    # Then it is 16 lower-case hex digits, the same each time
    assert re.fullmatch(r"[0-9a-f]{16}", first), first
    assert segment_id(**inputs) == first  # type: ignore[arg-type]
    # And changing any one input gives another id
    other = changed(inputs, field, data.draw)
    assert segment_id(**other) != first  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(inputs=id_inputs())
def test_key_built_with_segment_id_parses(inputs: dict[str, object]) -> None:
    # Given a segment whose id is derived as the uploader does
    kind = inputs["kind"]
    segment = SegmentKey(
        kind=kind,  # type: ignore[arg-type]
        device=inputs["device"],  # type: ignore[arg-type]
        start=inputs["start"],  # type: ignore[arg-type]
        duration_ms=inputs["duration_ms"],  # type: ignore[arg-type]
        id=segment_id(**inputs),  # type: ignore[arg-type]
        ext=EXTENSIONS[kind][0],  # type: ignore[index]
    )
    # When its key is parsed
    # Then it is the same segment
    assert parse_key(format_key(segment)) == segment


def test_segment_id_fields_do_not_run_into_each_other() -> None:
    # Given two inputs whose concatenation is the same ("10" + "0..." vs "100" + "...")
    start = utc(2026, 11, 30, 12)
    # When their ids are derived
    # Then they differ: each field is delimited
    assert segment_id("sensor", "cam-1", start, 10, b"0") != segment_id(
        "sensor", "cam-1", start, 100, b""
    )
    assert segment_id("video", "cam-1", start, 10, b"x") != segment_id(
        "video", "cam-", start, 10, b"1x"
    )


def test_segment_id_depends_on_the_instant_not_its_time_zone() -> None:
    # Given the same instant written in UTC and in UTC+01:00
    in_utc = utc(2026, 11, 30, 12)
    in_paris = datetime(2026, 11, 30, 13, tzinfo=timezone(timedelta(hours=1)))
    # When the ids are derived
    # Then they are equal (a retried upload keeps its key)
    assert segment_id("video", "cam-001", in_utc, 10_000, b"bytes") == segment_id(
        "video", "cam-001", in_paris, 10_000, b"bytes"
    )


# --- 5. edge cases ---------------------------------------------------------------------


def test_video_crossing_midnight_is_filed_under_its_start() -> None:
    # Given a 20 s video starting 10 s before midnight UTC on New Year's Eve
    segment = make_segment(start=utc(2026, 12, 31, 23, 59, 50), duration_ms=20_000)
    # When its key is formatted and parsed
    key = format_key(segment)
    # Then it is valid, filed under the start's year/day/hour, and ends in the next year
    assert key.split("/")[3:7] == ["2026", "12", "31", "23"]
    assert parse_key(key) == segment
    assert segment.end == utc(2027, 1, 1, 0, 0, 10)
    # And filing it under its end's folders instead is invalid
    assert_invalid(key.replace("2026/12/31/23", "2027/01/01/00"), "disagree with start")


def test_start_at_the_last_millisecond_of_the_day() -> None:
    # Given an hour-long video starting at 23:59:59.999 UTC
    segment = make_segment(start=utc(2026, 11, 30, 23, 59, 59, 999_000), duration_ms=3_600_000)
    # When its key is formatted
    key = format_key(segment)
    # Then the start keeps its milliseconds and the folders are that day's last hour
    assert key == (
        "v1/video/cam-001/2026/11/30/23/20261130T235959.999Z_3600000_3f9a1c2e7b4d5a60.mp4"
    )
    assert parse_key(key) == segment


def test_leap_day_is_a_valid_start() -> None:
    # Given a sensor reading at a point in time on 2028-02-29
    key = make_key(kind="sensor", start="20280229T060000.000Z", duration="0", ext="json")
    # When it is parsed
    segment = parse_key(key)
    # Then it is valid and filed under 2028/02/29/06
    assert segment.start == utc(2028, 2, 29, 6)
    assert segment.duration_ms == 0
    assert format_key(segment) == key
    assert key.split("/")[3:7] == ["2028", "02", "29", "06"]


@pytest.mark.parametrize(
    ("kind", "duration_ms", "ext"),
    [
        pytest.param("video", 1, "ts", id="video-shortest"),
        pytest.param("video", 3_600_000, "mp4", id="video-longest"),
        pytest.param("sensor", 0, "json", id="sensor-instant"),
        pytest.param("sensor", 86_400_000, "json", id="sensor-longest"),
        pytest.param("analysis", 0, "json", id="analysis-instant"),
        pytest.param("analysis", 86_400_000, "json", id="analysis-longest"),
    ],
)
def test_duration_bounds_are_inclusive(kind: str, duration_ms: int, ext: str) -> None:
    # Given a segment at a bound of its kind's duration range
    segment = make_segment(kind=kind, duration_ms=duration_ms, ext=ext)
    # When its key round-trips
    # Then it is valid
    assert classify_key(format_key(segment)) == ValidKey(segment)


@pytest.mark.parametrize(
    "start",
    [
        pytest.param(utc(999, 12, 31, 23, 59, 59, 999_000), id="year-999"),
        pytest.param(utc(1, 1, 1), id="year-1"),
        pytest.param(utc(9999, 12, 31, 23), id="year-9999"),
    ],
)
def test_any_year_the_model_accepts_formats_with_four_digits(start: datetime) -> None:
    # Given a segment in a year the model accepts but far from today
    segment = make_segment(start=start)
    # When its key is formatted
    key = format_key(segment)
    # Then year folder and start are four digits wide (YYYY), and the key parses back
    assert key.split("/")[3] == f"{start.year:04d}"
    assert key.split("/")[7].startswith(f"{start.year:04d}")
    assert parse_key(key) == segment


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"device": "../other"}, id="device-traversal"),
        pytest.param({"id": "../x"}, id="id-traversal"),
        pytest.param({"duration_ms": -1}, id="negative-duration"),
        pytest.param({"ext": "json"}, id="wrong-ext"),
        pytest.param({"start": datetime(2026, 11, 30, 12)}, id="naive-start"),
        pytest.param({"start": utc(2026, 11, 30, 12, 0, 0, 500)}, id="sub-millisecond-start"),
    ],
)
def test_model_refuses_what_no_key_could_express(overrides: dict[str, object]) -> None:
    # Given segment fields that break a rule
    # When the model is built
    # Then it is refused, so format_key can never write an invalid key
    with pytest.raises(ValueError):
        make_segment(**overrides)


@pytest.mark.parametrize("device", ["../other", "cam/001", "Cam", ""])
def test_prefixes_refuse_a_device_outside_the_rules(device: str) -> None:
    # Given a device parameter that could escape its prefix
    # When a listing prefix is built for it
    # Then it is refused
    with pytest.raises(InvalidKeyError, match="device"):
        device_prefix("video", device)
