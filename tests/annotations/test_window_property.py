"""The layout's promise as a property (docs/annotations.md): after any creates, moves and
deletes, one window Query lists exactly the current annotations whose target intersects the
window, each once, in start order, however it is paged; on both engines.

The expected answer is computed independently: a plain list of the current annotations
filtered by interval overlap and sorted, with no notion of anchors, carries or midnights.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.tables import make_tables
from video_index.annotations.layout import carry_midnights
from video_index.annotations.model import Annotation, Target
from video_index.annotations.service import Annotations
from video_index.annotations.store import AnnotationStore
from video_index.core.keys import SegmentKey
from video_index.core.timeunits import DAY_MS, HOUR_MS, to_epoch_ms

BASE = to_epoch_ms(datetime(2026, 11, 1, tzinfo=UTC))
SPAN = 8 * DAY_MS
MAX_RANGE = 31 * DAY_MS


class NoSegments:
    """Segments are not this test's subject: every annotated segment counts as present."""

    def locate(self, device: str, kind: str, name: str) -> SegmentKey:
        raise AssertionError("the property writes resolved targets only")

    def present(self, segments: list[SegmentKey]) -> set[str]:
        return {segment.key for segment in segments}


# Interval lengths that matter to the layout: points, under and over a day, the maximum.
lengths = st.one_of(
    st.just(0),
    st.integers(1, HOUR_MS),
    st.sampled_from([DAY_MS - 1, DAY_MS, DAY_MS + 1, 2 * DAY_MS + 3, 5 * DAY_MS, MAX_RANGE]),
    st.integers(1, 10 * DAY_MS),
)
# Starts near midnights (where the layout's edges are) or anywhere.
starts = st.one_of(
    st.integers(0, SPAN // DAY_MS).flatmap(
        lambda day: st.integers(-2, 2).map(lambda d: BASE + day * DAY_MS + d)
    ),
    st.integers(BASE, BASE + SPAN),
)
targets = st.tuples(starts, lengths)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("create"), targets),
        st.tuples(st.just("move"), st.integers(0, 50), targets),
        st.tuples(st.just("delete"), st.integers(0, 50)),
    ),
    min_size=2,
    max_size=14,
)
#: Offsets from an annotation's edge where a window's edge is interesting.
EDGE_OFFSETS = [-2 * DAY_MS, -DAY_MS - 1, -DAY_MS, -HOUR_MS, -1, 0, 1, HOUR_MS, DAY_MS]


def windows(edges: list[int]) -> st.SearchStrategy[list[tuple[int, int]]]:
    """Windows anywhere, or starting near an annotation's start or end (a window edge
    just after a target's start, a day before its end... is where a layout would fail)."""
    near = (
        st.tuples(st.sampled_from(edges), st.sampled_from(EDGE_OFFSETS)).map(sum)
        if edges
        else starts
    )
    window_lengths = st.one_of(
        st.integers(1, 3 * DAY_MS), st.sampled_from([1, HOUR_MS, DAY_MS, 31 * DAY_MS])
    )
    return st.lists(
        st.tuples(st.one_of(near, near, starts), window_lengths), min_size=2, max_size=5
    )


def _annotation(device: str, aid: str, start: int, length: int, version: int) -> Annotation:
    return Annotation(
        annotation_id=aid,
        device=device,
        target=Target(start, start + length),
        description=f"{aid} v{version}",
        status="pending",
        tags=(),
        version=version,
        created_at="2026-11-30T12:00:00.000Z",
        created_by="p",
        updated_at="2026-11-30T12:00:00.000Z",
        updated_by="p",
    )


@pytest.fixture
def service(aws: None, engine: str, request: pytest.FixtureRequest) -> Annotations:
    client, _, annotations = make_tables(engine, request)
    return Annotations(AnnotationStore(client, annotations), NoSegments())


def _expected(current: dict[str, Annotation], start: int, end: int) -> list[str]:
    hits = [
        a
        for a in current.values()
        if (
            start <= a.target.start_ms < end
            if a.target.start_ms == a.target.end_ms
            else a.target.start_ms < end and a.target.end_ms > start
        )
    ]
    return [
        a.annotation_id for a in sorted(hits, key=lambda a: (a.target.start_ms, a.annotation_id))
    ]


@settings(
    max_examples=5,  # a CI budget: `make test-deep` runs ten times as many, at random
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=operations, page=st.integers(1, 5), data=st.data())
def test_a_window_lists_exactly_the_intersecting_annotations_in_start_order(
    service: Annotations, operations: list[Any], page: int, data: st.DataObject
) -> None:
    # Given a fresh device and a history of creates, moves (PUT of a new range) and deletes
    device = f"dev-{uuid.uuid4().hex[:10]}"
    current: dict[str, Annotation] = {}
    for operation in operations:
        if operation[0] == "create":
            start, length = operation[1]
            aid = f"a{len(current):02d}{uuid.uuid4().hex[:6]}"
            created = _annotation(device, aid, start, length, 1)
            assert service.import_one(created)[0] == "created"
            current[aid] = created
        elif current:
            aid = sorted(current)[operation[1] % len(current)]
            old = current[aid]
            if operation[0] == "move":
                start, length = operation[2]
                moved = _annotation(device, aid, start, length, old.version + 1)
                assert service.import_one(moved)[0] == "updated"
                current[aid] = moved
            else:
                service.delete(device, aid, {old.version}, "p")
                del current[aid]
    edges = [edge for a in current.values() for edge in (a.target.start_ms, a.target.end_ms)]
    for start, length in data.draw(windows(edges)):
        end = start + length
        # When the window is listed, page by page
        listed: list[str] = []
        cursor = None
        while True:
            result = service.window(device, start, end, limit=page, cursor=cursor)
            assert len(result.items) <= page
            listed += [a.annotation_id for a in result.items]
            cursor = result.next_cursor
            if cursor is None:
                break
        # Then exactly the current intersecting annotations, each once, by start
        assert listed == _expected(current, start, end)
        # And each with its current version
        for aid in listed:
            assert service.current(device, aid) == current[aid]


@given(start=starts, length=lengths)
def test_carries_exist_only_for_targets_longer_than_a_day(start: int, length: int) -> None:
    midnights = carry_midnights(start, start + length)
    # Then each is a UTC midnight inside the target, at least a day before its end
    assert all(m % DAY_MS == 0 and start < m and m + DAY_MS < start + length for m in midnights)
    # And there are none for a day or less, at most 30 for 31 days
    assert len(midnights) <= 30
    if length <= DAY_MS:
        assert midnights == []
