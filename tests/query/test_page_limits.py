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
from video_index.query.queries import Queries
from video_index.query.routes import MAX_JOINED_ANNOTATIONS, MAX_RANGES

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


def test_the_most_ranges_fit_and_one_more_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a query layer answering MAX_RANGES (then one more) separate ranges of 31 days
    start = int(DAY.timestamp() * 1000)
    spans = [(start + i * 60_000, start + i * 60_000 + 1_000) for i in range(MAX_RANGES + 1)]

    class Ranges(Queries):
        def __init__(self, count: int) -> None:  # no store: only ranges are asked for
            self.count = count

        def ranges(self, device: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
            return spans[: self.count]

    def answer(count: int) -> tuple[dict[str, Any], int]:
        services = ApiServices(
            cursor_key=CURSOR_KEY,
            queries=Ranges(count),  # type: ignore[arg-type]
            presign=str,
            renditions=None,  # type: ignore[arg-type]
            exports=None,  # type: ignore[arg-type]
        )
        configure(lambda: services)
        return call(
            f"/devices/{DEVICE}/ranges",
            **{"from": iso(DAY), "to": iso(DAY + timedelta(days=31))},
        )

    # When the most ranges an answer lists are asked for, Then they fit 6 MB
    fits, size = answer(MAX_RANGES)
    assert fits["statusCode"] == 200 and size <= LAMBDA_RESPONSE_BYTES, size
    assert len(json.loads(fits["body"])["ranges"]) == MAX_RANGES
    # And one more is a 400 naming `to`, with the `to` that fits
    refused, _ = answer(MAX_RANGES + 1)
    error = json.loads(refused["body"])["error"]
    assert refused["statusCode"] == 400 and error["parameter"] == "to"
    assert iso(datetime.fromtimestamp(spans[MAX_RANGES - 1][1] / 1000, UTC)) in error["message"]


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
