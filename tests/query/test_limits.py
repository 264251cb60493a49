"""The largest answers fit AWS's limits (docs/api.md, "Limits").

A synchronous Lambda response is at most 6 MB (:data:`LAMBDA_RESPONSE_BYTES`): its size
is measured here as the serialized proxy answer the function hands back, headers and
JSON escaping included, never as the body alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.lambda_answers import CURSOR_KEY, call, iso
from tests.support.memory_read_model import MemoryReadModel, fmp4_items, memory_queries
from video_index.api import context
from video_index.app.services import ApiServices, configure
from video_index.core.audit import AuditLog
from video_index.core.service_limits import LAMBDA_RESPONSE_BYTES
from video_index.query.playlist import MAX_PLAYLIST_FILES, PlaylistSegment, build_playlist
from worlds import events as ev
from worlds.api_world import resolve
from worlds.audit_log import MemoryAuditLog

DEVICE = "cam-001"
NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
DAY = datetime(2026, 11, 28, tzinfo=UTC)  # long before the fresh window: read model only


@pytest.fixture(scope="module")
def day_of_1s_segments() -> MemoryReadModel:
    """24 hours of 1 s fragmented-MP4 segments of one device: 86,400 files."""
    store = MemoryReadModel()
    store.load(fmp4_items(DEVICE, DAY, 86_400, 1_000))
    return store


@pytest.fixture
def store(day_of_1s_segments: MemoryReadModel) -> Iterator[MemoryReadModel]:
    services = ApiServices(
        cursor_key=CURSOR_KEY,
        audit=MemoryAuditLog(),  # every page read is recorded (docs/audit.md)
        queries=memory_queries(day_of_1s_segments, NOW),
        presign=lambda key: f"https://example.invalid/{key}",
        renditions=None,
        exports=None,
    )
    configure(lambda: services)
    day_of_1s_segments.items_read = 0
    yield day_of_1s_segments


def playlist(start: datetime, end: datetime) -> tuple[dict[str, Any], int]:
    return call(f"/devices/{DEVICE}/playlist.m3u8", **{"from": iso(start), "to": iso(end)})


def test_a_day_of_1s_segments_is_refused_naming_the_window_and_the_limit(
    store: MemoryReadModel,
) -> None:
    # Given a day of 1 s segments (86,400 files, ~21 MB as one playlist)
    # When its whole day is asked for
    answer, _ = playlist(DAY, DAY + timedelta(days=1))
    # Then it is a 400 naming the window's end, the limit, and the `to` that would fit
    assert answer["statusCode"] == 400
    error = json.loads(answer["body"])["error"]
    assert error["parameter"] == "to"
    assert f"more than {MAX_PLAYLIST_FILES} video files" in error["message"]
    assert "to=2026-11-28T04:00:00.000Z" in error["message"]  # 14,400 s after midnight
    # and the day was not read whole to find out: one file past the limit was enough
    assert store.items_read <= MAX_PLAYLIST_FILES + 1


def test_the_largest_playlist_of_1s_segments_fits_a_lambda_response(
    store: MemoryReadModel,
) -> None:
    # Given a day of 1 s segments; When the longest window that holds the most files one
    # playlist lists is asked for (4 hours: 14,400 files)
    answer, size = playlist(DAY, DAY + timedelta(hours=4))
    # Then it is the whole playlist, every file with its init and byte range
    assert answer["statusCode"] == 200, answer["body"][:300]
    body = answer["body"]
    assert body.count("#EXTINF:1.000,") == MAX_PLAYLIST_FILES == 4 * 3600
    assert body.count("#EXT-X-MAP:") == MAX_PLAYLIST_FILES
    assert body.rstrip().endswith("#EXT-X-ENDLIST")
    # and the Lambda response holding it is within 6 MB
    assert size <= LAMBDA_RESPONSE_BYTES, size


def test_one_file_more_than_the_limit_is_refused(store: MemoryReadModel) -> None:
    answer, _ = playlist(DAY, DAY + timedelta(hours=4, seconds=1))
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["error"]["parameter"] == "to"


def test_the_most_files_at_their_longest_lines_fit_a_lambda_response() -> None:
    # Given the most files a playlist lists, each at the longest lines the grammar allows:
    # a 99-character key file name (9-digit duration, 64-character id), 13-digit byte
    # ranges (a 5 TB object), the longest EXTINF
    name = "20261128T000000.000Z_999999999_" + "a" * 64 + ".mp4"
    assert len(name) == 99
    big = 5 * 2**40 - 1
    uri = f"media/{name}"
    files = [
        PlaylistSegment(
            start_ms=1_795_824_000_000 + index * 1_000_000_000,
            duration_ms=999_999_999,
            uri=uri,
            byte_range=(big, big),
            map_uri=uri,
            map_range=(big, 0),
        )
        for index in range(MAX_PLAYLIST_FILES)
    ]
    # When they are one playlist, answered as the API answers it
    body = build_playlist(files)
    response = {
        "statusCode": 200,
        "headers": {"Content-Type": "application/vnd.apple.mpegurl"},
        "body": body,
        "isBase64Encoded": False,
    }
    # Then the Lambda response is within 6 MB
    size = len(json.dumps(response).encode())
    assert size <= LAMBDA_RESPONSE_BYTES, size


class _Untouchable(dict[type[Any], object]):
    """A service registry that fails the test on any lookup: a refusal must come before
    any read (read model, S3, queue). Only the request's audit record is written
    (docs/audit.md), to a log of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.used: list[str] = []
        self.audit = MemoryAuditLog()

    def get(self, kind: type[Any], default: object = None) -> object:  # type: ignore[override]
        if kind is AuditLog:
            return self.audit
        self.used.append(kind.__name__)
        raise AssertionError(f"services.{kind.__name__} was used")

    def __getitem__(self, kind: type[Any]) -> object:
        return self.get(kind)


def export(hours: float) -> tuple[dict[str, Any], _Untouchable]:
    services = _Untouchable()
    context.configure(lambda: services)
    event = ev.http_request(f"/devices/{DEVICE}/exports", method="POST")
    event["headers"]["content-type"] = "application/json"
    end = DAY + timedelta(hours=hours)
    event["body"] = json.dumps({"from": iso(DAY), "to": iso(end)})
    return resolve(event), services


def test_an_export_over_6_hours_is_refused_before_anything_is_read() -> None:
    # Given services that fail on any use (read model, S3, queue)
    # When a 7-hour export is asked for
    answer, services = export(7)
    # Then it is refused naming the window and its bound, and nothing was touched
    assert answer["statusCode"] == 400, answer["body"]
    error = json.loads(answer["body"])["error"]
    assert error["parameter"] == "to" and "6 hours" in error["message"]
    assert services.used == []


def test_a_6_hour_export_goes_on_to_read_its_window() -> None:
    # The double above would have caught a read: a legal window does reach the services
    with pytest.raises(AssertionError, match=r"services\.VideoEntries was used"):
        export(6)
