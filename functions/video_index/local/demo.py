"""``video-index local --demo``: simulated cameras upload through the uploader into the
local stack; once the read model has caught up, the terminal shows what the API
answers — a month calendar per camera, today's continuous ranges, totals — and the
URLs to try with curl.

Everything goes the production way: the uploader's conditional PUTs into S3 (moto
server), S3 event notifications into SQS, the Lambda-like worker into DynamoDB (moto server),
and the HTTP API on 127.0.0.1.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from urllib.parse import urlencode

from rich.console import Console
from rich.table import Table

from video_index.local.tables import calendar_table, devices_table, duration, parse_instant
from video_index.media.synthetic import ContainerName, synthetic_clip
from video_index.upload import upload_segment

CATCH_UP_TIMEOUT_SECONDS: Final = 180.0


#: The container each demo camera records in, as the uploader stores it: cam-entrance
#: MPEG-TS, cam-parking fragmented MP4 (the uploader's default for MP4), cam-dock
#: progressive MP4 uploaded as-is (a camera that does not use the uploader: its video is
#: played through renditions).
CONTAINERS: Final[dict[str, tuple[ContainerName, bool]]] = {
    "cam-entrance": ("ts", False),
    "cam-parking": ("mp4", False),
    "cam-dock": ("mp4", True),
}


@dataclass(frozen=True)
class Upload:
    kind: str
    device: str
    start: datetime
    duration_ms: int


def camera_day(now: datetime) -> Iterator[Upload]:
    """Three cameras over the last two days and today, with realistic gaps and overlaps."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for days_ago in (2, 1):
        # entrance: 4 minutes of 10 s segments each morning, a 40 s reboot in the middle
        base = today - timedelta(days=days_ago) + timedelta(hours=8)
        for i in range(24):
            if 12 <= i < 16:
                continue
            yield Upload("video", "cam-entrance", base + timedelta(seconds=10 * i), 10_000)
        for i in range(4):
            yield Upload("sensor", "cam-entrance", base + timedelta(minutes=i), 0)
    # parking: across UTC midnight into today, 250 ms gaps (one continuous range)
    start = today - timedelta(minutes=1)
    for i in range(12):
        yield Upload("video", "cam-parking", start + timedelta(milliseconds=10_250 * i), 10_000)
    for i in range(2):
        yield Upload("analysis", "cam-parking", start + timedelta(minutes=i), 60_000)
    # dock: motion clips of the last hours, one overlapping the previous one (relative to
    # now, so the camera has video whatever the time of day the demo runs)
    for minutes_ago in (8 * 60, 4 * 60 + 30, 4 * 60 + 29, 45):
        clip = (now - timedelta(minutes=minutes_ago)).replace(second=0, microsecond=0)
        yield Upload("video", "cam-dock", clip, 20_000)
    # entrance again: the last two minutes before now (served from S3 until ingested)
    for i in range(12):
        recent = now - timedelta(minutes=2) + timedelta(seconds=10 * i)
        yield Upload("video", "cam-entrance", recent.replace(microsecond=0), 10_000)


def content(upload: Upload) -> tuple[bytes, str, bool]:
    """The file a camera uploads: (bytes, extension, upload as-is).

    Video is real H.264: a moving test pattern with the camera's name and the wall-clock
    time of every frame burned in, in the camera's container.
    """
    if upload.kind != "video":
        body = {"device": upload.device, "at": upload.start.isoformat(), "value": 21.5}
        return json.dumps(body).encode(), "json", False
    container, as_is = CONTAINERS[upload.device]
    clip = synthetic_clip(
        seconds=upload.duration_ms / 1000,
        container=container,
        label=upload.device,
        start=upload.start,
    )
    return clip, "ts" if container == "ts" else "mp4", as_is


def run_demo(stack: Any, console: Console, now: datetime | None = None) -> int:
    now = now or datetime.now(UTC)
    endpoints = stack.endpoints
    api, bucket = endpoints["api"], endpoints["bucket"]
    s3 = stack.clients.s3
    uploads = list(camera_day(now))
    started = time.monotonic()
    with console.status(f"cameras uploading {len(uploads)} segments through the uploader…"):
        statuses: dict[str, int] = {}
        first_file: tuple[bytes, str, bool] | None = None
        for upload in uploads:
            body, ext, as_is = content(upload)
            first_file = first_file or (body, ext, as_is)
            result = upload_segment(
                s3,
                bucket,
                body,
                kind=upload.kind,
                device=upload.device,
                start=upload.start,
                duration_ms=upload.duration_ms,
                ext=ext,
                as_is=as_is,
            )
            statuses[result.status] = statuses.get(result.status, 0) + 1
        # a camera retrying an upload it already made: idempotent
        first = uploads[0]
        assert first_file is not None
        body, ext, as_is = first_file
        retry = upload_segment(
            s3,
            bucket,
            body,
            kind=first.kind,
            device=first.device,
            start=first.start,
            duration_ms=first.duration_ms,
            ext=ext,
            as_is=as_is,
        )
    console.print(
        f"uploaded {statuses.get('uploaded', 0)} objects in {time.monotonic() - started:.1f} s; "
        f"a retried upload came back [bold]{retry.status}[/bold]"
    )
    expected = _count_by_device(uploads)
    with console.status("waiting for the read model to catch up (S3 → SQS → ingest)…"):
        caught_up = _wait_for(api, expected, stack)
    if not caught_up:
        console.print("[red]the read model did not catch up in time[/red]")
        return 1
    console.print(f"read model caught up {time.monotonic() - started:.1f} s after the first upload")
    for device in sorted(expected):
        _print_calendar(console, api, device, now)
    _print_ranges(console, api, sorted(expected), now)
    _print_totals(console, api, sorted(expected))
    _print_urls(console, api, now)
    return 0


def _count_by_device(uploads: list[Upload]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for upload in uploads:
        counts[upload.device] = counts.get(upload.device, 0) + 1
    return counts


def _get(api: str, path: str, **params: str) -> Any:
    url = f"{api}{path}" + (f"?{urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _wait_for(api: str, expected: dict[str, int], stack: Any) -> bool:
    deadline = time.monotonic() + CATCH_UP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        totals = {
            device: sum(k["segments"] for k in _get(api, f"/devices/{device}")["kinds"].values())
            for device in expected
        }
        if totals == expected and _queue_empty(stack):
            return True
        time.sleep(0.5)
    return False


def _queue_empty(stack: Any) -> bool:
    attributes = stack.clients.sqs.get_queue_attributes(
        QueueUrl=stack.endpoints["queue_url"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return all(int(value) == 0 for value in attributes.values())


def _print_calendar(console: Console, api: str, device: str, now: datetime) -> None:
    answer = _get(api, f"/devices/{device}/calendar", month=f"{now:%Y-%m}", tz="UTC")
    console.print(calendar_table(answer))


def _print_ranges(console: Console, api: str, devices: list[str], now: datetime) -> None:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    table = Table(title=f"today's continuous video ranges ({day:%Y-%m-%d}, UTC; gaps ≤ 1 s merge)")
    for column in ("device", "from", "to", "length"):
        table.add_column(column)
    for device in devices:
        answer = _get(
            api,
            f"/devices/{device}/ranges",
            **{"from": _iso(day), "to": _iso(day + timedelta(days=1))},
        )
        for span in answer["ranges"]:
            start, end = parse_instant(span["start"]), parse_instant(span["end"])
            table.add_row(device, _short(start), _short(end), duration(end - start))
    console.print(table)


def _print_totals(console: Console, api: str, devices: list[str]) -> None:
    items = [_get(api, f"/devices/{device}") for device in devices]
    console.print(devices_table(items, title="totals per device and kind"))


def _print_urls(console: Console, api: str, now: datetime) -> None:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    window = urlencode({"from": _iso(now - timedelta(hours=1)), "to": _iso(now)})
    midnight = urlencode(
        {"from": _iso(day - timedelta(hours=1)), "to": _iso(day + timedelta(hours=1))}
    )
    # The entrance camera's last two minutes, played from the first.
    recent = now - timedelta(seconds=110)
    viewer = urlencode(
        {"device": "cam-entrance", "date": f"{recent:%Y-%m-%d}", "tz": "UTC", "t": _iso(recent)}
    )
    console.print("\n[bold]Open the viewer[/bold] in a browser (no sign-in locally):")
    console.print(f"  {api}/viewer?{viewer}", markup=False, highlight=False, soft_wrap=True)
    console.print("\n[bold]Try the API[/bold] (no auth locally):")
    for path in (
        "/devices",
        f"/devices/cam-entrance/calendar?month={now:%Y-%m}&tz=Europe/Berlin",
        f"/devices/cam-parking/ranges?{midnight}",
        f"/devices/cam-entrance/segments?{window}&limit=5",
        f"/devices/cam-entrance/playlist.m3u8?{window}",
        "/openapi.json",
    ):
        console.print(f"  curl -s '{api}{path}'", markup=False, highlight=False, soft_wrap=True)
    console.print("\n[bold]Play[/bold] (MPEG-TS, fragmented MP4, progressive MP4 via renditions):")
    hours = urlencode({"from": _iso(now - timedelta(hours=9)), "to": _iso(now)})
    for device in ("cam-entrance", "cam-parking", "cam-dock"):
        window_of = midnight if device == "cam-parking" else hours
        console.print(
            f"  ffplay '{api}/devices/{device}/playlist.m3u8?{window_of}'",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(moment: datetime) -> str:
    return f"{moment:%m-%d %H:%M:%S}"
