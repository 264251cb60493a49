"""What a deletion request covers, and the prefixes its job lists (docs/deletion.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from video_index.core.errors import BadInput
from video_index.core.keys import KINDS, MAX_DURATION_MS, MIN_DURATION_MS, SegmentKey, format_key
from video_index.core.timeunits import DAY_MS, HOUR_MS, from_epoch_ms
from video_index.deletion.model import (
    MAX_DELETION_WINDOW_MS,
    Window,
    check_kind,
    check_window,
    window_ranges,
)

#: 2000-01-01 .. 2030-01-01, in ms.
EPOCHS = st.integers(946_684_800_000, 1_893_456_000_000)


@st.composite
def windows(draw: st.DrawFn) -> tuple[int, int]:
    start = draw(EPOCHS)
    length = draw(
        st.one_of(
            st.integers(1, 2 * HOUR_MS), st.integers(1, MAX_DELETION_WINDOW_MS), st.just(DAY_MS)
        )
    )
    return start, start + length


@st.composite
def segments(draw: st.DrawFn, around: tuple[int, int]) -> SegmentKey:
    kind = draw(st.sampled_from(KINDS))
    duration = draw(st.integers(MIN_DURATION_MS[kind], MAX_DURATION_MS[kind]))
    low, high = around
    start = draw(st.integers(low - MAX_DURATION_MS[kind] - HOUR_MS, high + HOUR_MS))
    return SegmentKey(
        kind=kind,
        device="cam-1",
        start=from_epoch_ms(start),
        duration_ms=duration,
        id="a1",
        ext="mp4" if kind == "video" else "json",
    )


def _meets(segment: SegmentKey, low: int, high: int) -> bool:
    """Independent reference: the half-open interval meets the window (an instant counts
    where it lies)."""
    start = int((segment.start - from_epoch_ms(0)) / timedelta(milliseconds=1))
    end = start + segment.duration_ms
    return low <= start < high if start == end else start < high and end > low


@settings(max_examples=150, deadline=None)
@given(data=st.data(), window=windows())
def test_every_covered_key_lies_in_exactly_one_listed_range(
    data: st.DataObject, window: tuple[int, int]
) -> None:
    # Given a window and the key ranges its job lists (one per kind)
    low, high = window
    ranges = window_ranges("cam-1", KINDS, low, high)
    assert [r.kind for r in ranges] == list(KINDS)
    # Then every segment the window covers is in the range of its kind, and in no other
    for _ in range(20):
        segment = data.draw(segments(window))
        key = format_key(segment)
        covered = Window("x", "cam-1", low, high, None, False).covers(segment)
        assert covered == _meets(segment, low, high)
        if covered:
            assert [r.kind for r in ranges if r.holds(key)] == [segment.kind], key
    # And a range holds no key of another device
    other = data.draw(segments(window)).model_copy(update={"device": "cam-10"})
    assert not any(r.holds(format_key(other)) for r in ranges)


def test_a_point_in_time_reading_counts_where_it_lies() -> None:
    window = Window("x", "cam-1", 1000, 2000, None, False)
    point = SegmentKey(
        kind="sensor", device="cam-1", start=from_epoch_ms(2000), duration_ms=0, id="a", ext="json"
    )
    assert not window.covers(point)
    assert window.covers(point.model_copy(update={"start": from_epoch_ms(1000)}))


def test_a_window_covers_only_its_device_and_kind() -> None:
    video = SegmentKey(
        kind="video", device="cam-1", start=from_epoch_ms(0), duration_ms=10, id="a", ext="mp4"
    )
    assert Window("x", "cam-1", 0, 10, "video", False).covers(video)
    assert not Window("x", "cam-1", 0, 10, "sensor", False).covers(video)
    assert not Window("x", "cam-2", 0, 10, None, False).covers(video)


@pytest.mark.parametrize(
    ("low", "high", "parameter"),
    [(10, 10, "to"), (10, 5, "to"), (0, MAX_DELETION_WINDOW_MS + 1, "to")],
)
def test_reversed_empty_and_over_long_windows_are_refused(
    low: int, high: int, parameter: str
) -> None:
    with pytest.raises(BadInput) as refused:
        check_window(low, high)
    assert refused.value.parameter == parameter


def test_an_unknown_kind_is_refused_naming_it() -> None:
    assert check_kind(None) is None and check_kind("") is None
    with pytest.raises(BadInput) as refused:
        check_kind("audio")
    assert refused.value.parameter == "kind"
