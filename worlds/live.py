"""A camera at the live edge and a player following it (docs/playback.md, "Live"): what the
live test (``tests/media/test_live_local.py``) and ``python -m bench --only live`` share.

* :class:`LiveCamera` — a thread uploading real H.264 segments (PyAV) to a running stack's
  bucket with the product's uploader, each as soon as its wall-clock end has passed (a
  camera cuts a segment, then sends it), noting when each upload finished;
* :class:`PlaylistWatch` — a thread polling ``live.m3u8`` as a player would (more often):
  when each file was first listed, and every ``EXT-X-MEDIA-SEQUENCE`` seen;
* :func:`watch_live` — the viewer's own player (``player.js``, ``playLive``, hls.js) in a
  Chromium page on the viewer's origin, noting the wall-clock time of every frame it
  presents and the PROGRAM-DATE-TIME moment that frame shows, and every stall;
* :func:`live_figures` — per segment: upload finished → listed → first frame shown.

The stack's clock must be the real one: the live edge is about now.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from video_index.media.synthetic import ContainerName, synthetic_clip
from video_index.upload import upload_segment

#: Loopback calls never go through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_PDT = re.compile(r"^#EXT-X-PROGRAM-DATE-TIME:(.+)$", re.M)
_SEQUENCE = re.compile(r"^#EXT-X-MEDIA-SEQUENCE:(\d+)$", re.M)
PAGE_PATH: Final = "/__live__.html"
#: The watching page: the viewer's Player on the viewer's origin (so hls.js, the live
#: options and the follower are the product's), noting each presented frame.
_PAGE: Final = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="api-base" content="../"><title>live</title>
<link rel="icon" href="data:,"></head>
<body><video id="video" muted playsinline></video>
<script type="module">
import Hls from "./hls.mjs";
import { liveAddress } from "./live.js";
import { Player } from "./player.js";
const video = document.getElementById("video");
const state = window.__watch = {
  frames: [], waiting: 0, waits: [], seeks: 0, stalls: [], errors: [], playing: false,
};
const player = window.__player = new Player(video, {
  onMoment: () => {}, onEnded: () => {}, onError: (message) => state.errors.push(message),
});
video.addEventListener("playing", () => { state.playing = true; });
// Each "waiting" once playing (but a seek's): when, where, what was buffered, and how long
// until the next picture came on screen (a blip of a few ms, or a stall).
let pending = null;
video.addEventListener("waiting", () => {
  if (!state.playing || video.seeking) return;
  state.waiting += 1;
  const ranges = [...Array(video.buffered.length).keys()]
    .map((i) => [video.buffered.start(i), video.buffered.end(i)]);
  pending = { at: Date.now(), since: performance.now(), position: video.currentTime, ranges };
});
video.addEventListener("seeking", () => { if (state.playing) state.seeks += 1; });
const onFrame = (now, meta) => {
  if (pending) {
    state.waits.push({ ...pending, frozen_ms: now - pending.since, since: undefined });
    pending = null;
  }
  const moment = player.momentAt(meta.mediaTime);
  const at = performance.timeOrigin + meta.expectedDisplayTime;
  if (moment !== null) state.frames.push([at, moment]);
  video.requestVideoFrameCallback(onFrame);
};
video.requestVideoFrameCallback(onFrame);
window.__finish = () => {  // a wait no picture ended: frozen until now
  if (pending) state.waits.push({ ...pending, frozen_ms: performance.now() - pending.since });
  pending = null;
  return state;
};
// The viewer's live player, or (plain) hls.js's own live options and no follower.
window.__start = (device, plain) => {
  const now = performance.now();
  if (plain) player.load(liveAddress(device), { autoStartLoad: true }, now, () => null);
  else player.playLive(device);
  player.hls.on(Hls.Events.ERROR, (_event, data) => {
    const what = data.type + "/" + data.details + (data.fatal ? " (fatal)" : "");
    const buffer = typeof data.buffer === "number" ? data.buffer : null;  // s ahead (stalls)
    state.stalls.push({ what, buffer, at: Date.now() });
  });
};
</script></body></html>
"""


@dataclass(frozen=True, slots=True)
class Uploaded:
    start_ms: int
    duration_ms: int
    #: When the upload's last request returned (epoch s).
    at: float


class LiveCamera(threading.Thread):
    """Uploads ``device``'s segments of ``duration_ms``, each once its wall-clock end passed."""

    def __init__(
        self,
        s3: Any,
        bucket: str,
        device: str,
        *,
        duration_ms: int = 2000,
        container: ContainerName = "ts",
        size: tuple[int, int] = (320, 180),
    ) -> None:
        super().__init__(name=f"camera-{device}", daemon=True)
        self.s3, self.bucket, self.device = s3, bucket, device
        self.duration_ms, self.container, self.size = duration_ms, container, size
        self.uploaded: list[Uploaded] = []
        self.failure: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            first = -(-int(time.time() * 1000) // self.duration_ms) * self.duration_ms
            for k in range(10**9):
                start_ms = first + k * self.duration_ms
                start = datetime.fromtimestamp(start_ms / 1000, UTC)
                body = synthetic_clip(
                    seconds=self.duration_ms / 1000, container=self.container,
                    size=self.size, label=self.device, start=start,
                )  # fmt: skip
                # The camera sends a segment once it has cut it: at its end.
                if self._halt.wait(max(0.0, (start_ms + self.duration_ms) / 1000 - time.time())):
                    return
                upload_segment(
                    self.s3, self.bucket, body, kind="video", device=self.device, start=start,
                    duration_ms=self.duration_ms, ext="ts" if self.container == "ts" else "mp4",
                    as_is=self.container == "fmp4",
                )  # fmt: skip
                self.uploaded.append(Uploaded(start_ms, self.duration_ms, time.time()))
        except BaseException as error:  # reported by the test through ``failure``
            self.failure = error

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)


class PlaylistWatch(threading.Thread):
    """Polls ``url`` every ``every_s``: when each file (by its PROGRAM-DATE-TIME) was first
    listed, and each answer's media sequence, in order."""

    def __init__(self, url: str, every_s: float = 0.25) -> None:
        super().__init__(name="live-playlist-watch", daemon=True)
        self.url, self.every_s = url, every_s
        self.listed: dict[int, float] = {}
        self.sequences: list[int] = []
        self.failure: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.wait(self.every_s):
                with _OPENER.open(self.url, timeout=10) as answer:
                    text = answer.read().decode()
                seen = time.time()
                self.sequences.extend(int(n) for n in _SEQUENCE.findall(text))
                for stamp in _PDT.findall(text):
                    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                    self.listed.setdefault(round(moment.timestamp() * 1000), seen)
        except BaseException as error:  # reported by the test through ``failure``
            self.failure = error

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)


@dataclass
class Watched:
    """What the page saw: (presented at, epoch ms; moment shown, epoch ms) per frame,
    ``waiting`` events once playing (but those of a seek), seeks once playing (the
    follower's join), hls.js errors, player errors.

    A stall is **starved** when the buffer held less than :data:`FED_S` ahead of the
    picture: the live edge did not bring the next file in time, the player's fault or the
    product's. A stall with seconds buffered ahead is a **hiccup**: the page did not get
    to decode in time (on a 2-core machine shared with a test suite, Chromium's decoder and
    compositor wait for the CPU now and then). Both are reported; only starvation says the
    live edge is wrong."""

    #: A ``waiting`` counts as a stall when the next picture came this much later or more
    #: (Chromium reports a dip of its decoded-frame queue, recovered within a millisecond,
    #: now and then: no picture is late then).
    STALL_MS: ClassVar[float] = 100.0
    #: Buffered ahead of the picture (s) below which a stall is starvation.
    FED_S: ClassVar[float] = 0.5
    #: hls.js errors that say nothing about the stream, each with why.
    HARMLESS: ClassVar[frozenset[str]] = frozenset(
        {
            # hls.js cancels its own request for a file's init when a playlist reload
            # replaced the file's record meanwhile, and asks again at once.
            "networkError/aborted",
        }
    )

    frames: list[tuple[float, float]]
    waiting: int
    #: Each such ``waiting``: when (epoch ms), the position, the buffered ranges, and
    #: ``frozen_ms``: until the next picture was presented.
    waits: list[dict[str, Any]]
    seeks: int
    #: Each hls.js error: ``what`` ("type/details"), ``buffer`` (s ahead, for stalls), ``at``.
    stalls: list[dict[str, Any]]
    errors: list[str]

    @property
    def frozen(self) -> list[dict[str, Any]]:
        """The ``waiting`` events after which no picture came for :data:`STALL_MS` or more,
        each with ``ahead``: the seconds buffered ahead of the picture then."""
        return [
            {**w, "ahead": _ahead(w["position"], w["ranges"])}
            for w in self.waits
            if w.get("frozen_ms", self.STALL_MS) >= self.STALL_MS
        ]

    @property
    def stalled(self) -> list[dict[str, Any]]:
        """hls.js's stall errors, and the frozen ``waiting`` events."""
        stalls = [s for s in self.stalls if s["what"] == "mediaError/bufferStalledError"]
        return [*({"ahead": s["buffer"], **s} for s in stalls), *self.frozen]

    @property
    def starved(self) -> list[dict[str, Any]]:
        return [s for s in self.stalled if s["ahead"] is None or s["ahead"] < self.FED_S]

    @property
    def hiccups(self) -> list[dict[str, Any]]:
        return [s for s in self.stalled if s["ahead"] is not None and s["ahead"] >= self.FED_S]

    @property
    def unexpected_errors(self) -> list[str]:
        """hls.js errors but stalls (judged above) and the harmless ones."""
        return [
            s["what"]
            for s in self.stalls
            if s["what"] not in self.HARMLESS and s["what"] != "mediaError/bufferStalledError"
        ]


def _ahead(position: float, ranges: list[list[float]]) -> float:
    """Seconds buffered from ``position`` on (0 outside every range)."""
    return next((end - position for start, end in ranges if start <= position < end), 0.0)


def watch_live(
    browser: Any, viewer: str, device: str, seconds: float, *, plain: bool = False
) -> Watched:
    """Follow ``device``'s live playlist for ``seconds`` in the viewer's player on a page of
    the viewer's origin (``viewer``: the viewer's address, e.g. ``http://…/viewer``); with
    ``plain``, hls.js with its own live options and no follower (a baseline)."""
    folder = viewer.rstrip("/") + "/"
    # The page has no address (Playwright serves it): Chromium's Local Network Access takes
    # it for a public site and refuses its requests to loopback servers unless allowed.
    context = browser.new_context(permissions=["local-network-access"])
    try:
        context.route(
            f"{folder.rstrip('/')}{PAGE_PATH}",
            lambda route: route.fulfill(status=200, body=_PAGE, content_type="text/html"),
        )
        page = context.new_page()
        page.goto(f"{folder.rstrip('/')}{PAGE_PATH}", wait_until="load")
        page.wait_for_function("window.__watch !== undefined", timeout=10_000)
        context.unroute_all(behavior="wait")
        page.evaluate("([device, plain]) => window.__start(device, plain)", [device, plain])
        page.wait_for_timeout(seconds * 1000)  # watching is the point: a real-time span
        state: dict[str, Any] = page.evaluate("() => window.__finish()")
    finally:
        context.close()
    return Watched(
        frames=[(float(a), float(b)) for a, b in state["frames"]],
        waiting=int(state["waiting"]),
        waits=list(state["waits"]),
        seeks=int(state["seeks"]),
        stalls=list(state["stalls"]),
        errors=list(state["errors"]),
    )


@dataclass
class LiveFigures:
    """Per segment shown (after the first ``warmup`` ones): upload finished → listed (s), and
    upload finished → its first frame on screen (s)."""

    listed_s: list[float] = field(default_factory=list)
    shown_s: list[float] = field(default_factory=list)
    segment_s: float = 2.0

    @property
    def median(self) -> float:
        return statistics.median(self.shown_s)

    @property
    def worst(self) -> float:
        return max(self.shown_s)

    @property
    def goal_s(self) -> float:
        """The issue's goal: one segment duration + 2 s behind the finished upload."""
        return self.segment_s + 2.0


def live_figures(
    uploaded: list[Uploaded], listed: dict[int, float], watched: Watched, warmup: int = 3
) -> LiveFigures:
    """The delays of every segment whose first frame the page presented, but the first
    ``warmup`` (the player joins the stream then)."""
    figures = LiveFigures(segment_s=(uploaded[0].duration_ms / 1000) if uploaded else 2.0)
    shown: list[tuple[Uploaded, float]] = []
    for segment in uploaded:
        end = segment.start_ms + segment.duration_ms
        first = next((at for at, seen in watched.frames if segment.start_ms <= seen < end), None)
        if first is not None:
            shown.append((segment, first / 1000))
    for segment, first in shown[warmup:]:
        figures.shown_s.append(first - segment.at)
        if segment.start_ms in listed:
            figures.listed_s.append(listed[segment.start_ms] - segment.at)
    return figures
