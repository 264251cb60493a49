"""Camera clocks checked against S3's (docs/operations.md#camera-clocks).

* the ingest handler, fed real S3 event shapes (worlds/events) through SQS, publishes how
  far a camera 90 s ahead runs ahead (``ClockAheadSeconds``, what the ClockAhead alarm
  watches) and nothing for a camera whose upload after a 10-minute outage is late;
* ``GET /devices/{d}`` says the same, per kind and for the camera, from the device item
  the stream consumer keeps: ahead by 88 s (90 s less its 2 s delay), or a steady 2 s
  delay despite the backlog;
* the rule's false-alarm rate on late-uploading cameras, simulated: none in 10,000 files
  with delays up to an hour; and a camera ahead is seen from its first file.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.ingest.conftest import FakeContext
from tests.support.tables import TableFactory
from video_index.core.clock import DEFAULT_CLOCK_TOLERANCE_SECONDS, add_arrivals, figures
from video_index.core.keys import SegmentKey
from video_index.handlers import ingest as ingest_handler
from worlds import events as ev
from worlds.api_world import ApiWorld, make_world

SEGMENT = timedelta(seconds=10)
DELAY = timedelta(seconds=2)
#: The true time the cameras start recording (S3's clock), and the API world's now.
T0 = datetime(2026, 11, 30, 10, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
TOLERANCE_MS = DEFAULT_CLOCK_TOLERANCE_SECONDS * 1000


def key(device: str, start: datetime) -> str:
    """A 10 s video key starting at ``start`` by the camera's own clock."""
    name = f"{int(start.timestamp()):016x}"
    return SegmentKey(
        kind="video", device=device, start=start, duration_ms=10_000, id=name, ext="ts"
    ).key


def fast_camera(files: int) -> list[tuple[str, datetime]]:
    """(key, when S3 received it) of a camera whose clock runs 90 s ahead of S3's, uploading
    each file 2 s after it ends (by the true time)."""
    ahead = timedelta(seconds=90)
    return [
        (key("cam-fast", T0 + i * SEGMENT + ahead), T0 + (i + 1) * SEGMENT + DELAY)
        for i in range(files)
    ]


def late_camera(files: int, outage: range) -> list[tuple[str, datetime]]:
    """A camera with a right clock uploading each file 2 s after its end, except during
    ``outage`` (file numbers), whose files it uploads in one go, oldest first, once the
    network is back: the last of them ten minutes after it ended (and more for the others)."""
    back = T0 + outage.stop * SEGMENT + timedelta(minutes=10)
    uploads = []
    for i in range(files):
        received = T0 + (i + 1) * SEGMENT + DELAY
        if i in outage:
            received = back + (i - outage.start) * timedelta(milliseconds=300)
        uploads.append((key("cam-late", T0 + i * SEGMENT), received))
    return sorted(uploads, key=lambda upload: upload[1])


# -- the handler's metric --------------------------------------------------------------------


def deliver(uploads: list[tuple[str, datetime]], capsys: pytest.CaptureFixture[str]) -> dict:
    """One SQS batch of the uploads' S3 notifications through the Lambda handler; its EMF."""
    records = [
        ev.sqs_record(
            ev.s3_notification(
                ev.s3_record(name, size=188, sequencer=f"{n + 1:X}", event_time=received)
            )
        )
        for n, (name, received) in enumerate(uploads)
    ]
    capsys.readouterr()
    response = ingest_handler.handler(ev.sqs_event(*records), FakeContext())  # type: ignore[arg-type]
    assert response == {"batchItemFailures": []}
    lines = capsys.readouterr().out.splitlines()
    emf: dict = [json.loads(line) for line in lines if '"_aws"' in line][-1]
    return emf


def test_a_camera_90_s_ahead_raises_the_clock_ahead_metric(
    deployed: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a batch of ten files from a camera 90 s ahead, each received 2 s after its end
    # When the ingest handler applies it
    emf = deliver(fast_camera(10), capsys)
    # Then ClockAheadSeconds says 88 s (its 90 s less the 2 s the uploads took): above the
    # alarm's 10 s, in the namespace and service the alarm watches
    assert emf["ClockAheadSeconds"] == [88.0]
    assert emf["service"] == "video-index-ingest"
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "VideoIndex"
    assert emf["ClockAheadSeconds"][0] > DEFAULT_CLOCK_TOLERANCE_SECONDS


def test_a_camera_uploading_ten_minutes_late_after_an_outage_raises_nothing(
    deployed: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a camera with a right clock whose files 20-29 waited out an outage, delivered
    # in the batch that brings them, with the live files around them
    emf = deliver(late_camera(40, range(20, 30)), capsys)
    # Then no file ended after S3 received it: ClockAheadSeconds is 0
    assert emf["ClockAheadSeconds"] == [0.0]
    # And the upload delays are published: the backlog's at least ten minutes
    delays = emf["UploadDelaySeconds"]
    assert len(delays) == 40 and min(delays) == 2.0 and max(delays) >= 600


# -- the device's answer ---------------------------------------------------------------------


@pytest.fixture
def world(aws: None, new_table: TableFactory) -> ApiWorld:
    dynamodb, table = new_table()
    return make_world(dynamodb, table, now=NOW)


def upload(world: ApiWorld, uploads: list[tuple[str, datetime]]) -> None:
    for name, received in uploads:
        world.s3.put_object(Bucket=ev.BUCKET, Key=name, Body=b"\x47" * 188)
        record = ev.s3_record(
            name, size=188, sequencer=f"{next(world.sequencer):X}", event_time=received
        )
        world.notify(record)


def test_the_device_answer_says_how_far_ahead_a_clock_runs(world: ApiWorld) -> None:
    # Given a camera 90 s ahead that uploaded for 20 minutes
    upload(world, fast_camera(120))
    # When its device is asked for
    status, body, _ = world.get("/devices/cam-fast")
    # Then its clock is ahead by 88 s, with no delay to tell (only the difference shows)
    assert status == 200
    clock = body["clock"]
    assert (clock["ahead"], clock["ahead_ms"], clock["upload_delay_ms"]) == (True, 88_000, 0)
    assert clock["files"] == 120 and body["kinds"]["video"]["clock"] == clock


def test_a_late_upload_after_an_outage_is_a_steady_delay_not_a_fast_clock(
    world: ApiWorld,
) -> None:
    # Given a camera that uploaded 2 s after each file, but a ten-minute backlog after an
    # outage, within its last hour of arrivals
    upload(world, late_camera(240, range(100, 160)))
    # When its device is asked for
    status, body, _ = world.get("/devices/cam-late")
    # Then its clock is not ahead and its upload delay is the steady 2 s
    clock = body["clock"]
    assert status == 200 and clock["ahead"] is False
    assert (clock["ahead_ms"], clock["upload_delay_ms"]) == (0, 2_000)


# -- the rule's false-alarm rate, simulated ----------------------------------------------------


def simulate(offset_ms: int, rng: random.Random, files: int) -> list[tuple[int, int]]:
    """(received, end by the key) of ``files`` 10 s files of a camera whose clock is
    ``offset_ms`` ahead (negative: behind): usually uploaded within 1–5 s, but one file in
    fifty starts an outage of up to an hour whose files all arrive when it ends."""
    arrivals = []
    outage_until = -1
    for i in range(files):
        true_end = i * 10_000 + 10_000
        if outage_until < true_end and rng.random() < 0.02:
            outage_until = true_end + rng.randrange(60_000, 3_600_000)
        received = max(true_end, outage_until) + rng.randrange(1_000, 5_000)
        arrivals.append((received, true_end + offset_ms))
    return sorted(arrivals)


def test_no_late_uploading_camera_within_the_tolerance_ever_counts_as_ahead() -> None:
    # Given 20 cameras whose clocks are within the tolerance, 500 files each (10,000),
    # uploaded late and irregularly (outages of up to an hour)
    rng = random.Random(34)
    alarms = checks = 0
    for _ in range(20):
        offset = rng.randrange(-60_000, TOLERANCE_MS + 1)
        slots: list[int] = []
        # When each arrival is added in order of receipt (as the consumer does)
        for received, end in simulate(offset, rng, 500):
            slots = add_arrivals(slots, [(received, received - end)])
            found = figures(slots)
            assert found is not None
            checks += 1
            alarms += found.is_ahead(TOLERANCE_MS)
    # Then none of the 10,000 estimates says "ahead": the false-alarm rate is 0
    assert (checks, alarms) == (10_000, 0)


def test_a_camera_ahead_is_seen_from_its_first_minute_despite_late_uploads() -> None:
    # Given a camera 90 s ahead, uploading as irregularly (outages of up to an hour, each
    # backlog arriving in a burst of a few seconds, in no order)
    rng = random.Random(35)
    by_minute: dict[int, list[tuple[int, int]]] = {}
    for received, end in simulate(90_000, rng, 3_000):
        by_minute.setdefault(received // 60_000, []).append((received, received - end))
    slots: list[int] = []
    estimates = []
    # When the arrivals of each minute of S3's time are added, and the estimate read then
    for minute in sorted(by_minute):
        slots = add_arrivals(slots, by_minute[minute])
        found = figures(slots)
        assert found is not None
        estimates.append(found)
    # Then every estimate, from the first minute on, says ahead, by at most the real 90 s:
    # a backlog ends with a file uploaded right away, whose lateness shows the clock (within
    # a burst, before that file is in, the window may hold late files only)
    assert len(estimates) > 100 and all(e.is_ahead(TOLERANCE_MS) for e in estimates)
    assert max(e.ahead_ms for e in estimates) <= 90_000
