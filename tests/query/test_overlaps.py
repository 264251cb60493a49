"""A clock that jumps back (docs/playback.md#overlapping-copies, docs/api.md#overlaps).

A camera records six 1 s MPEG-TS files from 10:00:00, uploaded as each ends; an hour later
it reboots without a time source, its clock set back an hour, and records eight more
files keyed from 10:00:00 again. Every object is kept; the ranges answer marks the six
seconds two copies cover and which copy plays; the playlist of that hour lists each
moment once — the on-time copy, then the two seconds only the late copy has — says in a
comment which files it set aside, and decodes to each moment's frames once.

And the rule itself, on entries: the copy whose key agrees with its arrival wins, a copy
that arrived before its end (a clock ahead) loses to the corrected one, an unknown
arrival ranks last, and files that merely touch are all kept.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import m3u8
import pytest

from tests.support.tables import TableFactory
from video_index.core.keys import SegmentKey, parse_key
from video_index.media.synthetic import count_frames
from video_index.query.copies import one_copy_per_moment
from video_index.query.entries import Entry
from worlds import events as ev
from worlds.api_world import ApiWorld, iso, make_world

T0 = datetime(2026, 11, 30, 10, tzinfo=UTC)
SECOND = timedelta(seconds=1)
JUMP = timedelta(hours=1)
FPS = 25  # the worlds' real clips: 1 s at 25 fps


@pytest.fixture
def jumped(aws: None, new_table: TableFactory) -> tuple[ApiWorld, list[SegmentKey], list[Any]]:
    dynamodb, table = new_table()
    world = make_world(dynamodb, table, now=T0 + 2 * JUMP)
    # Given six files recorded on time and uploaded a second after each ended
    on_time = [world.put("video", "cam-jump", T0 + i * SECOND, 1000, media="ts") for i in range(6)]
    # And, an hour later, the camera's clock set back an hour: eight files under the same
    # moments and two more, each reaching S3 an hour after the moment its key names
    late = [
        world.put(
            "video",
            "cam-jump",
            T0 + i * SECOND,
            1000,
            media="ts",
            received=T0 + (i + 1) * SECOND + JUMP,
            label="after the reboot",
        )
        for i in range(8)
    ]
    return world, on_time, late


def test_both_copies_are_kept_and_the_overlap_says_which_plays(
    jumped: tuple[ApiWorld, list[SegmentKey], list[SegmentKey]],
) -> None:
    world, on_time, late = jumped
    window = {"from": iso(T0 - SECOND), "to": iso(T0 + 20 * SECOND)}
    query = "&".join(f"{k}={v}" for k, v in window.items())
    # When the window's files are listed, Then every object is there: both copies
    status, page, _ = world.get("/devices/cam-jump/segments", query + "&kind=video")
    assert status == 200
    assert {i["name"] for i in page["items"]} == {s.filename for s in on_time + late}
    # When its ranges are asked for, Then one range, and the six seconds both copies cover
    # marked: the on-time copy plays, the one received an hour later is set aside
    status, body, _ = world.get("/devices/cam-jump/ranges", query)
    assert status == 200
    assert body["ranges"] == [{"start": iso(T0), "end": iso(T0 + 8 * SECOND)}]
    assert body["overlaps"] == [
        {
            "start": iso(T0),
            "end": iso(T0 + 6 * SECOND),
            "played": {
                "files": 6,
                "received_from": iso(T0 + 2 * SECOND),
                "received_to": iso(T0 + 7 * SECOND),
            },
            "set_aside": {
                "files": 6,
                "received_from": iso(T0 + SECOND + JUMP),
                "received_to": iso(T0 + 6 * SECOND + JUMP),
            },
        }
    ]


def test_the_playlist_of_that_hour_plays_each_moment_once_and_says_which_copy(
    jumped: tuple[ApiWorld, list[SegmentKey], list[SegmentKey]],
) -> None:
    world, on_time, late = jumped
    # When the playlist of the hour is asked for
    status, text, _ = world.get(
        "/devices/cam-jump/playlist.m3u8", f"from={iso(T0)}&to={iso(T0 + JUMP)}"
    )
    assert status == 200
    playlist = m3u8.loads(text)
    listed = [segment.uri.removeprefix("media/") for segment in playlist.segments]
    # Then it lists the six on-time files and the late copy's last two, in time order
    assert listed == [s.filename for s in on_time] + [s.filename for s in late[6:]]
    # And one comment line per file set aside names it and the file that plays instead
    comments = [line for line in text.splitlines() if line.startswith("# ")]
    assert comments == [
        f"# video-index: {aside.filename} (received {iso(aside.end + JUMP)}) overlaps "
        f"{played.filename} (received {iso(played.end + SECOND)}), which plays instead"
        for aside, played in zip(late[:6], on_time, strict=True)
    ]
    # And decoding what it lists gives each moment's frames once: 8 s at 25 fps, not 14 s
    frames = 0
    for name in listed:
        key = parse_key(f"v1/video/cam-jump/2026/11/30/10/{name}").key
        frames += count_frames(world.s3.get_object(Bucket=ev.BUCKET, Key=key)["Body"].read())
    assert frames == 8 * FPS


# -- the rule, on entries -------------------------------------------------------------------------


def entry(name: str, start_s: float, end_s: float, received_s: float | None) -> Entry:
    base = int(T0.timestamp() * 1000)
    return Entry(
        kind="video",
        device="cam",
        filename=name,
        start_ms=base + int(start_s * 1000),
        end_ms=base + int(end_s * 1000),
        size=1,
        etag="e",
        id=name,
        received_ms=None if received_s is None else base + int(received_s * 1000),
    )


@pytest.mark.parametrize(
    ("files", "played"),
    [
        # a jump back: the copy that arrived on time plays, the one an hour late does not
        ([("late", 0, 10, 3610), ("on-time", 0, 10, 12)], ["on-time"]),
        # a clock 60 s ahead set right: the copy that arrived before its end loses
        ([("ahead", 0, 10, -48), ("after", 0, 10, 11)], ["after"]),
        # ahead both (beyond the tolerance): the least ahead plays
        ([("far", 0, 10, -100), ("near", 0, 10, -20)], ["near"]),
        # an arrival unknown ranks last; ties go to the name
        ([("b", 0, 10, None), ("a", 0, 10, 11)], ["a"]),
        ([("b", 0, 10, None), ("a", 0, 10, None)], ["a"]),
        # touching, or sharing a few frames (within the 1 s tolerance): all kept
        ([("x", 0, 10, 11), ("y", 10, 20, 21), ("z", 19.96, 30, 31)], ["x", "y", "z"]),
        # a 1 s file entirely on moments kept is set aside, though 1 s is the tolerance
        ([("kept", 0, 10, 11), ("covered", 4, 5, 3605)], ["kept"]),
        # partly over: more than the tolerance shared, set aside whole
        ([("first", 0, 10, 11), ("half", 5, 15, 3615), ("next", 10, 20, 21)], ["first", "next"]),
    ],
)
def test_which_copy_plays(
    files: list[tuple[str, float, float, float | None]], played: list[str]
) -> None:
    choice = one_copy_per_moment([entry(*f) for f in files], tolerance_ms=1000)
    assert [e.filename for e in choice.kept] == played
    assert {e.filename for e, _ in choice.set_aside} == {f[0] for f in files} - set(played)
