"""The one way the project's tests drive a real browser: headless Chromium playing HLS with hls.js.

``chromium()`` starts the machine's Chromium (Debian's, with proprietary codecs: its Media
Source Extensions decode H.264) through Playwright; ``play_hls`` opens a player page at an
origin the caller chooses, plays a playlist from the start at a high rate and reports what the
player saw: how far it got, whether it ended, frames, hls.js errors, console errors, failed
requests and the PROGRAM-DATE-TIME of each fragment it loaded.

The page gets its origin without a server: Playwright answers ``<origin>/__player__.html`` and
``<origin>/__hls__.js`` itself. Those routes are removed before playback starts, because while
any route is active Playwright answers every CORS preflight itself, with permissive headers:
the media requests must meet the real server's CORS, as they would in a real browser.

A missing Chromium or hls.js fails the test with how to get it; nothing is skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    Route,
)
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from worlds.chromium import DEFAULT_CHROMIUM, launched

REPO: Final = Path(__file__).resolve().parents[2]
DEFAULT_HLS_JS: Final = REPO / ".cache/npm/node_modules/hls.js/dist/hls.min.js"
DEFAULT_AXE_CORE: Final = REPO / ".cache/npm/node_modules/axe-core/axe.min.js"


# A worker waits for the other's browser (one module of browser tests) at most this long.
LOCK_TIMEOUT_S: Final = 900.0
LOCK_POLL_S: Final = 0.1

# The non-fatal hls.js errors ("type/details") that say nothing about the media or the server,
# each with why; a test of playback fails on any other (``Playback.unexpected_errors``).
HARMLESS_PLAYER_ERRORS: Final = frozenset(
    {
        # At 8-16x on a busy machine playback outruns loading: hls.js reports the stall
        # and waits for the data, which comes. (A hole skipped or a nudge past a gap would
        # be a finding about the media, so those are not here.)
        "mediaError/bufferStalledError",
    }
)

PLAYER_PATH: Final = "/__player__.html"
HLS_JS_PATH: Final = "/__hls__.js"

# The player: hls.js into a muted <video>; everything it observes goes to window.__player.
_PLAYER_HTML: Final = """<!doctype html>
<html><head><meta charset="utf-8"><title>player</title><link rel="icon" href="data:,">
<script src="__HLS_JS_PATH__"></script></head>
<body><video id="video" muted playsinline></video>
<script>
"use strict";
const state = window.__player = {
  done: false, ended: false, fatal: [], errors: [], programDateTimes: [],
};
const finish = () => { state.done = true; };
window.__startPlayback = (url, rate) => {
  const video = document.getElementById("video");
  video.muted = true;
  video.addEventListener("ended", () => { state.ended = true; finish(); });
  video.addEventListener("error", () => {
    const error = video.error;
    state.fatal.push("video/" + (error ? error.code + " " + error.message : "unknown"));
    finish();
  });
  if (!Hls.isSupported()) {
    state.fatal.push("hls.js/not supported: no Media Source Extensions for H.264");
    finish();
    return;
  }
  const hls = window.__hls = new Hls({ enableWorker: true, startPosition: 0 });
  hls.on(Hls.Events.ERROR, (_event, data) => {
    const text = data.type + "/" + data.details;
    if (data.fatal) { state.fatal.push(text); finish(); } else { state.errors.push(text); }
  });
  hls.on(Hls.Events.FRAG_LOADED, (_event, data) => {
    const frag = data.frag;
    if (frag.sn === "initSegment") return;
    const when = frag.programDateTime;
    state.programDateTimes.push(when === null ? "" : new Date(when).toISOString());
  });
  hls.on(Hls.Events.MANIFEST_PARSED, () => {
    video.defaultPlaybackRate = rate;
    video.playbackRate = rate;
    video.play().catch((error) => {
      state.fatal.push("play/" + error.name + ": " + error.message);
      finish();
    });
  });
  hls.loadSource(url);
  hls.attachMedia(video);
};
</script></body></html>
"""

_REPORT_JS: Final = """() => {
  const video = document.getElementById("video");
  const quality = video.getVideoPlaybackQuality();
  const state = window.__player;
  return {
    played: video.currentTime, duration: video.duration, ended: state.ended,
    frames: quality.totalVideoFrames, dropped: quality.droppedVideoFrames,
    fatal: state.fatal, errors: state.errors, programDateTimes: state.programDateTimes,
  };
}"""


def _missing(what: str, how: str) -> NoReturn:
    """Fail (never skip) the test that needs ``what``, saying how to get it."""
    pytest.fail(f"{what} is missing: {how}", pytrace=False)


def chromium_path() -> str:
    """``$CHROMIUM`` or ``/usr/bin/chromium``; fails with how to install it when missing."""
    path = os.environ.get("CHROMIUM") or DEFAULT_CHROMIUM
    found = shutil.which(path)
    if found is None:
        _missing(
            f"Chromium ({path})",
            "install it with `apt-get install chromium` (Debian; its build decodes H.264), "
            "or point $CHROMIUM at a Chromium or Chrome binary",
        )
    return found


def axe_core_path() -> Path:
    """``$AXE_CORE`` or the project's axe-core; fails with 'run make install' when missing."""
    path = Path(os.environ.get("AXE_CORE") or DEFAULT_AXE_CORE)
    if not path.is_file():
        _missing(f"axe-core ({path})", "run make install (or point $AXE_CORE at axe.min.js)")
    return path


def hls_js_path() -> Path:
    """``$HLS_JS`` or the project's hls.js; fails with 'run make install' when missing."""
    path = Path(os.environ.get("HLS_JS") or DEFAULT_HLS_JS)
    if not path.is_file():
        _missing(f"hls.js ({path})", "run make install (or point $HLS_JS at hls.min.js)")
    return path


def run_lock_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory every process of this pytest run shares: under pytest-xdist each worker's
    base temporary directory sits in one per run (pytest-xdist's documented pattern), without
    it the run's own base directory (never the per-user parent every run shares)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def browser_turn(lock_dir: Path, *, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the run's one Chromium turn: an exclusive ``fcntl`` lock on a file in ``lock_dir``.

    Two Chromiums decoding at once on a 2-core machine starve each other's players, and the
    tests that read a player's timing then fail on the machine, not on the product. The
    kernel drops the lock when its holder exits, so a crashed worker cannot keep it. Waiting
    longer than ``timeout_s`` fails the test, naming the lock, instead of hanging the run.
    """
    path = lock_dir / "chromium.lock"
    with path.open("a") as handle:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"another worker held {path} for over {timeout_s:.0f} s")
                time.sleep(LOCK_POLL_S)  # a poll: flock has no timeout of its own
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def chromium(lock_dir: Path) -> Iterator[Browser]:
    """Headless Chromium (the machine's, not Playwright's download), closed at the end.

    It runs only while it holds the run's Chromium turn (``browser_turn``): one Chromium at a
    time across pytest-xdist's workers."""
    executable = chromium_path()
    with browser_turn(lock_dir), launched(executable) as browser:
        yield browser


@dataclass
class Playback:
    """What the player saw, read from the page when playback ended (or gave up)."""

    played_seconds: float  # video.currentTime when playback ended (or timed out)
    ended: bool  # the 'ended' event fired
    duration: float  # video.duration as the player saw it
    frames: int  # getVideoPlaybackQuality().totalVideoFrames
    dropped_frames: int
    fatal_errors: list[str]  # hls.js ERROR events with fatal=true: "type/details"
    errors: list[str]  # non-fatal hls.js errors
    console_errors: list[str]  # console messages of type error, and page errors
    failed_requests: list[str]  # requestfailed, and responses with status >= 400: "STATUS url"
    program_date_times: list[str]  # frag.programDateTime (ISO; "" if none) per fragment loaded

    @property
    def unexpected_errors(self) -> list[str]:
        """The non-fatal hls.js errors outside the named harmless set."""
        return [error for error in self.errors if error not in HARMLESS_PLAYER_ERRORS]


def play_hls(
    browser: Browser,
    playlist_url: str,
    *,
    page_origin: str,
    timeout_s: float = 60,
    rate: float = 16.0,
) -> Playback:
    """Play ``playlist_url`` with hls.js on a page whose origin is ``page_origin``.

    A fresh browser context each time; the video is muted, starts at 0 and plays at ``rate``
    (Chromium allows at most 16). Returns once 'ended' fires, a fatal error happens (hls.js
    fatal errors, and also the video element's own errors as ``video/...`` and a refused
    ``play()`` as ``play/...``), or ``timeout_s`` passes — whichever comes first.
    """
    if not 0.0625 <= rate <= 16:
        raise ValueError(f"Chromium plays at rates from 1/16 to 16, not {rate}")
    origin = page_origin.rstrip("/")
    player = _PLAYER_HTML.replace("__HLS_JS_PATH__", HLS_JS_PATH)
    hls_js = hls_js_path().read_bytes()
    console_errors: list[str] = []
    failed_requests: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            console_errors.append(message.text)

    def on_page_error(error: PlaywrightError) -> None:
        console_errors.append(f"{error.name}: {error.message}")

    def on_request_failed(request: Request) -> None:
        failed_requests.append(f"{request.failure or 'failed'} {request.url}")

    def on_response(response: Response) -> None:
        if response.status >= 400:
            failed_requests.append(f"{response.status} {response.url}")

    def serve(body: bytes, content_type: str) -> Callable[[Route], None]:
        def handler(route: Route) -> None:
            route.fulfill(status=200, body=body, content_type=content_type)

        return handler

    # The page has no IP address (Playwright serves it), so Chromium's Local Network Access
    # takes it for a public site and blocks its requests to loopback servers unless allowed;
    # even allowed, a plain-http page of an invented host is refused (https or localhost work).
    context = browser.new_context(permissions=["local-network-access"])
    try:
        context.route(f"{origin}{PLAYER_PATH}", serve(player.encode(), "text/html"))
        context.route(f"{origin}{HLS_JS_PATH}", serve(hls_js, "text/javascript"))
        page = context.new_page()
        page.on("console", on_console)
        page.on("pageerror", on_page_error)
        page.on("requestfailed", on_request_failed)
        page.on("response", on_response)
        page.goto(f"{origin}{PLAYER_PATH}", wait_until="load")
        # No route may stay: while one does, Playwright fakes every CORS preflight.
        context.unroute_all(behavior="wait")
        page.evaluate("([url, rate]) => window.__startPlayback(url, rate)", [playlist_url, rate])
        _wait_until_done(page, timeout_s)
        report: dict[str, Any] = page.evaluate(_REPORT_JS)
    finally:
        context.close()
    return Playback(
        played_seconds=float(report["played"]),
        ended=bool(report["ended"]),
        duration=float(report["duration"]),
        frames=int(report["frames"]),
        dropped_frames=int(report["dropped"]),
        fatal_errors=list(report["fatal"]),
        errors=list(report["errors"]),
        console_errors=console_errors,
        failed_requests=failed_requests,
        program_date_times=list(report["programDateTimes"]),
    )


def _wait_until_done(page: Page, timeout_s: float) -> None:
    """Until the player says it is done; a timeout is a result too (``ended`` stays false)."""
    with suppress(PlaywrightTimeoutError):
        page.wait_for_function("window.__player.done", polling=50, timeout=timeout_s * 1000)
