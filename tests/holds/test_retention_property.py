"""The retention job against an independent reference, with a crash anywhere (docs/holds.md).

Given random segments of random devices and kinds, random holds and a random
``now``, when the job runs with a fault injected after k bucket calls and then
runs again, then: at every point every held key and every unexpired key is
present, and after the second run every expired unheld key is gone. The
reference works on the generated numbers, not on keys or the planner.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.core.keys import SegmentKey, format_key
from video_index.holds.job import RetentionJob

DAY_MS = 86_400_000
BASE_MS = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
RETENTION = {"video": 3, "sensor": 5, "analysis": 5}
Seg = tuple[str, str, int, int]
Held = tuple[str, tuple[int, int]]


class Crash(Exception):
    pass


@dataclass(frozen=True)
class Obj:
    key: str


class FakeBucket:
    """Keys in memory; folders and listings as S3 answers them; a fault after ``budget``
    calls."""

    def __init__(self, keys: set[str], budget: int | None = None) -> None:
        self.keys = keys
        self.budget = budget
        self.calls = 0

    def _spend(self) -> None:
        self.calls += 1
        if self.budget is not None and self.calls > self.budget:
            raise Crash()

    def folders(self, prefix: str) -> Iterator[str]:
        self._spend()
        names = {k[len(prefix) :].split("/")[0] for k in self.keys if k.startswith(prefix)}
        names = {n for n in names if n and any(k.startswith(f"{prefix}{n}/") for k in self.keys)}
        return iter(sorted(names))

    def list(self, prefix: str, start_after: str | None = None) -> Iterator[Obj]:
        self._spend()
        return iter([Obj(k) for k in sorted(self.keys) if k.startswith(prefix)])

    def delete(self, keys: Sequence[str]) -> None:
        self._spend()
        assert len(keys) <= 1000
        self.keys.difference_update(keys)


class FakeHolds:
    """Holds by device; ``late`` holds appear after ``appear_after`` reads (written while
    the job runs)."""

    def __init__(
        self, holds: dict[str, list[tuple[int, int]]], late: list[Held], appear_after: int
    ) -> None:
        self.holds = holds
        self.late = late
        self.appear_after = appear_after
        self.reads = 0

    def current(self) -> dict[str, list[tuple[int, int]]]:
        merged = {d: list(w) for d, w in self.holds.items()}
        if self.reads > self.appear_after:
            for device, window in self.late:
                merged.setdefault(device, []).append(window)
        return merged

    def held(self, device: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
        self.reads += 1
        return [w for w in self.current().get(device, []) if w[0] < end_ms and w[1] > start_ms]


segments = st.lists(
    st.tuples(
        st.sampled_from(["cam-a", "cam-b"]),
        st.sampled_from(["video", "sensor"]),
        st.integers(0, 12 * 24 * 60),  # start, minutes after BASE
        st.integers(1, 60),  # duration, minutes
    ),
    min_size=1,
    max_size=25,
    unique_by=lambda s: (s[0], s[1], s[2]),
)
windows = st.lists(
    st.tuples(
        st.sampled_from(["cam-a", "cam-b"]),
        st.integers(0, 12 * 24 * 60),
        st.integers(1, 3 * 24 * 60),
    ).map(lambda h: (h[0], (BASE_MS + h[1] * 60_000, BASE_MS + (h[1] + h[2]) * 60_000))),
    max_size=3,
)


def key_of(device: str, kind: str, start_min: int, minutes: int) -> str:
    start = datetime.fromtimestamp((BASE_MS + start_min * 60_000) / 1000, UTC)
    ext = "mp4" if kind == "video" else "json"
    return format_key(
        SegmentKey(
            kind=kind, device=device, start=start, duration_ms=minutes * 60_000, id="a1", ext=ext
        )
    )


@settings(max_examples=150, deadline=None)
@given(
    segs=segments,
    holds=windows,
    late=windows,
    now_min=st.integers(0, 16 * 24 * 60),
    budget=st.integers(0, 40),
    appear_after=st.integers(0, 6),
)
def test_a_crash_between_any_two_steps_loses_nothing_held_and_keeps_nothing_unheld(
    segs: list[Seg],
    holds: list[Held],
    late: list[Held],
    now_min: int,
    budget: int,
    appear_after: int,
) -> None:
    # Given segments, holds (some written while the job runs) and a clock
    now_ms = BASE_MS + now_min * 60_000
    by_device: dict[str, list[tuple[int, int]]] = {}
    for device, window in holds:
        by_device.setdefault(device, []).append(window)
    all_holds = holds + late

    def reference(seg: Seg, windows: list[Held]) -> str:
        device, kind, start_min, minutes = seg
        start = BASE_MS + start_min * 60_000
        end = start + minutes * 60_000
        if end > now_ms - RETENTION[kind] * DAY_MS:
            return "young"
        if any(d == device and start < w[1] and end > w[0] for d, w in windows):
            return "held"
        return "expired"

    keys = {key_of(*s) for s in segs}
    bucket = FakeBucket(set(keys), budget)
    source = FakeHolds(by_device, late, appear_after)
    clock = lambda: now_ms / 1000  # noqa: E731

    # When the job crashes after `budget` calls
    with contextlib.suppress(Crash):
        RetentionJob(bucket, source, RETENTION, clock).run()

    # Then nothing held at the start and nothing young is gone
    for s in segs:
        if reference(s, holds) in ("young", "held"):
            assert key_of(*s) in bucket.keys, s

    # When it runs again to the end (the late holds are written by now)
    source.appear_after = -1
    bucket.budget = None
    RetentionJob(bucket, source, RETENTION, clock).run()

    # Then held and young keys remain, every other expired key is gone
    for s in segs:
        verdict = reference(s, holds)
        late_verdict = reference(s, all_holds)
        if verdict == "expired" and late_verdict == "expired":
            assert key_of(*s) not in bucket.keys, s
        if verdict in ("young", "held"):
            assert key_of(*s) in bucket.keys, s


def test_a_hold_written_while_the_job_runs_protects_the_next_delete_batch() -> None:
    # Given one expired segment and no hold when the job reads holds first
    key = key_of("cam-a", "video", 0, 10)
    bucket = FakeBucket({key})
    late = [("cam-a", (BASE_MS, BASE_MS + 60_000))]
    source = FakeHolds({}, late, appear_after=1)  # appears after the first read
    now_ms = BASE_MS + 10 * DAY_MS

    # When the job runs
    report = RetentionJob(bucket, source, RETENTION, lambda: now_ms / 1000).run()

    # Then the hold read right before the delete kept the key
    assert key in bucket.keys
    assert report.deleted == 0
    assert source.reads == 2


def test_the_job_lists_only_days_before_the_cutoff() -> None:
    # Given a young and an old day of one device
    old, young = key_of("cam-a", "video", 0, 10), key_of("cam-a", "video", 9 * 24 * 60, 10)
    bucket = FakeBucket({old, young})
    now_ms = BASE_MS + 10 * DAY_MS

    # When the job runs
    report = RetentionJob(bucket, FakeHolds({}, [], 0), RETENTION, lambda: now_ms / 1000).run()

    # Then only the old day was listed and deleted
    assert bucket.keys == {young}
    assert report.days_listed == 1
    assert (report.deleted, report.delete_requests) == (1, 1)
