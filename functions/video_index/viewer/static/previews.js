// Pictures of moments on the day's timeline (docs/viewer.md, "Frame previews"): hovering the
// timeline over footage shows the frame of that moment (GET /devices/{d}/frame, small, at
// most one request in flight and a few a second), and under the timeline a strip shows one
// frame for each hour of the day that has footage. A moment is rounded to the time one pixel
// of the bar spans (whole seconds), so hovering the same place asks for the same picture and
// the browser's cache (the route's answer is immutable) and the API's store answer it.

import { authHeaders, devicePath, url } from "./api.js";
import { h, clear } from "./dom.js";
import { token } from "./auth.js";
import { clockTime, hourMarks, iso } from "./zones.js";

/** Width (px) of a hover preview and of a strip picture, as asked of the frame route. */
const HOVER_WIDTH = 192;
const STRIP_WIDTH = 128;
/** The least time between two hover requests. */
const HOVER_EVERY_MS = 150;

/** The frame route's address of `ms` (the API's base, so it works from any page). */
export function frameUrl(device, ms, width) {
  return url(devicePath(device, "/frame"), { t: iso(ms), width }).href;
}

export class Previews {
  /**
   * @param {HTMLElement} root the timeline's element
   * @param {import("./timeline.js").Timeline} timeline
   * @param {() => string|null} device the open device
   */
  constructor(root, timeline, device) {
    this.root = root;
    this.timeline = timeline;
    this.device = device;
    this.spans = [];
    this.shownMs = null;
    this.pendingMs = null;
    this.lastAt = 0;
    this.timer = 0;
    this.image = h("img", { alt: "", width: String(HOVER_WIDTH), "data-testid": "frame-preview-image" });
    // One picture in flight at a time (a new src would abort the one loading): the moment
    // hovered meanwhile is asked for when it ends.
    this.loading = false;
    this.image.addEventListener("error", () => {
      this.preview.dataset.state = "missing";
      this.caption.textContent = `${this.caption.textContent.split(" ")[0]} (no picture)`;
      this.loaded();
    });
    this.image.addEventListener("load", () => {
      this.preview.dataset.state = "shown";
      this.loaded();
    });
    this.caption = h("figcaption");
    this.preview = h("figure", { class: "frame-preview", hidden: true, "aria-hidden": "true", "data-testid": "frame-preview" },
      this.image, this.caption);
    this.strip = h("ol", { class: "frame-strip", "aria-label": "A frame of each hour with footage", "data-testid": "frame-strip" });
    root.append(this.preview, this.strip);
    root.addEventListener("pointermove", (event) => {
      if (event.target.closest(".track")) this.hover(event.clientX);
    });
    root.addEventListener("pointerleave", () => this.hide());
    // The keyboard's way: moving the focused timeline's cursor shows the cursor's frame.
    root.addEventListener("keyup", (event) => {
      if (event.target === timeline.track && timeline.cursorMs !== null && /^(Arrow|Page|Home|End)/.test(event.key)) {
        this.showAt(timeline.cursorMs);
      }
    });
    root.addEventListener("focusout", () => this.hide());
    timeline.afterRender((day, spans) => this.drawStrip(day, spans));
  }

  // --- hover ----------------------------------------------------------------------------------

  hover(clientX) {
    if (!this.timeline.day || !this.device()) return;
    // A pixel or two beside a short range means that range, as a click does (timeline.js).
    this.showAt(this.timeline.snap(this.timeline.msAt(clientX)));
  }

  /** Show the frame of `near` when footage covers it, else nothing. */
  showAt(near) {
    const day = this.timeline.day;
    const range = this.spans.find(([from, to]) => near >= from && near < to);
    if (!range) {
      this.hide();
      return;
    }
    const ms = Math.min(Math.max(this.rounded(near), Math.ceil(range[0] / 1000) * 1000), range[1] - 1);
    this.preview.style.left = `${(100 * (ms - day.start)) / (day.end - day.start)}%`;
    this.pendingMs = ms;
    const wait = this.lastAt + HOVER_EVERY_MS - performance.now();
    window.clearTimeout(this.timer);
    if (wait > 0) this.timer = window.setTimeout(() => this.load(), wait);
    else this.load();
  }

  /** `ms` rounded down to the time one pixel of the bar spans (whole seconds). */
  rounded(ms) {
    const day = this.timeline.day;
    const pixel = (day.end - day.start) / Math.max(this.timeline.track.clientWidth, 1);
    const step = Math.max(1000, Math.round(pixel / 1000) * 1000);
    return day.start + Math.floor((ms - day.start) / step) * step;
  }

  loaded() {
    this.loading = false;
    if (this.pendingMs !== null && this.pendingMs !== this.shownMs) this.load();
  }

  load() {
    const ms = this.pendingMs;
    if (ms === null || ms === this.shownMs) {
      this.preview.hidden = ms === null;
      return;
    }
    if (this.loading) return; // asked for when the picture loading now ends
    this.loading = true;
    this.lastAt = performance.now();
    this.shownMs = ms;
    this.caption.textContent = clockTime(ms, this.timeline.day.zone);
    this.image.dataset.time = iso(ms);
    this.preview.dataset.state = "loading";
    show(this.image, frameUrl(this.device(), ms, HOVER_WIDTH));
    this.preview.hidden = false;
  }

  hide() {
    window.clearTimeout(this.timer);
    this.pendingMs = null;
    this.preview.hidden = true;
  }

  // --- the strip ------------------------------------------------------------------------------

  /** One frame per hour of the day with footage: the hour's first moment with footage. */
  drawStrip(day, spans) {
    this.spans = spans;
    this.shownMs = null;
    clear(this.strip);
    const device = this.device();
    if (!day || !device) return;
    const marks = hourMarks(day.start, day.end, day.zone);
    const span = day.end - day.start;
    for (const [index, mark] of marks.entries()) {
      const end = index + 1 < marks.length ? marks[index + 1].ms : day.end;
      const first = spans.filter(([from, to]) => from < end && to > mark.ms)
        .map(([from]) => Math.max(from, mark.ms)).sort((a, b) => a - b)[0];
      if (first === undefined) continue;
      const at = Math.ceil(first / 1000) * 1000; // a whole second inside the footage
      const image = h("img", {
        alt: `Frame at ${clockTime(at, day.zone)}`, width: String(STRIP_WIDTH), loading: "lazy",
        "data-time": iso(at), onerror: (event) => { event.target.closest("li").hidden = true; },
      });
      this.strip.append(h("li", {
        style: { left: `${(100 * (mark.ms - day.start)) / span}%`, width: `${(100 * (end - mark.ms)) / span}%` },
        "data-testid": "strip-frame",
      }, image));
      show(image, frameUrl(device, at, STRIP_WIDTH));
    }
  }
}

/** Show the picture at `address` in `image`: as its src, or — signed in with a token, which
 * an <img> cannot send — fetched with it and shown from a blob (`data-src` keeps the
 * address). */
function show(image, address) {
  image.dataset.src = address;
  if (!token()) {
    image.src = address;
    return;
  }
  fetch(address, { headers: authHeaders() })
    .then((response) => (response.ok ? response.blob() : Promise.reject(new Error(String(response.status)))))
    .then((blob) => {
      if (image.dataset.src !== address) return;
      if (image.src.startsWith("blob:")) URL.revokeObjectURL(image.src);
      image.src = URL.createObjectURL(blob);
    })
    .catch(() => image.dispatchEvent(new Event("error")));
}
