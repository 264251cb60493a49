// Several cameras in step (docs/viewer.md, "Cameras in step"): up to 9 cameras side by side,
// played from one moment on one clock. The clock is wall-clock time (epoch ms) advancing in
// real time; each tile maps it to its own player position through its playlist's
// PROGRAM-DATE-TIME (hls.js: `frag.programDateTime`) and chases it: a small drift is taken
// up by the playback rate, a large one by a seek. A tile whose camera has no footage at the
// clock's moment shows its gap (paused, marked) and joins when its footage starts. The
// address holds the set and the moment: grid.html?devices=a,b,c&t=ISO. Live
// (grid.html?devices=a,b,c&live=1): each tile follows its camera's live playlist and the
// clock is the wall clock less the live lag (live.js), so the wall shows every camera's
// latest footage in step. The tiles fill the window like a control room's wall
// (grid-layout.js).

import Hls from "./hls.mjs";
import { authHeaders, devicePath, get, isApi, url } from "./api.js";
import { $, h, status } from "./dom.js";
import { attachExport } from "./grid-export.js";
import { fitWall } from "./grid-layout.js";
import { LIVE_HLS, liveAddress, liveLag, segmentSeconds } from "./live.js";
import { iso, parseIso } from "./zones.js";

const MAX_TILES = 9;
/** The playlist window: from a little before the moment to an hour after it. */
const BEFORE_MS = 5 * 60_000;
const AFTER_MS = 55 * 60_000;
/** Drift (s) above which a tile seeks; below it, the playback rate takes it up. */
const SEEK_DRIFT_S = 0.3;
const TICK_MS = 200;
/** Live: how often the timeline follows the clock (its window and each camera's ranges). */
const LIVE_TIMELINE_MS = 60_000;

class Tile {
  /** `grid` tells the clock now (`grid.now()`) and whether it advances (`grid.advancing`). */
  constructor(device, parent, grid) {
    this.device = device;
    this.grid = grid;
    this.video = h("video", { muted: true, playsInline: true, "data-testid": `tile-video-${device}` });
    this.video.muted = true;
    this.label = h("span", { class: "tile-label" }, device);
    this.note = h("span", { class: "tile-note", "data-testid": `tile-note-${device}` }, "loading");
    this.element = h("figure", { class: "tile", "data-testid": `tile-${device}`, "data-state": "loading" },
      this.video, h("figcaption", {}, this.label, " ", this.note));
    parent.append(this.element);
    this.fragments = [];
    this.hls = null;
  }

  /** Play the playlist at `address` with hls.js (`options` added to the grid's own). */
  load(address, options = {}) {
    const hls = new Hls({
      enableWorker: false,
      maxBufferLength: 20,
      backBufferLength: 30,
      ...options,
      xhrSetup: (xhr, address) => {
        if (!isApi(address)) return;
        for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
      },
    });
    this.hls = hls;
    hls.on(Hls.Events.LEVEL_LOADED, (_event, data) => {
      this.fragments = data.details.fragments.filter((f) => Number.isFinite(f.programDateTime));
    });
    // hls.js moves fragments' media times once it has parsed them (LEVEL_PTS_UPDATED), and may
    // move the playhead itself (a jump over a buffer hole fires `seeking`): either can put the
    // picture seconds away from the clock between two ticks. The tile checks again at once,
    // in the same task, so it never says it plays in step while it does not.
    hls.on(Hls.Events.LEVEL_PTS_UPDATED, () => this.recheck());
    this.video.addEventListener("seeking", () => this.recheck());
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal) return;
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR) hls.recoverMediaError();
      else this.setState("error", `stopped: ${data.details}`);
    });
    hls.loadSource(address);
    hls.attachMedia(this.video);
  }

  /** The fragment holding wall-clock `ms`, or null (a gap). */
  fragmentAt(ms) {
    return this.fragments.find((f) => ms >= f.programDateTime && ms < f.programDateTime + f.duration * 1000) || null;
  }

  /** The wall-clock instant of the picture shown (epoch ms), or null. */
  moment() {
    const position = this.video.currentTime;
    for (const f of this.fragments) {
      if (position >= f.start && position < f.start + f.duration) return f.programDateTime + (position - f.start) * 1000;
    }
    return null;
  }

  recheck() {
    if (this.element.dataset.state === "playing") this.follow(this.grid.now(), this.grid.advancing);
  }

  setState(state, note) {
    if (this.element.dataset.state === state && this.note.textContent === note) return;
    this.element.dataset.state = state;
    this.note.textContent = note;
  }

  /** Follow the clock: play in step where there is footage, show the gap where there is none. */
  follow(clockMs, running) {
    if (!this.fragments.length) {
      if (this.hls && this.hls.levels.length && this.element.dataset.state !== "error") this.setState("gap", "no footage");
      return;
    }
    const fragment = this.fragmentAt(clockMs);
    if (!fragment) {
      if (!this.video.paused) this.video.pause();
      this.setState("gap", "no footage at this moment");
      return;
    }
    const target = fragment.start + (clockMs - fragment.programDateTime) / 1000;
    const shown = this.moment();
    const drift = shown === null ? Infinity : (shown - clockMs) / 1000;
    const joining = Math.abs(drift) > SEEK_DRIFT_S;
    if (joining) {
      // A seek: the tile says it is catching up until a later tick finds it in step (hls.js
      // may still move a fragment's media time once it has parsed it).
      this.video.currentTime = target;
      this.video.playbackRate = 1;
    } else {
      // Behind: a little faster; ahead: a little slower (at most ±25 %).
      this.video.playbackRate = Math.min(1.25, Math.max(0.75, 1 - 2 * drift));
    }
    if (running && this.video.paused) this.video.play().catch(() => {});
    if (!running && !this.video.paused) this.video.pause();
    // A tile still seeking shows an older picture: it is catching up too.
    if (joining || this.video.seeking) this.setState("joining", "catching up");
    else this.setState("playing", "");
  }
}

class Grid {
  /** `live`: follow the cameras' live edge (the clock: now less the live lag). */
  constructor(devices, startMs, live = false) {
    this.live = live;
    this.tiles = devices.map((device) => new Tile(device, $("#grid-tiles"), this));
    $("#grid-tiles").dataset.count = String(this.tiles.length);
    // A moment's window runs mostly after it; live, the last hour.
    this.windowStart = startMs - (live ? AFTER_MS : BEFORE_MS);
    this.windowEnd = startMs + (live ? BEFORE_MS : AFTER_MS);
    this.clockMs = live ? this.liveClock() : startMs;
    this.running = true;
    /** True while the clock moves: running, and no tile that should show footage is loading. */
    this.advancing = false;
    this.lastTick = performance.now();
    this.timeline = $("#grid-timeline");
    this.rows = new Map();
    this.cursor = h("div", { class: "grid-cursor", "data-testid": "grid-cursor" });
  }

  async start() {
    for (const tile of this.tiles) {
      if (this.live) tile.load(liveAddress(tile.device), { ...LIVE_HLS, autoStartLoad: true });
      else tile.load(url(devicePath(tile.device, "/playlist.m3u8"), { from: iso(this.windowStart), to: iso(this.windowEnd) }).toString());
    }
    fitWall($("#grid-tiles"), $("#grid-timeline"));
    await this.drawTimeline();
    $("#grid-play").addEventListener("click", () => this.toggle());
    this.setupLiveButton();
    this.timeline.addEventListener("click", (event) => {
      const box = this.timeline.getBoundingClientRect();
      const ms = this.windowStart + ((event.clientX - box.left) / box.width) * (this.windowEnd - this.windowStart);
      if (this.live) this.leaveLive(ms);
      else this.seek(ms);
    });
    this.timeline.addEventListener("keydown", (event) => {
      const step = { ArrowLeft: -10_000, ArrowRight: 10_000, PageDown: -60_000, PageUp: 60_000 }[event.key];
      if (!step) return;
      event.preventDefault();
      if (this.live) this.leaveLive(this.clockMs + step);
      else this.seek(this.clockMs + step);
    });
    setInterval(() => this.tick(), TICK_MS);
    if (this.live) setInterval(() => this.followTimeline(), LIVE_TIMELINE_MS);
    document.body.dataset.ready = "true";
  }

  // --- live ---------------------------------------------------------------------------

  /** The live lag of the slowest camera's segments (two segments and a margin, live.js). */
  liveClock() {
    const seconds = Math.max(0, ...this.tiles.map((t) => (t.fragments.length ? segmentSeconds(t.fragments) : 0)));
    return Date.now() - liveLag(seconds || 2);
  }

  /** Live: the timeline keeps showing the last hour, its ranges re-read. */
  followTimeline() {
    const now = Date.now();
    this.windowStart = now - AFTER_MS;
    this.windowEnd = now + BEFORE_MS;
    this.drawTimeline().catch((error) => status(`ranges: ${error.message}`, "error"));
  }

  /** The header's Live toggle: pressed while live; pressing it goes live, or leaves live
   * for the moment shown. */
  setupLiveButton() {
    const button = $("#grid-live");
    button.setAttribute("aria-pressed", this.live ? "true" : "false");
    button.addEventListener("click", () => (this.live ? this.leaveLive(this.clockMs) : this.goLive()));
  }

  goLive() {
    location.search = `?${new URLSearchParams({ devices: this.tiles.map((t) => t.device).join(","), live: "1" })}`;
  }

  leaveLive(ms) {
    location.search = `?${new URLSearchParams({ devices: this.tiles.map((t) => t.device).join(","), t: iso(ms) })}`;
  }

  async drawTimeline() {
    const kept = [...this.timeline.querySelectorAll(".grid-selection")]; // an export's window
    this.timeline.replaceChildren();
    const span = this.windowEnd - this.windowStart;
    for (const tile of this.tiles) {
      const row = h("div", { class: "grid-row", "data-testid": `grid-row-${tile.device}` },
        h("span", { class: "grid-row-label" }, tile.device));
      try {
        const body = await get(devicePath(tile.device, "/ranges"), { from: iso(this.windowStart), to: iso(this.windowEnd) });
        for (const range of body.ranges) {
          const start = Math.max(parseIso(range.start), this.windowStart);
          const end = Math.min(parseIso(range.end), this.windowEnd);
          const bar = h("span", { class: "grid-range", "data-start": range.start, "data-end": range.end });
          bar.style.left = `${((start - this.windowStart) / span) * 100}%`;
          bar.style.width = `${((end - start) / span) * 100}%`;
          row.append(bar);
        }
      } catch (error) {
        row.append(h("span", { class: "grid-row-error" }, `ranges: ${error.message}`));
      }
      this.timeline.append(row);
    }
    this.timeline.append(this.cursor, ...kept);
  }

  toggle() {
    this.running = !this.running;
    $("#grid-play").textContent = this.running ? "Pause" : "Play";
  }

  /** The clock at this instant (between ticks it has moved on by the time since the last). */
  now() {
    return this.clockMs + (this.advancing ? performance.now() - this.lastTick : 0);
  }

  seek(ms) {
    this.clockMs = Math.min(Math.max(ms, this.windowStart), this.windowEnd);
    this.lastTick = performance.now();
    for (const tile of this.tiles) tile.follow(this.clockMs, this.running);
    this.writeAddress();
  }

  /** The clock advances in real time while running, but waits while a tile that should be
   * showing footage has nothing to show yet (loading): no tile is left behind. */
  tick() {
    const now = performance.now();
    const elapsed = now - this.lastTick;
    this.lastTick = now;
    const waiting = this.tiles.some((t) => ["playing", "joining"].includes(t.element.dataset.state) && t.video.readyState < 3);
    if (this.live) this.clockMs = this.liveClock(); // live: the wall clock leads, whoever waits
    else if (this.advancing) this.clockMs += elapsed;
    this.advancing = this.running && (this.live || !waiting);
    for (const tile of this.tiles) tile.follow(this.clockMs, this.advancing);
    const clock = $("#grid-clock");
    clock.dataset.time = iso(this.clockMs);
    clock.textContent = new Date(this.clockMs).toISOString().replace("T", " ").slice(0, 19) + " UTC";
    const fraction = (this.clockMs - this.windowStart) / (this.windowEnd - this.windowStart);
    this.cursor.style.left = `${fraction * 100}%`;
    this.timeline.setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
    this.timeline.setAttribute("aria-valuetext", iso(this.clockMs));
  }

  writeAddress() {
    if (this.live) return; // the address says live; the moment is now
    const params = new URLSearchParams({ devices: this.tiles.map((t) => t.device).join(","), t: iso(this.clockMs) });
    history.replaceState(null, "", `${location.pathname}?${params}`);
  }

  /** Each tile's wall-clock moment at one instant (tests, figures): {clock, tiles: {device: ms|null},
   * states, positions: {device: media seconds}}. */
  sample() {
    return {
      clock: this.now(),
      tiles: Object.fromEntries(this.tiles.map((t) => [t.device, t.element.dataset.state === "playing" ? t.moment() : null])),
      states: Object.fromEntries(this.tiles.map((t) => [t.device, t.element.dataset.state])),
      positions: Object.fromEntries(this.tiles.map((t) => [t.device, t.video.currentTime])),
    };
  }
}

function main() {
  const params = new URLSearchParams(location.search);
  const devices = [...new Set((params.get("devices") || "").split(",").map((d) => d.trim()).filter(Boolean))];
  const live = params.get("live") === "1";
  const t = live ? Date.now() : parseIso(params.get("t"));
  if (!devices.length || devices.length > MAX_TILES) {
    status(`devices: give 1 to ${MAX_TILES} cameras (devices=a,b,c)`, "error");
    return;
  }
  if (!Number.isFinite(t)) {
    status("t: give the moment to start from (ISO 8601, e.g. 2026-10-20T10:00:00Z)", "error");
    return;
  }
  if (!Hls.isSupported()) {
    status("this browser cannot play HLS with hls.js", "error");
    return;
  }
  const grid = new Grid(devices, t, live);
  window.__grid = grid;
  grid.start()
    .then(() => attachExport(grid)) // export from the grid (grid-export.js), once its timeline is drawn
    .catch((error) => status(`grid: ${error.message}`, "error"));
}

main();
