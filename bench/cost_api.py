"""A typical day of reading one camera, through the API's resolver (bench/cost.py).

What a person does in the viewer (docs/viewer.md) on a day they look at a camera: open
the page (the devices, the camera), its month's calendar and holds, one day (its ranges,
its activity, the strip of one frame per hour), and play an hour of it (the hour's
playlist, every file it names fetched through the media route's redirect, the overlays
twice). Each request is one API Gateway request and one invocation of the function
API Gateway routes it to (the media function for the media paths, the API function for
the rest), timed around the resolver; each redirect is one S3 GET by the player, of the
file's bytes at the camera's bitrate (footage read back: priced with the footage, not
the index).

The month's calendar and the day's ranges read a month of hour items: the sample's
hours are copied (by the bench, uncounted) to every hour of the month before the day
starts, so those reads read what a camera recording all month leaves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from bench.cost_meter import Invocations
from bench.cost_world import START, Sample, World
from video_index.app.routes import media_paths, whole_app
from video_index.app.services import build_api_services, configure
from video_index.core.layout import RUNS, bucket_hour_ms, bucket_pk, bucket_sk
from video_index.local.http_api import build_event

#: The two parts of the day, counted apart: the pages (once a day) and the playback
#: (per hour played).
API: Final = "api"
PLAYBACK: Final = "playback"
#: The function API Gateway routes a path to.
MEDIA: Final = "media"
TZ: Final = "Europe/Berlin"
GENERATION: Final = 1
#: Frames of the strip under a day (one per hour with footage).
STRIP: Final = 24
#: Overlays read while an hour plays (a window of 30 minutes, then the next).
OVERLAYS: Final = 2


@dataclass
class ApiDay:
    #: Requests by route.
    requests: dict[str, int] = field(default_factory=dict)
    #: API Gateway requests by part of the day.
    gateway: dict[str, int] = field(default_factory=dict)
    #: Invocations by (part of the day, function).
    invocations: dict[tuple[str, str], Invocations] = field(default_factory=dict)
    #: The player's GETs of presigned URLs, and the footage seconds they read.
    player_gets: int = 0
    played_seconds: int = 0


def typical_day(world: World, sample: Sample) -> ApiDay:
    """One person's day on the first camera of the sample (see the module documentation)."""
    device = f"{sample.camera.name}-00"
    _fill_month(world, device)
    now = (sample.end + timedelta(hours=12)).timestamp()
    day = ApiDay(played_seconds=sample.minutes * 60)
    path = f"/devices/{device}"
    midnight = START.replace(hour=0)
    whole_day = {"from": midnight.isoformat(), "to": (midnight + timedelta(days=1)).isoformat()}
    pages: list[tuple[str, dict[str, str]]] = [
        ("/devices", {}),
        (path, {}),
        (f"{path}/calendar", {"month": START.strftime("%Y-%m"), "tz": TZ}),
        (f"{path}/holds", {"from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z"}),
        (f"{path}/ranges", whole_day),
        (f"{path}/activity", {**whole_day, "step": "PT15M", "tz": TZ}),
        (f"{path}/annotations", whole_day),
    ]
    step = sample.minutes * 60 // STRIP
    pages += [
        (
            f"{path}/frame",
            {"t": (START + timedelta(seconds=i * step + 1)).isoformat(), "width": "192"},
        )
        for i in range(STRIP)
    ]
    caller = _Caller(world, day, now)
    caller.serve(API)
    for target, query in pages:
        caller.get(target, query)
    caller.serve(PLAYBACK)
    hour = {"from": START.isoformat(), "to": (START + timedelta(hours=1)).isoformat()}
    playlist = caller.get(f"{path}/playlist.m3u8", hour)
    for uri in _uris(playlist["body"]):
        target, _, raw = f"{path}/{uri}".partition("?")
        answer = caller.get(target, dict(parse_qsl(raw)))
        day.player_gets += answer["statusCode"] == 302
    for i in range(OVERLAYS):
        window = [START + timedelta(minutes=30 * i), START + timedelta(minutes=30 * (i + 1))]
        caller.get(f"{path}/overlays", {"from": window[0].isoformat(), "to": window[1].isoformat()})
    return day


class _Caller:
    """Requests of one part of the day: API Gateway's event, the routed function's
    resolver over that part's counted clients, timed as the function's invocation."""

    def __init__(self, world: World, day: ApiDay, now: float) -> None:
        self.world, self.day, self.now = world, day, now
        self.media = set(media_paths())
        self.part = API

    def serve(self, part: str) -> None:
        services = build_api_services(
            self.world.settings, self.world.clients(part), clock=lambda: self.now
        )
        configure(lambda: services)
        self.part = part

    def get(self, target: str, query: dict[str, str]) -> dict[str, Any]:
        raw = urlencode(query)
        event = build_event(
            method="GET",
            target=f"{target}?{raw}" if raw else target,
            headers=[("host", "api")],
            body=b"",
            source_ip="198.51.100.7",
            now=self.now,
        )
        route = _route(target)
        function = MEDIA if route in self.media else API
        began = time.perf_counter()
        answer: dict[str, Any] = whole_app().resolve(event, None)
        self.day.invocations.setdefault((self.part, function), Invocations()).add(
            time.perf_counter() - began
        )
        if answer["statusCode"] >= 400:
            raise RuntimeError(
                f"GET {target}?{raw} answered {answer['statusCode']}: {answer.get('body')}"
            )
        self.day.requests[route] = self.day.requests.get(route, 0) + 1
        self.day.gateway[self.part] = self.day.gateway.get(self.part, 0) + 1
        return answer


def _route(target: str) -> str:
    """The route a path is served by, in OpenAPI form (``/devices/{device}/...``)."""
    parts = target.split("/")
    if len(parts) > 2 and parts[1] == "devices":
        parts[2] = "{device}"
    if len(parts) > 4 and parts[3] == "media":
        parts[4] = "{file}"
    return "/".join(parts)


def _uris(playlist: str) -> list[str]:
    """Every URI a player fetches: each file's map (once per distinct map) and media."""
    uris: list[str] = []
    for line in playlist.splitlines():
        if line.startswith("#EXT-X-MAP:"):
            uri = line.split('URI="', 1)[1].split('"', 1)[0]
            if uri not in uris[-1:]:
                uris.append(uri)
        elif line and not line.startswith("#"):
            uris.append(line)
    return uris


def _fill_month(world: World, device: str) -> None:
    """Copy the device's hour items to every hour of the sample's month (coverage moved
    with them), so the month reads a camera recording all month."""
    client, table = world.admin.dynamodb, world.settings.table
    first = START.replace(day=1, hour=0)
    hours = [first + timedelta(hours=h) for h in range(30 * 24)]
    items = client.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": bucket_pk(GENERATION, device)}},
    )["Items"]
    copies: list[dict[str, Any]] = []
    for item in items:
        kind, hour_ms = bucket_hour_ms(item["sk"]["S"])
        for moment in hours:
            shift = int(moment.timestamp() * 1000) - hour_ms
            if shift == 0:
                continue
            copy = dict(item)
            copy["sk"] = {"S": bucket_sk(kind, hour_ms + shift)}
            if RUNS in item:
                copy[RUNS] = {"L": [{"N": str(int(v["N"]) + shift)} for v in item[RUNS]["L"]]}
            copies.append({"PutRequest": {"Item": copy}})
    for offset in range(0, len(copies), 25):
        client.batch_write_item(RequestItems={table: copies[offset : offset + 25]})
