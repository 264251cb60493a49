"""The viewer end to end (docs/viewer.md): a person's journey in a real Chromium, local stack.

The data is the demo's (``video_index.local.demo.camera_day``: three cameras, real H.264 with
the wall-clock time burned in, MPEG-TS, fragmented and progressive MP4, sensor and analysis
sidecars) placed around the last Sunday of October 2026, when Europe/Berlin leaves daylight
saving time: its 25 October has 25 hours. One browser; the journey:

1. open the viewer (first-load weight measured), see the devices;
2. for each device, the calendar marks exactly the days the API says — in the browser's zone
   (America/Los_Angeles) and, after choosing it, in Europe/Berlin (the DST change);
3. open 25 October with the keyboard: the 25-hour timeline shows exactly the API's ranges;
4. click the middle of a range: the video's wall-clock time advances across a file boundary
   and past a gap (time to first frame measured); the sensor reading of that moment shows;
5. add an annotation and see it listed;
6. a second person (another browser context, 360 px wide, a pasted token) opens the same
   moment by deep link and starts editing; the first person saves a change; the second
   person's save meets a 412, the page shows both versions, the second person chooses.

No console error and no failed request, except the one 412 the conflict is about. Each screen
is saved to ``tests/artifacts/viewer/`` for review, with the figures (``figures.json``).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Request, Response
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.local_stack import RunningStack, iso, start_local, stop
from video_index.local.demo import camera_day, content
from video_index.upload import upload_segment

#: The demo's "now": the Monday after Europe/Berlin's DST change (Sunday 25 October, 01:00 UTC).
NOW = datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
MONTH = "2026-10"
BROWSER_ZONE = "America/Los_Angeles"
DST_ZONE = "Europe/Berlin"
DST_DAY = "2026-10-25"
DEVICE = "cam-entrance"  # MPEG-TS, 10 s files, a 40 s gap every morning
#: What the page's player was doing, for a failure message.
PLAYER_STATE = """() => {
  const video = document.querySelector('[data-testid=video]');
  const buffered = [];
  for (let i = 0; i < video.buffered.length; i++) {
    buffered.push([video.buffered.start(i), video.buffered.end(i)]);
  }
  return {
    clock: document.querySelector('[data-testid=clock]').dataset.time,
    currentTime: video.currentTime, paused: video.paused, readyState: video.readyState,
    buffered, segment: video.dataset.segment, samples: (window.__samples || []).slice(-20),
    status: document.querySelector('#status')?.textContent,
  };
}"""
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "viewer"
#: The viewer holds an instantaneous reading for a minute (docs/viewer.md).
POINT_HOLD = timedelta(seconds=60)


@dataclass
class Watch:
    """Everything the pages of the journey said that a person would not want to see."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)

    def attach(self, page: Page, name: str) -> None:
        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.console_errors.append(f"{name}: {message.text}")

        def on_response(response: Response) -> None:
            if response.status >= 400:
                self.failed_requests.append(
                    f"{name}: {response.status} {response.request.method} {response.url}"
                )

        page.on("console", on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"{name}: {error}"))
        page.on(
            "requestfailed",
            lambda request: self.failed_requests.append(
                f"{name}: {request.failure} {request.method} {request.url}"
            ),
        )
        page.on("response", on_response)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    # Given a stack whose API clock starts at NOW (`--now`: what is fresh follows the demo's
    # day, not today's date, so its last minutes are merged from S3 on every run)
    local_stack = start_local(
        tmp_path_factory.mktemp("journey"), "--visibility-timeout", "2", "--now", iso(NOW)
    )
    try:
        yield from _uploaded(local_stack)
    finally:
        stop(local_stack.process)


def _uploaded(local_stack: RunningStack) -> Iterator[RunningStack]:
    # Given the demo's cameras uploaded through the uploader around NOW, and indexed
    uploads = list(camera_day(NOW))
    s3 = local_stack.client("s3")
    expected: dict[str, int] = {}
    for upload in uploads:
        body, ext, as_is = content(upload)
        upload_segment(
            s3,
            local_stack.ready["bucket"],
            body,
            kind=upload.kind,
            device=upload.device,
            start=upload.start,
            duration_ms=upload.duration_ms,
            ext=ext,
            as_is=as_is,
        )
        expected[upload.device] = expected.get(upload.device, 0) + 1
    deadline = time.monotonic() + 60
    for device, count in expected.items():
        while True:
            status, body = local_stack.get(f"/devices/{device}")
            total = sum(k["segments"] for k in body["kinds"].values()) if status == 200 else 0
            if total == count:
                break
            assert time.monotonic() < deadline, f"{device} never indexed: {body}"
            time.sleep(0.2)
    yield local_stack


# --- reading the page ---------------------------------------------------------------------------


def marked_days(page: Page) -> dict[str, bool]:
    """``day-YYYY-MM-DD`` → its ``data-has-video``, as the calendar shows them."""
    found: dict[str, bool] = page.eval_on_selector_all(
        "[data-testid^=day-]",
        "els => Object.fromEntries(els.map(e => "
        "[e.dataset.testid.slice(4), e.dataset.hasVideo === 'true']))",
    )
    return found


def api_days(stack: RunningStack, device: str, zone: str) -> dict[str, bool]:
    status, body = stack.get(f"/devices/{device}/calendar", month=MONTH, tz=zone)
    assert status == 200, body
    return {day["date"]: day["has_video"] for day in body["days"]}


def local_day(zone: str, day: str) -> tuple[datetime, datetime]:
    """[start, end) of a local day, computed with Python's zoneinfo (not the page's code)."""
    tz = ZoneInfo(zone)
    first = date.fromisoformat(day)
    start = datetime(first.year, first.month, first.day, tzinfo=tz)
    following = first + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=tz)
    return start.astimezone(UTC), end.astimezone(UTC)


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def recorded_days(device: str, zone: str) -> set[str]:
    """The local days of the month on which ``device`` started recording video, from the
    uploads themselves and Python's zoneinfo (independent of the API and of the page)."""
    return {
        upload.start.astimezone(ZoneInfo(zone)).date().isoformat()
        for upload in camera_day(NOW)
        if upload.device == device and upload.kind == "video"
    }


def open_device(page: Page, device: str, zone: str) -> None:
    page.click(f"[data-testid=device-{device}]")
    page.wait_for_selector(
        f"[data-testid=calendar][data-device={device}][data-tz='{zone}'][data-month='{MONTH}']"
    )


def shot(page: Page, name: str, shots: list[str]) -> None:
    path = ARTIFACTS / f"{len(shots) + 1:02d}-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    shots.append(str(path))


def fake_jwt(subject: str) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    expires = int(time.time()) + 3600
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part({'sub': subject, 'exp': expires})}.x"


def sign_in(page: Page, *, name: str, token: str | None = None) -> None:
    page.click("[data-testid=sign-in]")
    page.wait_for_selector("[data-testid=sign-in-dialog][open]")
    if token:
        page.fill("#token-input", token)
    page.click("[data-testid=sign-in-dialog] summary")
    page.fill("#user-input", name)
    page.click("[data-testid=sign-in-save]")
    page.wait_for_selector("[data-testid=sign-in-dialog]:not([open])", state="attached")


def moment_entries(stack: RunningStack, moment: datetime) -> set[str]:
    """The sensor/analysis entries the viewer must show at ``moment``: those whose interval
    holds it, and the latest instantaneous reading of each kind within a minute before it."""
    window = {
        "from": iso(moment - timedelta(minutes=10)),
        "to": iso(moment + timedelta(minutes=10)),
    }
    status, body = stack.get(f"/devices/{DEVICE}/overlays", limit="1000", **window)
    assert status == 200, body
    shown: set[str] = set()
    latest: dict[str, tuple[datetime, str]] = {}
    for item in body["items"]:
        start, end = parse(item["start"]), parse(item["end"])
        if end > start and start <= moment < end:
            shown.add(item["id"])
        elif (
            end == start
            and timedelta(0) <= moment - start <= POINT_HOLD
            and (item["kind"] not in latest or latest[item["kind"]][0] < start)
        ):
            latest[item["kind"]] = (start, item["id"])
    return shown | {entry_id for _, entry_id in latest.values()}


# --- the journey --------------------------------------------------------------------------------


def test_a_person_finds_a_day_plays_it_and_annotates_it(
    demo: RunningStack, browser: Browser
) -> None:
    started = time.monotonic()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots: list[str] = []
    watch = Watch()
    viewer = demo.ready["viewer"]
    api = demo.ready["api"]
    assert viewer == f"{api}/viewer"

    # Given a person whose browser is in Los Angeles, on a laptop
    alice: BrowserContext = browser.new_context(
        viewport={"width": 1280, "height": 900}, timezone_id=BROWSER_ZONE
    )
    page = alice.new_page()
    watch.attach(page, "alice")
    finished: list[Request] = []
    page.on("requestfinished", lambda request: finished.append(request))

    # When the viewer opens
    page.goto(viewer)
    page.wait_for_selector("body[data-ready=true]")
    first_load = sum(
        r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in finished
    )
    first_load_requests = len(finished)
    # Then it lists the devices with their totals, in the browser's zone
    for device in ("cam-dock", "cam-entrance", "cam-parking"):
        assert page.is_visible(f"[data-testid=device-{device}]")
    assert page.eval_on_selector("[data-testid=zone]", "e => e.value") == BROWSER_ZONE
    entrance = page.inner_text(f"[data-testid=device-{DEVICE}]")
    _, totals = demo.get(f"/devices/{DEVICE}")
    video_bytes = totals["kinds"]["video"]["bytes"]
    assert f"{video_bytes / 1e6:.2f} MB" in entrance or f"{video_bytes / 1e6:.1f} MB" in entrance
    shot(page, "devices", shots)

    # And for every device the calendar marks exactly the days the API says, in both zones
    for zone in (BROWSER_ZONE, DST_ZONE):
        if zone == DST_ZONE:
            page.fill("[data-testid=zone]", DST_ZONE)
            page.press("[data-testid=zone]", "Enter")
        for device in ("cam-dock", "cam-parking", DEVICE):
            open_device(page, device, zone)
            assert page.inner_text("[data-testid=month]").startswith("October 2026")
            expected = api_days(demo, device, zone)
            assert marked_days(page) == expected, (device, zone)
            assert {day for day, has in expected.items() if has} == recorded_days(device, zone)
    # (the zones see different days: the parking camera's night is the 25th in Los Angeles,
    # the 26th in Berlin)
    assert recorded_days("cam-parking", BROWSER_ZONE) != recorded_days("cam-parking", DST_ZONE)
    assert "tz=Europe%2FBerlin" in page.url and f"device={DEVICE}" in page.url
    shot(page, "calendar-berlin", shots)

    # When the person moves from the 24th to the 25th with the keyboard and opens it
    page.focus("[data-testid=day-2026-10-24]")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.testid") == f"day-{DST_DAY}"
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=range]")
    # Then the timeline is the zone's 25-hour day, with exactly the API's ranges
    start, end = local_day(DST_ZONE, DST_DAY)
    assert end - start == timedelta(hours=25)
    assert page.eval_on_selector_all(".hours .tick", "ts => ts.length") == 25
    status, ranges = demo.get(f"/devices/{DEVICE}/ranges", **{"from": iso(start), "to": iso(end)})
    assert status == 200
    expected_ranges = [(r["start"], r["end"]) for r in ranges["ranges"]]
    shown_ranges = page.eval_on_selector_all(
        "[data-testid=range]", "els => els.map(e => [e.dataset.start, e.dataset.end])"
    )
    assert [tuple(r) for r in shown_ranges] == expected_ranges
    assert len(expected_ranges) == 2  # the morning's reboot gap splits it
    assert f"date={DST_DAY}" in page.url
    shot(page, "day", shots)

    # When the person plays from the middle of the first range, fast
    first_start, first_end = (parse(t) for t in expected_ranges[0])
    second_start = parse(expected_ranges[1][0])
    middle = first_start + (first_end - first_start) / 2
    page.select_option("[data-testid=speed]", "16")
    page.evaluate(
        """() => {
          window.__samples = [];
          const clock = document.querySelector('[data-testid=clock]');
          const video = document.querySelector('[data-testid=video]');
          new MutationObserver(() => window.__samples.push(
            [clock.dataset.time, video.dataset.segment || ''])
          ).observe(clock, {attributes: true, attributeFilter: ['data-time']});
        }"""
    )
    timeline = page.locator("[data-testid=timeline]")
    track = timeline.bounding_box()
    assert track is not None
    fraction = (middle - start) / (end - start)
    # (a locator click: placed on the element when it is stable and receives the click, so a
    # layout still settling on a busy machine cannot move it elsewhere)
    timeline.click(position={"x": track["width"] * fraction, "y": track["height"] / 2})
    # Then the wall-clock time advances from there, across files and past the gap
    try:
        page.wait_for_function(
            "t => (document.querySelector('[data-testid=clock]').dataset.time || '') > t",
            arg=iso(second_start + timedelta(seconds=5)),
            timeout=120_000,  # seconds alone; a 2-core machine running the suite beside it
        )
    except PlaywrightTimeoutError:
        state = page.evaluate(PLAYER_STATE)
        raise AssertionError(f"playback never got past the gap: {state}") from None
    # (the paused position reaches the clock with the last 'timeupdate', queued after `paused`
    # turns true and before the 'pause' event: wait for that event, registered before pausing)
    page.evaluate(
        """() => document.querySelector('[data-testid=video]').addEventListener(
          'pause', () => { window.__pauseFired = true; }, {once: true})"""
    )
    page.keyboard.press("k")  # pause
    page.wait_for_function("() => window.__pauseFired === true")
    samples = [(parse(t), segment) for t, segment in page.evaluate("window.__samples") if t]
    times = [t for t, _ in samples]
    pixel = (end - start) / track["width"]
    assert abs(times[0] - middle) <= 4 * pixel, (times[0], middle)
    assert times == sorted(times)
    files = [segment for _, segment in samples if segment]
    assert len(set(files)) >= 3, files  # several files played in a row
    assert not [t for t in times if first_end < t < second_start], "played inside the gap"
    assert any(t >= second_start for t in times), "never got past the gap"
    first_frame_ms = float(
        page.eval_on_selector("[data-testid=video]", "v => v.dataset.firstFrameMs")
    )

    # And the sensor reading of the paused moment shows
    paused = parse(page.eval_on_selector("[data-testid=clock]", "c => c.dataset.time"))
    expected_overlays = moment_entries(demo, paused)
    assert expected_overlays, paused
    page.wait_for_function(
        "ids => { const shown = [...document.querySelectorAll('[data-testid=overlay]')]"
        ".map(e => e.dataset.id).sort(); return JSON.stringify(shown) === JSON.stringify(ids); }",
        arg=sorted(expected_overlays),
    )
    page.wait_for_selector("[data-testid=overlay] dd")  # its content, read from the bucket
    assert "t=" in page.url
    shot(page, "playing", shots)

    # When the person signs in by name (the local stack's X-User) and annotates the moment
    sign_in(page, name="alice")
    page.click("[data-testid=add-annotation]")
    form = page.locator("[data-testid=annotation-form]")
    form.locator("textarea[name=description]").fill("Delivery van at the gate")
    form.locator("input[name=tags]").fill("delivery, van")
    shot(page, "annotation-form", shots)
    form.locator("button[name=save]").click()
    # Then it is listed, covering the moment, and the API has it as alice's
    listed = page.locator("[data-testid=annotation]", has_text="Delivery van at the gate")
    listed.wait_for()
    annotation_id = listed.get_attribute("data-annotation-id")
    assert listed.get_attribute("data-now") == "true"
    status, stored = demo.get(f"/devices/{DEVICE}/annotations/{annotation_id}")
    assert status == 200, stored
    assert (stored["created_by"], stored["version"], stored["tags"]) == (
        "alice",
        1,
        ["delivery", "van"],
    )
    # (the moment itself, milliseconds included: the form keeps the instant it was given)
    assert parse(stored["target"]["from"]) == paused
    assert parse(stored["target"]["to"]) == paused + timedelta(seconds=10)

    # Given a second person on a phone, with a token, opening the same moment by deep link
    bob: BrowserContext = browser.new_context(
        viewport={"width": 360, "height": 740}, timezone_id="Asia/Tokyo", is_mobile=True
    )
    phone = bob.new_page()
    watch.attach(phone, "bob")
    authorized: list[str] = []
    phone.on(
        "request",
        lambda r: (
            authorized.append(r.url)
            if r.url.startswith(api) and r.headers.get("authorization", "").startswith("Bearer ")
            else None
        ),
    )
    phone.goto(viewer)
    phone.wait_for_selector("body[data-ready=true]")
    token = fake_jwt("bob")
    # (the list fetched with the token: the page's first, tokenless list may still be in flight,
    # and navigating before the second one answered would abort it)
    with phone.expect_response(
        lambda r: (
            "/devices?" in r.url
            and r.request.headers.get("authorization", "").startswith("Bearer ")
        )
    ):
        sign_in(phone, name="bob", token=token)
    link = urlencode({"device": DEVICE, "date": DST_DAY, "tz": DST_ZONE, "t": iso(paused)})
    phone.goto(f"{viewer}?{link}")
    phone.wait_for_selector("body[data-ready=true]")
    # Then the deep link shows the day in Berlin, plays the moment, lists the annotation
    phone.wait_for_function(
        "t => (document.querySelector('[data-testid=clock]').dataset.time || '') > t",
        arg=iso(paused + timedelta(seconds=1)),
    )
    phone.locator("[data-testid=annotation]", has_text="Delivery van").wait_for()
    # And every API request carried the token, media included (redirects to the bucket too)
    assert any("/playlist.m3u8" in u for u in authorized)
    assert any("/media/" in u for u in authorized)
    # And it is readable 360 px wide: nothing sticks out sideways
    assert phone.evaluate("document.documentElement.scrollWidth") <= 360
    phone.keyboard.press("k")
    shot(phone, "phone-360px", shots)

    # When bob starts editing (version 1) and alice saves a change first (version 2)
    phone.locator(f"[data-annotation-id='{annotation_id}'] [data-action=edit]").click()
    phone_form = phone.locator("[data-testid=annotation-form]")
    phone_form.locator("textarea[name=description]").wait_for()
    phone_form.locator("textarea[name=description]").fill("Van, plate not readable")
    page.locator(f"[data-annotation-id='{annotation_id}'] [data-action=edit]").click()
    form.locator("textarea[name=description]").fill("Delivery van at the gate, driver rang")
    form.locator("button[name=save]").click()
    page.locator("[data-testid=annotation]", has_text="driver rang").wait_for()
    # And bob saves his
    conflicts_before = len(watch.failed_requests)
    phone_form.locator("button[name=save]").click()
    # Then the conflict is surfaced: alice's version beside bob's, nothing overwritten yet
    dialog = phone.locator("[data-testid=conflict][open]")
    dialog.wait_for()
    assert "driver rang" in dialog.locator("[data-version-of=theirs]").inner_text()
    assert "plate not readable" in dialog.locator("[data-version-of=mine]").inner_text()
    assert "alice" in dialog.inner_text()
    _, current = demo.get(f"/devices/{DEVICE}/annotations/{annotation_id}")
    assert (current["version"], current["updated_by"]) == (2, "alice")
    shot(phone, "conflict", shots)
    # When bob knowingly saves his over alice's
    dialog.locator("button[value=mine]").click()
    phone.locator("[data-testid=annotation]", has_text="plate not readable").wait_for()
    # Then the API has bob's as version 3, and alice's stays in the history
    _, current = demo.get(f"/devices/{DEVICE}/annotations/{annotation_id}")
    assert (current["version"], current["updated_by"]) == (3, "bob")
    _, history = demo.get(f"/devices/{DEVICE}/annotations/{annotation_id}/history")
    assert [v["version"] for v in history["items"]] == [1, 2, 3] or [
        v["version"] for v in history["items"]
    ] == [3, 2, 1]

    # And nothing went wrong on the way but the one 412 the conflict is about
    conflict = [r for r in watch.failed_requests[conflicts_before:] if " 412 PUT " in r]
    assert len(conflict) == 1, watch.failed_requests
    assert [r for r in watch.failed_requests if r not in conflict] == []
    assert [e for e in watch.console_errors if "status of 412" not in e] == [], watch.console_errors
    alice.close()
    bob.close()

    figures = {
        "first_load_kb": round(first_load / 1024, 1),
        "first_load_requests": first_load_requests,
        "first_frame_ms_after_click": first_frame_ms,
        "journey_seconds": round(time.monotonic() - started, 1),
        "screenshots": shots,
    }
    (ARTIFACTS / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nviewer journey: {json.dumps(figures, indent=2)}")
