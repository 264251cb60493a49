"""The largest legal share answer fits AWS's limits (docs/shares.md, docs/api.md "Limits"):
an hour of 1-second fragmented-MP4 files (3,600, each with its init and byte range, and
the key in each of its two URIs) is one playlist within a Lambda's 6 MB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import boto3

from tests.support.lambda_answers import CURSOR_KEY, call, iso
from tests.support.memory_read_model import MemoryReadModel, fmp4_items, memory_queries
from video_index.app.services import ApiServices, configure
from video_index.aws.shares import ShareStore
from video_index.core.service_limits import LAMBDA_RESPONSE_BYTES
from video_index.core.table_schema import create_tables
from video_index.shares.service import Shares
from worlds.audit_log import MemoryAuditLog

DEVICE = "cam-001"
NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
HOUR = datetime(2026, 11, 28, 10, tzinfo=UTC)


def test_an_hour_of_1s_segments_is_one_share_playlist_within_6_mb(aws: None) -> None:
    # Given an hour of 1 s fMP4 files (and the seconds around it)
    store = MemoryReadModel()
    store.load(fmp4_items(DEVICE, HOUR - timedelta(seconds=5), 3_610, 1_000))
    dynamodb = boto3.client("dynamodb")
    create_tables(dynamodb, "read-model", shares="shares")
    shares = Shares(
        ShareStore(dynamodb, "shares"),
        max_window_s=3600,
        max_lifetime_s=7 * 24 * 3600,
        presign_seconds=900,
        clock=NOW.timestamp,
    )
    services = ApiServices(
        cursor_key=CURSOR_KEY,
        queries=memory_queries(store, NOW),
        presign=lambda key: f"https://example.invalid/{key}",
        renditions=None,  # type: ignore[arg-type]
        exports=None,  # type: ignore[arg-type]
        shares=shares,
        audit=MemoryAuditLog(),  # each use of a share is recorded (docs/audit.md)
    )
    configure(lambda: services)
    # And a share of the longest window a share may show
    share, secret = shares.create(DEVICE, *_window(), 3600, "otto")
    # When its playlist is asked for, as the Lambda answers it
    answer, size = call(f"/shares/{share.share_id}/playlist.m3u8", key=secret)
    # Then it lists the hour's 3,600 files, each with its map and the key
    assert answer["statusCode"] == 200, answer["body"][:300]
    body = answer["body"]
    assert body.count("#EXTINF:1.000,") == 3600
    assert body.count("#EXT-X-MAP:") == 3600
    assert body.count(f"key={secret}") == 7200
    # within 6 MB
    assert size <= LAMBDA_RESPONSE_BYTES, size
    assert parse_qs(urlsplit("?" + body.splitlines()[-2].split("?", 1)[1]).query)["key"] == [secret]


def _window() -> tuple[int, int]:
    start = int(HOUR.timestamp() * 1000)
    assert iso(HOUR) == "2026-11-28T10:00:00.000Z"
    return start, start + 3_600_000
