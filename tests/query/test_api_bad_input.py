"""Bad input on every route and parameter: a 4xx naming the parameter, never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from video_index.core.table_schema import create_tables
from worlds.api_world import ApiWorld, at, make_world

GOOD_WINDOW = "from=2026-11-29T10:00:00Z&to=2026-11-29T11:00:00Z"
#: A well-formed video file name no segment has.
NAME = "20261129T100000.000Z_10000_3f9a1c2e7b4d5a60.mp4"
SEGMENT = "/devices/cam-001/segments"
ROUTES = [
    "/devices",
    "/devices/cam-001",
    "/devices/cam-001/calendar",
    "/devices/cam-001/ranges",
    "/devices/cam-001/segments",
    f"/devices/cam-001/segments/video/{NAME}",
    "/devices/cam-001/playlist.m3u8",
    "/devices/cam-001/overlays",
]


@pytest.fixture(scope="module")
def world() -> Iterator[ApiWorld]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb")
        create_tables(dynamodb, "read-model")
        w = make_world(dynamodb, "read-model")
        w.put("video", "cam-001", at(29, 10), 10_000)
        yield w


BAD = [
    # (path, query, status, parameter)
    ("/devices", "limit=0", 400, "limit"),
    ("/devices", "limit=101", 400, "limit"),
    ("/devices", "limit=ten", 400, "limit"),
    ("/devices", "cursor=%%%", 400, "cursor"),
    ("/devices", "cursor=eyJ2IjoxLCJhZnRlciI6Ii4uIn0", 400, "cursor"),
    ("/devices/Cam-001", "", 400, "device"),
    ("/devices/cam_001", "", 400, "device"),
    ("/devices/-cam", "", 400, "device"),
    ("/devices/" + "a" * 65, "", 400, "device"),
    ("/devices/cam-001/calendar", "", 400, "month"),
    ("/devices/cam-001/calendar", "month=2026-13", 400, "month"),
    ("/devices/cam-001/calendar", "month=2026-1", 400, "month"),
    ("/devices/cam-001/calendar", "month=2026-11&tz=Mars/Base", 400, "tz"),
    ("/devices/cam-001/calendar", "month=2026-11&tz=../../etc/passwd", 400, "tz"),
    ("/devices/cam-001/calendar", "month=2026-11&tz=", 400, "tz"),
    ("/devices/Cam/calendar", "month=2026-11", 400, "device"),
    ("/devices/cam-001/ranges", "", 400, "from"),
    ("/devices/cam-001/ranges", "from=2026-11-29T10:00:00Z", 400, "to"),
    ("/devices/cam-001/ranges", "from=yesterday&to=2026-11-29T11:00:00Z", 400, "from"),
    ("/devices/cam-001/ranges", "from=2026-11-29T10:00:00&to=2026-11-29T11:00:00Z", 400, "from"),
    ("/devices/cam-001/ranges", "from=2026-11-29T11:00:00Z&to=2026-11-29T10:00:00Z", 400, "to"),
    ("/devices/cam-001/ranges", "from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", 400, "to"),
    ("/devices/cam-001/segments", "", 400, "from"),
    ("/devices/cam-001/segments", f"{GOOD_WINDOW}&kind=audio", 400, "kind"),
    ("/devices/cam-001/segments", f"{GOOD_WINDOW}&kind=VIDEO", 400, "kind"),
    ("/devices/cam-001/segments", f"{GOOD_WINDOW}&limit=0", 400, "limit"),
    ("/devices/cam-001/segments", f"{GOOD_WINDOW}&limit=1001", 400, "limit"),
    ("/devices/cam-001/segments", f"{GOOD_WINDOW}&cursor=abc", 400, "cursor"),
    ("/devices/cam-001/segments", "from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z", 400, "from"),
    (f"{SEGMENT}/audio/{NAME}", "", 400, "kind"),
    (f"{SEGMENT}/VIDEO/{NAME}", "", 400, "kind"),
    (f"{SEGMENT}/{'v' * 17}/{NAME}", "", 400, "kind"),
    (f"{SEGMENT}/video/UPPER", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME.replace('.mp4', '.json')}", "", 400, "name"),
    (f"{SEGMENT}/sensor/{NAME}", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME.replace('10000', '3600001')}", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME.replace('1129', '1131')}", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME.replace('3f9a', 'a' * 65)}", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME}%2F..", "", 400, "name"),
    (f"{SEGMENT}/video/{'a' * 101}", "", 400, "name"),
    (f"{SEGMENT}/video/{NAME}", "", 404, "name"),
    (f"{SEGMENT}/3f9a1c2e7b4d5a60", "", 404, None),  # the id alone is no address
    ("/devices/cam-001/playlist.m3u8", "", 400, "from"),
    (
        "/devices/cam-001/playlist.m3u8",
        "from=2026-11-28T00:00:00Z&to=2026-11-29T00:00:01Z",
        400,
        "to",
    ),
    ("/devices/cam-001/overlays", f"{GOOD_WINDOW}&kind=video", 400, "kind"),
    ("/devices/cam-001/overlays", "from=x&to=y", 400, "from"),
    ("/nowhere", "", 404, None),
]


@pytest.mark.parametrize(("path", "query", "status", "parameter"), BAD)
def test_bad_input_names_the_parameter(
    world: ApiWorld, path: str, query: str, status: int, parameter: str | None
) -> None:
    got, body, _ = world.get(path, query)
    assert got == status, body
    assert body["error"]["parameter"] == parameter
    assert body["error"]["message"]


def test_every_route_is_covered_by_the_table() -> None:
    covered = {path.replace("Cam-001", "cam-001") for path, *_ in BAD}
    for route in ROUTES:
        prefix = route.rsplit("/", 1)[0] if route.endswith(NAME) else route
        assert any(c.startswith(prefix) for c in covered), route


names = st.sampled_from(["from", "to", "kind", "limit", "cursor", "month", "tz", "x", ""])
values = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "2026-11-29T10:00:00Z",
            "2026-11-29T10:00:00+05:30",
            "video",
            "-1",
            "1e9",
            "9999-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00Z",
            "NaN",
            "%00",
            "../",
        ]
    ),
)
paths = st.one_of(
    st.sampled_from(ROUTES),
    st.builds(lambda d: f"/devices/{quote(d, safe='')}/segments", st.text(max_size=70)),
    st.builds(
        lambda k, n: f"{SEGMENT}/{quote(k, safe='')}/{quote(n, safe='')}",
        st.one_of(st.sampled_from(["video", "sensor", "analysis"]), st.text(max_size=20)),
        st.one_of(
            st.text(max_size=110),
            st.builds(lambda i: NAME.replace("3f9a1c2e7b4d5a60", i), st.text(max_size=70)),
        ),
    ),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=paths, params=st.lists(st.tuples(names, values), max_size=6))
def test_random_query_strings_never_yield_a_5xx(
    world: ApiWorld, path: str, params: list[tuple[str, str]]
) -> None:
    query = "&".join(f"{quote(n, safe='')}={quote(v, safe='')}" for n, v in params)
    status, _, _ = world.get(path, query)
    assert status < 500
