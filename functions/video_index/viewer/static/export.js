// Export from the page (docs/viewer.md, "Export a clip"): choose a window of the open day —
// drag across the timeline, or type the two times (keyboard) — and start an export through
// the API (POST /devices/{d}/exports, at most 6 hours); the page follows the job
// (GET /exports/{id}) until it is done, then offers the MP4 for download. What goes wrong is
// said in words: a window too long, no footage in it, not allowed (403), a failed job.

import { can } from "./access.js";
import { h } from "./dom.js";
import { ExportJob, exportWords } from "./export-job.js";
import { TimeField } from "./form-times.js";
import { clockTime, iso } from "./zones.js";

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
    this.current = null; // the ExportJob followed
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
      this.start().catch((error) => this.say(exportWords(error, this.window(false)), "error"));
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
    if (this.current) this.current.stop();
    this.current = null;
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

  // --- the export (export-job.js follows it and words it) ----------------------------------

  async start() {
    if (!this.day) return;
    if (this.current) this.current.stop();
    this.link.hidden = true;
    const [from, to] = this.window();
    this.current = new ExportJob({ device: this.day.device, from, to, zone: this.day.zone, onChange: (update) => this.show(update) });
    await this.current.start();
  }

  /** Draw one step of the job followed: its state line, progress and download link. */
  show({ job, state, kind, message, busy, percent, url, linkText }) {
    if (job) {
      this.form.dataset.exportId = job.export_id;
      if (state !== "empty") this.form.dataset.exportState = job.state;
    }
    this.progress.hidden = !busy;
    if (busy && percent === null && state === "starting") this.progress.removeAttribute("value");
    if (busy && percent !== null) {
      this.progress.max = 100;
      this.progress.value = percent;
    }
    if (state === "done") {
      this.link.href = url;
      this.link.textContent = linkText;
    }
    this.link.hidden = state !== "done";
    this.say(message, kind);
  }

  say(message, kind) {
    this.stateLine.textContent = message;
    this.stateLine.dataset.kind = kind;
  }
}

