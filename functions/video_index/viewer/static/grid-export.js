// Export from the grid of cameras (docs/viewer.md, "Cameras in step", "Export from the grid"):
// a window chosen on the grid's timeline — a drag across it, or `s` and `e` on the focused
// timeline to put its start and end at the clock's moment — is exported for one tile or all
// tiles: one export job per camera (export-job.js: POST /devices/{d}/exports, then
// GET /exports/{id} every second), each with its own progress, download link and words for
// what went wrong (too long, no footage of that camera in the window, 403). Shown only when
// /me allows `export`. It reads the grid (its tiles, window, timeline and clock) and never
// drives its playback: a drag's closing click is kept from the timeline, nothing else is.

import { can, loadAccess } from "./access.js";
import { $, h, status } from "./dom.js";
import { ExportJob } from "./export-job.js";
import { clockTime, dateTime, iso } from "./zones.js";

/** A pointer move shorter than this (px) is a click (a moment to play), not a selection. */
const DRAG_PX = 5;
/** The grid's clock and timeline are in UTC. */
const ZONE = "UTC";

export class GridExport {
  /**
   * @param {{tiles: {device: string}[], windowStart: number, windowEnd: number,
   *          timeline: HTMLElement, now: () => number}} grid
   * @param {HTMLElement} panel the export section of grid.html
   */
  constructor(grid, panel) {
    this.grid = grid;
    this.panel = panel;
    this.form = $("form", panel);
    this.windowLine = $("[data-testid=grid-export-window]", panel);
    this.list = $("[data-testid=grid-exports]", panel);
    this.window = null; // [from, to] ms
    this.jobs = new Map(); // device → ExportJob
    this.drag = null;
    this.dragged = false;
    const target = this.form.elements.target;
    for (const tile of grid.tiles) target.append(h("option", { value: tile.device }, tile.device));
    this.selection = h("div", { class: "grid-selection", hidden: true, "aria-hidden": "true", "data-testid": "grid-export-selection" });
    grid.timeline.append(this.selection);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.start();
    });
    this.listenToTheTimeline();
  }

  /** The instant (ms) at `clientX` on the timeline. */
  msAt(clientX) {
    const box = this.grid.timeline.getBoundingClientRect();
    const fraction = Math.min(Math.max((clientX - box.left) / box.width, 0), 1);
    return this.grid.windowStart + fraction * (this.grid.windowEnd - this.grid.windowStart);
  }

  listenToTheTimeline() {
    const timeline = this.grid.timeline;
    timeline.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      this.drag = { x: event.clientX, from: this.msAt(event.clientX), pointer: event.pointerId };
      this.dragged = false;
    });
    timeline.addEventListener("pointermove", (event) => {
      if (!this.drag || event.pointerId !== this.drag.pointer) return;
      if (!this.dragged && Math.abs(event.clientX - this.drag.x) < DRAG_PX) return;
      if (!this.dragged) timeline.setPointerCapture(event.pointerId);
      this.dragged = true;
      this.select(this.drag.from, this.msAt(event.clientX));
    });
    const end = (event) => {
      if (!this.drag || event.pointerId !== this.drag.pointer) return;
      if (this.dragged) this.select(this.drag.from, this.msAt(event.clientX));
      this.drag = null;
    };
    timeline.addEventListener("pointerup", end);
    timeline.addEventListener("pointercancel", end);
    // The click that ends a drag is the selection's, not a moment to seek to: stopped on its
    // way down (the listener sits on the timeline's parent), before the grid sees it.
    timeline.parentElement.addEventListener("click", (event) => {
      if (!this.dragged) return;
      this.dragged = false;
      event.stopPropagation();
      event.preventDefault();
      this.form.elements.start.focus();
    }, true);
    // The keyboard's way: on the focused timeline, S and E put the window's start and end at
    // the clock's moment (moved with the arrow keys).
    timeline.addEventListener("keydown", (event) => {
      const key = event.key.toLowerCase();
      if ((key !== "s" && key !== "e") || event.ctrlKey || event.metaKey || event.altKey) return;
      event.preventDefault();
      const { windowStart, windowEnd } = this.grid;
      const ms = this.grid.now();
      const chosen = this.window;
      if (key === "s") this.select(ms, chosen && chosen[1] > ms ? chosen[1] : Math.min(ms + 60_000, windowEnd));
      else this.select(chosen && chosen[0] < ms ? chosen[0] : Math.max(ms - 60_000, windowStart), ms);
    });
  }

  /** Choose [from, to) (ms): said in the window line, marked on the timeline. */
  select(from, to) {
    const [a, b] = from <= to ? [from, to] : [to, from];
    this.window = [Math.floor(a), Math.floor(b)]; // whole ms, as the clock's ISO time shows them
    const { windowStart, windowEnd } = this.grid;
    const span = windowEnd - windowStart;
    Object.assign(this.selection.style, {
      left: `${(100 * (this.window[0] - windowStart)) / span}%`,
      width: `${Math.max((100 * (this.window[1] - this.window[0])) / span, 0.2)}%`,
    });
    this.selection.dataset.from = iso(this.window[0]);
    this.selection.dataset.to = iso(this.window[1]);
    this.selection.hidden = false;
    this.windowLine.dataset.kind = "info";
    this.windowLine.textContent = `Export window: ${dateTime(this.window[0], ZONE)} – ${clockTime(this.window[1], ZONE)} UTC`;
  }

  /** One export job per chosen camera (all tiles, or the one picked), each followed apart. */
  async start() {
    if (!this.window || !(this.window[1] > this.window[0])) {
      this.windowLine.dataset.kind = "error";
      this.windowLine.textContent = "Choose a window first: drag across the timeline, or press s and e on it.";
      return;
    }
    const picked = this.form.elements.target.value;
    const devices = picked ? [picked] : this.grid.tiles.map((tile) => tile.device);
    const [from, to] = this.window;
    await Promise.all(devices.map((device) => {
      const previous = this.jobs.get(device);
      if (previous) previous.stop();
      const item = this.item(device);
      const job = new ExportJob({ device, from, to, zone: ZONE, onChange: (update) => this.show(item, update) });
      this.jobs.set(device, job);
      return job.start();
    }));
  }

  /** The list item of `device`'s export, made afresh (a new job replaces the last). */
  item(device) {
    const old = this.list.querySelector(`[data-device="${CSS.escape(device)}"]`);
    const item = h("li", { class: "grid-export-job", "data-device": device, "data-testid": `grid-export-${device}` },
      h("span", { class: "grid-export-device" }, device),
      h("progress", { max: "100", "aria-label": `Export progress of ${device}`, hidden: true }),
      h("span", { class: "export-state", role: "status", "data-testid": `grid-export-state-${device}` }),
      h("a", { class: "download", href: "#", download: "", hidden: true, "data-testid": `grid-export-download-${device}` }));
    if (old) old.replaceWith(item);
    else this.list.append(item);
    return item;
  }

  /** Draw one step of a camera's job in its list item. */
  show(item, { job, state, kind, message, busy, percent, url, linkText }) {
    item.dataset.state = state;
    if (job) item.dataset.exportId = job.export_id;
    const progress = $("progress", item);
    progress.hidden = !busy;
    if (percent === null || percent === undefined) progress.removeAttribute("value");
    else progress.value = percent;
    const link = $("a.download", item);
    if (state === "done") {
      link.href = url;
      link.textContent = `${linkText} of ${item.dataset.device}`;
    }
    link.hidden = state !== "done";
    const line = $(".export-state", item);
    line.textContent = message;
    line.dataset.kind = kind;
  }
}

/** Ask /me; when the caller may export, show the grid's export panel and wire it. */
export async function attachExport(grid) {
  const panel = $("#grid-export");
  try {
    await loadAccess(); // shows or hides [data-needs] (the panel)
  } catch (error) {
    status(`who you are: ${error.message}`, "error");
    return null;
  }
  if (!panel || !can("export")) return null;
  const exporter = new GridExport(grid, panel);
  panel.dataset.ready = "true";
  return exporter;
}
