// Export from the page (docs/viewer.md, "Export a clip"): choose a window of the open day —
// drag across the timeline, or type the two times (keyboard) — and start an export through
// the API (POST /devices/{d}/exports, at most 6 hours); the page follows the job
// (GET /exports/{id}) until it is done, then offers the MP4 for download. What goes wrong is
// said in words: a window too long, no footage in it, not allowed (403), a failed job.

import { can } from "./access.js";
import { ApiError, devicePath, request } from "./api.js";
import { h } from "./dom.js";
import { bytes, duration } from "./format.js";
import { TimeField } from "./form-times.js";
import { clockTime, dateTime, iso } from "./zones.js";

/** The API's bound on one export (docs/playback.md, "Clip export"). */
export const MAX_EXPORT_MS = 6 * 3_600_000;
/** How often a running job is asked after. */
const POLL_MS = 1_000;
/** A pointer move shorter than this (px) is a click (a moment to play), not a selection. */
const DRAG_PX = 5;

export class Exporter {
  /**
   * @param {HTMLFormElement} form the export form (index.html)
   * @param {HTMLElement} root the timeline's element (its track is `.track`)
   * @param {{msAt: (clientX: number) => number}} timeline
   */
  constructor(form, root, timeline) {
    this.form = form;
    this.root = root;
    this.timeline = timeline;
    this.day = null; // {device, start, end, zone}
    this.job = null; // the export being followed
    this.timer = 0;
    this.drag = null; // {x, from} while the pointer is down on the track
    this.dragged = false;
    this.from = new TimeField(form.elements.from, form.elements.fromOffset);
    this.to = new TimeField(form.elements.to, form.elements.toOffset);
    this.stateLine = form.querySelector(".export-state");
    this.progress = form.querySelector("progress");
    this.link = form.querySelector("a.download");
    this.selection = h("div", { class: "selection", hidden: true, "aria-hidden": "true", "data-testid": "export-selection" });
    root.append(this.selection);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.start().catch((error) => this.say(this.words(error), "error"));
    });
    form.addEventListener("input", () => this.showSelection());
    this.listenToTheTrack();
  }

  /** The open day (the form's times are read and shown in its zone). */
  setDay({ device, start, end, zone }) {
    const sameDevice = this.day && this.day.device === device;
    this.day = { device, start, end, zone };
    if (!sameDevice) this.reset();
    const [from, to] = this.window(false) || [Number.NaN, Number.NaN];
    this.from.set(Number.isFinite(from) ? from : Number.NaN, zone);
    this.to.set(Number.isFinite(to) ? to : Number.NaN, zone);
    this.showSelection();
  }

  /** Forget the job followed and the window chosen (another device). */
  reset() {
    window.clearTimeout(this.timer);
    this.job = null;
    this.from.set(Number.NaN, this.day ? this.day.zone : "UTC");
    this.to.set(Number.NaN, this.day ? this.day.zone : "UTC");
    this.say("", "info");
    this.progress.hidden = true;
    this.link.hidden = true;
  }

  /** Choose [from, to) (ms): the fields are filled, the timeline marks it. */
  select(from, to) {
    const [a, b] = from <= to ? [from, to] : [to, from];
    this.from.set(a, this.day.zone);
    this.to.set(b, this.day.zone);
    this.showSelection();
  }

  /** [from, to) the fields name, or null; `strict` throws what is wrong instead. */
  window(strict = true) {
    try {
      const from = this.from.value("From");
      const to = this.to.value("To");
      if (!(to > from)) throw new Error("To must be after From");
      return [from, to];
    } catch (error) {
      if (strict) throw error;
      return null;
    }
  }

  // --- the timeline: a drag selects (a click still plays) -----------------------------------

  listenToTheTrack() {
    const track = () => this.root.querySelector(".track");
    this.root.addEventListener("pointerdown", (event) => {
      if (!this.day || !can("export") || event.button !== 0 || event.target !== track() && !track().contains(event.target)) return;
      this.drag = { x: event.clientX, from: this.timeline.msAt(event.clientX), pointer: event.pointerId };
      this.dragged = false;
    });
    this.root.addEventListener("pointermove", (event) => {
      if (!this.drag || event.pointerId !== this.drag.pointer) return;
      if (!this.dragged && Math.abs(event.clientX - this.drag.x) < DRAG_PX) return;
      if (!this.dragged) track().setPointerCapture(event.pointerId);
      this.dragged = true;
      this.select(this.drag.from, this.timeline.msAt(event.clientX));
    });
    const end = (event) => {
      if (!this.drag || event.pointerId !== this.drag.pointer) return;
      if (this.dragged) this.select(this.drag.from, this.timeline.msAt(event.clientX));
      this.drag = null;
    };
    this.root.addEventListener("pointerup", end);
    this.root.addEventListener("pointercancel", end);
    // The keyboard's way: on the focused timeline, S and E put the window's start and end
    // at its cursor (moved with the arrow keys).
    this.root.addEventListener("keydown", (event) => {
      const key = event.key.toLowerCase();
      if (!this.day || !can("export") || event.target !== track() || event.ctrlKey || event.metaKey || event.altKey) return;
      if (key !== "s" && key !== "e") return;
      const ms = this.timeline.cursorMs ?? this.day.start;
      event.preventDefault();
      const window = this.window(false);
      if (key === "s") this.select(ms, window && window[1] > ms ? window[1] : Math.min(ms + 60_000, this.day.end));
      else this.select(window && window[0] < ms ? window[0] : Math.max(ms - 60_000, this.day.start), ms);
      this.say(`Export window: ${clockTime(this.from.value("From"), this.day.zone)} – ${clockTime(this.to.value("To"), this.day.zone)}`, "info");
    });
    // The click that ends a drag is the selection's, not a moment to play: stopped on its
    // way down, before the track's own listener sees it.
    this.root.addEventListener("click", (event) => {
      if (!this.dragged) return;
      this.dragged = false;
      event.stopPropagation();
      event.preventDefault();
      this.form.elements.start.focus();
    }, true);
  }

  showSelection() {
    const window = this.day && this.window(false);
    if (!window || window[1] <= this.day.start || window[0] >= this.day.end) {
      this.selection.hidden = true;
      return;
    }
    const span = this.day.end - this.day.start;
    const from = Math.max(window[0], this.day.start);
    const to = Math.min(window[1], this.day.end);
    Object.assign(this.selection.style, {
      left: `${(100 * (from - this.day.start)) / span}%`,
      width: `${Math.max((100 * (to - from)) / span, 0.2)}%`,
    });
    this.selection.dataset.from = iso(window[0]);
    this.selection.dataset.to = iso(window[1]);
    this.selection.hidden = false;
  }

  // --- the export ---------------------------------------------------------------------------

  async start() {
    if (!this.day) return;
    window.clearTimeout(this.timer);
    this.link.hidden = true;
    const [from, to] = this.window();
    const { device, zone } = this.day;
    const what = `${dateTime(from, zone)} – ${clockTime(to, zone)}`;
    this.say(`Starting the export of ${what}…`, "info");
    this.progress.hidden = false;
    this.progress.removeAttribute("value");
    let answer;
    try {
      answer = await request(devicePath(device, "/exports"), {
        method: "POST", body: { from: iso(from), to: iso(to) }, user: true,
      });
    } catch (error) {
      this.progress.hidden = true;
      throw error;
    }
    const job = answer.data;
    this.job = job;
    this.form.dataset.exportId = job.export_id;
    if (job.segments === 0) {
      // The API queues it anyway (and fails it); the person learns now, in words.
      this.progress.hidden = true;
      this.say(`No footage between ${what} (no playable video file): there is nothing to export. Choose a window over the green ranges.`, "error");
      return;
    }
    this.follow(job);
  }

  follow(job) {
    this.job = job;
    this.form.dataset.exportState = job.state;
    const files = `${job.segments} file${job.segments === 1 ? "" : "s"}, ${bytes(job.bytes)}`;
    if (job.state === "done") {
      this.progress.hidden = true;
      this.link.href = job.url;
      this.link.textContent = `Download the clip (${files})`;
      this.link.hidden = false;
      this.say("The clip is ready.", "info");
      return;
    }
    if (job.state === "failed") {
      this.progress.hidden = true;
      this.say(`The export failed: ${job.error || "no reason given"}.`, "error");
      return;
    }
    const done = Math.round(100 * (Number(job.progress) || 0));
    if (job.state === "running") {
      this.progress.max = 100;
      this.progress.value = done;
    }
    this.say(job.state === "queued"
      ? `Export queued (${files})…`
      : `Making the clip of ${files}: ${done} %…`, "info");
    this.timer = window.setTimeout(() => this.poll(job.export_id), POLL_MS);
  }

  async poll(exportId) {
    if (!this.job || this.job.export_id !== exportId) return;
    try {
      const { data } = await request(`exports/${encodeURIComponent(exportId)}`);
      if (this.job && this.job.export_id === exportId) this.follow(data);
    } catch (error) {
      this.progress.hidden = true;
      this.say(this.words(error), "error");
    }
  }

  /** What went wrong, said for a person. */
  words(error) {
    if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
    const detail = (error.body && error.body.error) || {};
    const message = detail.message || error.message;
    if (error.status === 403) return "You may not export this camera's video: exports need the operator role for this camera (403).";
    if (error.status === 400 && /hours/.test(message)) {
      const window = this.window(false);
      const asked = window ? ` (${duration(window[1] - window[0])} asked)` : "";
      return `That window is too long${asked}: one export covers at most 6 hours. Choose a shorter window.`;
    }
    if (error.status === 400) return `The export was refused: ${message}.`;
    if (error.status === 404) return `Not found: ${message}.`;
    return `The export could not start: ${message}.`;
  }

  say(message, kind) {
    this.stateLine.textContent = message;
    this.stateLine.dataset.kind = kind;
  }
}

