"""Two people editing one annotation never silently overwrite each other
(docs/annotations.md#concurrency-if-match-is-exact), as properties over many
interleavings of real threads, on both engines.

Hypothesis draws how many editors there are and how long each one dawdles before
reading, between reading and writing, and after a refusal; the editors then run in
threads released together by a barrier. A second barrier holds every editor after its
first read until all have read, so the race is proven, not hoped for: every editor read
version 1 before anyone wrote (a run whose threads never overlapped would fail it). The
store is the real adapter on moto (or on the endpoint of
``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT``); only the pauses and that barrier are injected.

The design relies on what DynamoDB guarantees of one request: a transaction's
conditions are checked and its writes applied atomically
(tests/aws/test_dynamodb_contract.py states it from AWS's documentation). An engine
over HTTP is expected to keep that promise under concurrent requests; moto, in-process,
does not (two threads can pass
the same condition, and its tables are plain dicts). On moto each request is
therefore made atomic (:class:`AtomicRequests`), so the threads still interleave
between requests — read, pause, write — which is where this product's logic lives.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.tables import make_tables
from video_index.annotations.model import Annotation, Draft
from video_index.annotations.service import Annotations
from video_index.annotations.store import AnnotationStore
from video_index.core.errors import PreconditionFailed
from video_index.core.keys import SegmentKey

FROM_MS = 1_796_036_400_000  # 2026-11-30T10:20:00Z
RUNS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
pauses = st.floats(0, 0.004)


class NoSegments:
    def locate(self, device: str, kind: str, name: str) -> SegmentKey:
        raise AssertionError("range targets only")

    def present(self, segments: list[SegmentKey]) -> set[str]:
        return set()


class AtomicRequests:
    """A DynamoDB client whose requests run one at a time (what DynamoDB promises per
    request, and moto in-process lacks)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, operation: str) -> Any:
        call = getattr(self._client, operation)

        def atomic(**kwargs: Any) -> Any:
            with self._lock:
                return call(**kwargs)

        return atomic


class Dawdling(AnnotationStore):
    """The real adapter, pausing after each read by what the reading thread drew; each
    editor's first read waits at :attr:`first_reads` until every editor has read."""

    pause_after_read: dict[str, float]
    first_reads: threading.Barrier | None = None
    #: The version each editor saw on its first read.
    seen: dict[str, int]

    def latest_version(self, device: str, annotation_id: str) -> dict[str, Any] | None:
        item = super().latest_version(device, annotation_id)
        name = threading.current_thread().name
        if self.first_reads is not None and name.startswith("editor-") and name not in self.seen:
            self.seen[name] = Annotation.of_attributes(item).version if item else 0
            self.first_reads.wait(10)
        time.sleep(self.pause_after_read.get(name, 0.0))
        return item

    def overlap(self, editors: int) -> None:
        """From now on, no editor writes before every one of them has read."""
        self.first_reads = threading.Barrier(editors)
        self.seen = {}


@pytest.fixture
def service(aws: None, engine: str, request: pytest.FixtureRequest) -> Annotations:
    client, _, table = make_tables(engine, request)
    store = Dawdling(AtomicRequests(client) if engine == "moto" else client, table)
    store.pause_after_read = {}
    store.seen = {}
    return Annotations(store, NoSegments())


def _draft(text: str) -> Draft:
    return Draft(text, "pending", (), from_ms=FROM_MS, to_ms=FROM_MS + 60_000)


def _run(editors: int, work: Any) -> None:
    barrier = threading.Barrier(editors)
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(10)
            work(index)
        except BaseException as exc:  # surfaced below, not lost in the thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,), name=f"editor-{i}") for i in range(editors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures


@RUNS
@given(editors=st.integers(2, 4), before=st.lists(pauses, min_size=4, max_size=4), data=st.data())
def test_of_editors_holding_the_same_etag_exactly_one_wins_and_the_rest_get_412(
    service: Annotations, editors: int, before: list[float], data: st.DataObject
) -> None:
    # Given an annotation at version 1, read by every editor (ETag "1")
    device = f"dev-{uuid.uuid4().hex[:10]}"
    created = service.create(device, _draft("original"), "author")
    store = service.store
    assert isinstance(store, Dawdling)
    store.pause_after_read = {
        f"editor-{i}": data.draw(pauses, label=f"pause after read {i}") for i in range(editors)
    }
    store.overlap(editors)
    outcomes: dict[int, str] = {}
    lock = threading.Lock()

    # When they all save their own text with that ETag at once
    def edit(index: int) -> None:
        time.sleep(before[index])
        try:
            service.replace(device, created.annotation_id, _draft(f"editor {index}"), {1}, "e")
            outcome = "saved"
        except PreconditionFailed:
            outcome = "412"
        with lock:
            outcomes[index] = outcome

    _run(editors, edit)
    # Then they overlapped: every editor read version 1 before anyone wrote
    assert store.seen == {f"editor-{i}": 1 for i in range(editors)}
    # And exactly one saved and every other one was told 412
    winners = [i for i, outcome in outcomes.items() if outcome == "saved"]
    assert len(winners) == 1, outcomes
    assert sorted(outcomes) == list(range(editors))
    # And the current version is the winner's, version 2, right after the original
    current = service.current(device, created.annotation_id)
    assert (current.version, current.description) == (2, f"editor {winners[0]}")
    history = service.history(device, created.annotation_id).items
    assert [(v.version, v.description) for v in history] == [
        (1, "original"),
        (2, f"editor {winners[0]}"),
    ]


@RUNS
@given(editors=st.integers(2, 4), data=st.data())
def test_editors_who_reread_after_412_all_land_in_the_history_nothing_lost(
    service: Annotations, editors: int, data: st.DataObject
) -> None:
    # Given an annotation, and editors who on a 412 read it again and retry
    device = f"dev-{uuid.uuid4().hex[:10]}"
    created = service.create(device, _draft("original"), "author")
    store = service.store
    assert isinstance(store, Dawdling)
    store.pause_after_read = {
        f"editor-{i}": data.draw(pauses, label=f"pause after read {i}") for i in range(editors)
    }
    store.overlap(editors)
    refusals = [0] * editors
    saved_as: dict[int, int] = {}  # version -> the editor whose save made it
    lock = threading.Lock()

    def edit(index: int) -> None:
        while True:
            seen = service.current(device, created.annotation_id).version
            try:
                saved = service.replace(
                    device, created.annotation_id, _draft(f"editor {index}"), {seen}, "e"
                )
                with lock:
                    saved_as[saved.version] = index
                return
            except PreconditionFailed:
                refusals[index] += 1
                assert refusals[index] < 50, "an editor never got through"

    # When they all edit at once
    _run(editors, edit)
    # Then they overlapped: every editor first read version 1 before anyone wrote
    assert store.seen == {f"editor-{i}": 1 for i in range(editors)}
    # And every edit is a version of its own, in one unbroken line after the original
    assert sorted(saved_as) == list(range(2, editors + 2))
    # And the history lists them oldest first (docs/annotations.md), each as its editor saved it
    history = service.history(device, created.annotation_id).items
    assert [(v.version, v.description) for v in history] == [
        (1, "original"),
        *((version, f"editor {saved_as[version]}") for version in sorted(saved_as)),
    ]
    # And the current version is the last one written
    current = service.current(device, created.annotation_id)
    assert current == history[-1]
