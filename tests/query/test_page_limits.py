"""The largest page of each list route fits a Lambda response (docs/api.md, "Limits").

Sizes are measured as the serialized proxy answer the function hands back (headers and
JSON escaping included). The worst cases are built at the rules' own bounds: 1,000
entries per segments page, each joined with range annotations of 4,000 characters that
JSON escapes to 12 bytes each, and 20 tags of 32 characters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.lambda_answers import CURSOR_KEY, call, iso
from tests.support.memory_read_model import MemoryReadModel, fmp4_items, memory_queries
from video_index.annotations.model import MAX_DESCRIPTION_CHARS, MAX_TAGS, Annotation, Target
from video_index.annotations.service import AnnotationPage, Annotations
from video_index.app.services import ApiServices, configure
from video_index.core.service_limits import LAMBDA_RESPONSE_BYTES
from video_index.query.gaps import Deletion, Gap, Reason
from video_index.query.routes import MAX_JOINED_ANNOTATIONS, MAX_RANGES
from video_index.query.timeline import Timeline, TimelineAnswer
from worlds.audit_log import MemoryAuditLog

DEVICE = "cam-001"
NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
DAY = datetime(2026, 11, 28, tzinfo=UTC)


def heaviest(n: int) -> Annotation:
    """An annotation at every bound: the longest description of characters JSON escapes as
    surrogate pairs (12 bytes each), the most and longest tags, a whole-day range."""
    start = int(DAY.timestamp() * 1000)
    return Annotation(
        annotation_id=f"{n:026d}",
        device=DEVICE,
        target=Target.of_range(start, start + 86_400_000),
        description="\U0001f600" * MAX_DESCRIPTION_CHARS,
        status="approved",
        tags=tuple(f"{t:02d}" + "x" * 30 for t in range(MAX_TAGS)),
        version=1,
        created_at=iso(DAY),
        created_by="someone-with-a-long-principal-name" * 3,
        updated_at=iso(DAY),
        updated_by="someone-with-a-long-principal-name" * 3,
    )


class HeavyAnnotations(Annotations):
    """Every entry is joined with ``count`` of the heaviest annotations; every page of
    annotations or of a history is ``limit`` of them."""

    def __init__(self, count: int) -> None:  # no table: only these reads are asked for
        self.notes = [heaviest(n) for n in range(count)]

    def for_entries(self, device: str, entries: list[Any]) -> dict[str, list[Annotation]]:
        return {entry.key: list(self.notes) for entry in entries}

    def window(self, device: str, start_ms: int, end_ms: int, **query: Any) -> AnnotationPage:
        return AnnotationPage([heaviest(n) for n in range(query["limit"])], "c" * 64)

    def history(self, device: str, annotation_id: str, **query: Any) -> AnnotationPage:
        return AnnotationPage([heaviest(n) for n in range(query["limit"])], "c" * 64)


@pytest.fixture(scope="module")
def model() -> MemoryReadModel:
    store = MemoryReadModel()
    store.load(fmp4_items(DEVICE, DAY, 2_000, 1_000))
    return store


@pytest.fixture
def joined(model: MemoryReadModel) -> Iterator[None]:
    services = ApiServices(
        cursor_key=CURSOR_KEY,
        audit=MemoryAuditLog(),  # every page read is recorded (docs/audit.md)
        queries=memory_queries(model, NOW),
        presign=lambda key: f"https://example.invalid/{key}",
        renditions=None,  # type: ignore[arg-type]
        exports=None,  # type: ignore[arg-type]
        annotations=HeavyAnnotations(MAX_JOINED_ANNOTATIONS + 5),  # type: ignore[arg-type]
    )
    configure(lambda: services)
    yield


def test_the_largest_segments_page_fits_and_the_cursor_still_visits_every_entry(
    joined: None,
) -> None:
    window = {"from": iso(DAY), "to": iso(DAY + timedelta(seconds=40)), "limit": "1000"}
    seen: list[str] = []
    cursor: str | None = None
    largest = 0
    while True:
        # When the longest page is asked for, each entry joined with 25 heaviest notes
        answer, size = call(
            f"/devices/{DEVICE}/segments", **window, **({"cursor": cursor} if cursor else {})
        )
        assert answer["statusCode"] == 200
        largest = max(largest, size)
        body = json.loads(answer["body"])
        # Then each entry carries 20 of them and says there are more
        assert all(len(item["annotations"]) == MAX_JOINED_ANNOTATIONS for item in body["items"])
        assert all(item["annotations_truncated"] is True for item in body["items"])
        seen += [item["name"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    # And every answer is within 6 MB, while the pages together list the window once
    assert largest <= LAMBDA_RESPONSE_BYTES, largest
    assert largest > LAMBDA_RESPONSE_BYTES // 2  # the budget was used, not a tiny page
    assert len(seen) == len(set(seen)) == 40


@pytest.fixture
def plain(model: MemoryReadModel) -> Iterator[None]:
    services = ApiServices(
        cursor_key=CURSOR_KEY,
        audit=MemoryAuditLog(),  # every page read is recorded (docs/audit.md)
        queries=memory_queries(model, NOW),
        presign=lambda key: f"https://example.invalid/{key}",
        renditions=None,  # type: ignore[arg-type]
        exports=None,  # type: ignore[arg-type]
    )
    configure(lambda: services)
    yield


def test_the_largest_plain_segments_page_fits(plain: None) -> None:
    answer, size = call(
        f"/devices/{DEVICE}/segments",
        **{"from": iso(DAY), "to": iso(DAY + timedelta(hours=1)), "limit": "1000"},
    )
    assert answer["statusCode"] == 200
    assert len(json.loads(answer["body"])["items"]) == 1000
    assert size <= LAMBDA_RESPONSE_BYTES, size


class FixedTimeline(Timeline):
    """Answers the same timeline whatever is asked (no store: only the route is tried)."""

    def __init__(self, answer: TimelineAnswer) -> None:
        self.fixed = answer

    def answer(self, device: str, start_ms: int, end_ms: int) -> TimelineAnswer:
        return self.fixed


def timeline_answer(count: int, deleted_by: str | None = None) -> tuple[dict[str, Any], int]:
    """The ranges route answering ``count`` separate 1 s ranges a minute apart over 31 days,
    a gap before, between and after them, each ``missing`` or, given ``deleted_by``, each
    left by its own deletion request (its id, who asked and when)."""
    start = int(DAY.timestamp() * 1000)
    spans = [(start + i * 60_000, start + i * 60_000 + 1_000) for i in range(count)]
    edges = [start - 60_000, *(edge for span in spans for edge in span), start + 31 * 86_400_000]
    gaps = [
        Gap(low, high, Reason.MISSING)
        if deleted_by is None
        else Gap(low, high, Reason.DELETED, Deletion(f"{n:032x}", low, high, deleted_by, iso(DAY)))
        for n, (low, high) in enumerate(zip(edges[0::2], edges[1::2], strict=True))
    ]
    timeline = FixedTimeline(TimelineAnswer(spans, [], gaps, edges[-1]))
    services = ApiServices(
        cursor_key=CURSOR_KEY,
        audit=MemoryAuditLog(),  # every page read is recorded (docs/audit.md)
        queries=None,  # type: ignore[arg-type]
        presign=str,
        renditions=None,  # type: ignore[arg-type]
        exports=None,  # type: ignore[arg-type]
        timeline=timeline,
    )
    configure(lambda: services)
    return call(
        f"/devices/{DEVICE}/ranges", **{"from": iso(DAY), "to": iso(DAY + timedelta(days=31))}
    )


def test_the_most_ranges_fit_with_their_gaps_and_one_more_is_refused() -> None:
    # Given a timeline of MAX_RANGES separate ranges with a missing gap around each
    # When the ranges are asked for, Then they fit 6 MB, every gap with its reason
    fits, size = timeline_answer(MAX_RANGES)
    assert fits["statusCode"] == 200 and size <= LAMBDA_RESPONSE_BYTES, size
    body = json.loads(fits["body"])
    assert len(body["ranges"]) == MAX_RANGES and len(body["gaps"]) == MAX_RANGES + 1
    # And one more range is a 400 naming `to`, with the `to` that fits
    refused, _ = timeline_answer(MAX_RANGES + 1)
    error = json.loads(refused["body"])["error"]
    assert refused["statusCode"] == 400 and error["parameter"] == "to"
    last_end = DAY + timedelta(minutes=MAX_RANGES - 1, seconds=1)
    assert iso(last_end) in error["message"]


def test_gaps_told_at_length_beyond_6_mb_are_refused_with_a_to_that_fits() -> None:
    # Given the most ranges, each gap left by a request of its own by a long-named principal
    principal = "arn:aws:sts::111122223333:assumed-role/" + "r" * 64 + "/" + "s" * 64
    # When they are asked for, Then the answer would pass 6 MB: a 400 naming `to`
    refused, _ = timeline_answer(MAX_RANGES, deleted_by=principal)
    error = json.loads(refused["body"])["error"]
    assert refused["statusCode"] == 400 and error["parameter"] == "to"
    # And the `to` it proposes gives an answer that fits
    fitting_to = error["message"].rsplit("to=", 1)[1]
    ranges = int(
        (datetime.fromisoformat(fitting_to) - DAY - timedelta(seconds=1)) / timedelta(minutes=1)
    )
    fits, size = timeline_answer(ranges + 1, deleted_by=principal)
    assert fits["statusCode"] == 200 and size <= LAMBDA_RESPONSE_BYTES, size


@pytest.mark.parametrize(
    "path",
    [f"/devices/{DEVICE}/annotations", f"/devices/{DEVICE}/annotations/{'0' * 26}/history"],
)
def test_the_largest_page_of_annotations_and_of_a_history_fits(joined: None, path: str) -> None:
    # Given annotations at every bound (~57 KB each in the answer)
    # When the longest page of them (100) is asked for
    answer, size = call(
        path, **{"from": iso(DAY), "to": iso(DAY + timedelta(days=31)), "limit": "100"}
    )
    # Then all 100 answer, within 6 MB
    assert answer["statusCode"] == 200, answer["body"][:300]
    assert len(json.loads(answer["body"])["items"]) == 100
    assert LAMBDA_RESPONSE_BYTES // 2 < size <= LAMBDA_RESPONSE_BYTES, size
