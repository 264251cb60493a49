// A local day as a 24-hour bar (23 or 25 hours on a DST change): the continuous ranges as
// they are (gaps visible, each saying why on hover), annotated spans under them, hour marks in the chosen zone, and a
// cursor at the playing moment. A click anywhere picks that moment; so do Enter or Space on
// the focused bar after moving its cursor with the arrow keys (a minute; Shift: ten;
// Page Up/Down: an hour; Home/End: the day's ends).

import { h, clear } from "./dom.js";
import { duration } from "./format.js";
import { gapAt, gapText } from "./gaps.js";
import { clockTime, hourMarks, iso, parseIso } from "./zones.js";

export class Timeline {
  constructor(root, { onPick }) {
    this.root = root;
    this.onPick = onPick;
    this.day = null;
    this.cursorMs = null;
    this.track = h("div", {
      class: "track", tabindex: "0", role: "slider", "aria-label": "Time of day: pick a moment to play",
      "aria-valuemin": "0", "aria-valuemax": "86400", "aria-valuenow": "0", "aria-valuetext": "no moment chosen",
      "data-testid": "timeline",
    });
    this.cursor = h("div", { class: "cursor", hidden: true });
    this.hover = h("div", { class: "hover", hidden: true });
    this.hours = h("div", { class: "hours", "aria-hidden": "true" });
    clear(root).append(this.track, this.hours);
    this.track.addEventListener("click", (event) => {
      const clickedAt = performance.now();
      this.pick(this.snap(this.msAt(event.clientX)), clickedAt);
    });
    this.track.addEventListener("pointermove", (event) => this.showHover(event.clientX));
    this.track.addEventListener("pointerleave", () => { this.hover.hidden = true; });
    this.track.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** Draw [start, end) of the day with its ranges ({start, end} as the API gives them), its
   * gaps ({startMs, endMs, reason, deletion}: each says why on hover) and annotated spans
   * ([fromMs, toMs] pairs). */
  render({ start, end, zone, ranges, gaps = [], annotated = [] }) {
    this.day = { start, end, zone, gaps };
    this.spans = ranges.map((range) => [parseIso(range.start), parseIso(range.end)]);
    const span = end - start;
    const left = (ms) => `${(100 * (Math.max(ms, start) - start)) / span}%`;
    const width = (from, to) => `${(100 * (Math.min(to, end) - Math.max(from, start))) / span}%`;
    clear(this.track);
    for (const range of ranges) {
      const from = parseIso(range.start);
      const to = parseIso(range.end);
      this.track.append(h("div", {
        class: "range", "data-testid": "range", "data-start": range.start, "data-end": range.end,
        title: `${clockTime(from, zone)} – ${clockTime(to, zone)} (${duration(to - from)})`,
        style: { left: left(from), width: width(from, to) },
      }));
    }
    for (const gap of gaps) {
      this.track.append(h("div", {
        class: "gap", "data-testid": "gap", "data-reason": gap.reason, "data-start": gap.start,
        "data-end": gap.end, title: gapText(gap, zone),
        style: { left: left(gap.startMs), width: width(gap.startMs, gap.endMs) },
      }));
    }
    for (const [from, to] of annotated) {
      if (to <= start || from >= end) continue;
      this.track.append(h("div", {
        class: "annotated", style: { left: left(from), width: width(from, Math.max(to, from + span / 500)) },
      }));
    }
    this.track.append(this.cursor, this.hover);
    clear(this.hours);
    const marks = hourMarks(start, end, zone);
    for (const mark of marks) {
      const major = mark.hour % 6 === 0;
      this.hours.append(h("span", {
        class: major ? "tick major" : "tick", style: { left: left(mark.ms) },
        text: mark.hour % 3 === 0 ? String(mark.hour).padStart(2, "0") : "",
      }));
    }
    this.track.setAttribute("aria-valuemin", "0");
    this.track.setAttribute("aria-valuemax", String(Math.round(span / 1000)));
    this.setCursor(this.cursorMs !== null && this.cursorMs >= start && this.cursorMs < end ? this.cursorMs : null);
    this.rendered();
  }

  /** Call `listener(day, spans)` after each drawing of a day (previews.js: its strip). */
  afterRender(listener) {
    this.renderListeners = [...(this.renderListeners || []), listener];
  }

  rendered() {
    for (const listener of this.renderListeners || []) listener(this.day, this.spans);
  }

  msAt(clientX) {
    const box = this.track.getBoundingClientRect();
    const fraction = Math.min(Math.max((clientX - box.left) / box.width, 0), 0.999999);
    return Math.floor(this.day.start + fraction * (this.day.end - this.day.start));
  }

  /** A click a few pixels beside a short range means that range: on a 24-hour bar a pixel
   * is a minute or two, and a short range is drawn wider than it is. */
  snap(ms) {
    const slop = (4 * (this.day.end - this.day.start)) / Math.max(this.track.clientWidth, 1);
    let best = ms;
    let distance = Infinity;
    for (const [from, to] of this.spans) {
      if (ms >= from && ms < to) return ms;
      const nearest = ms < from ? from : to - 1;
      if (Math.abs(nearest - ms) <= slop && Math.abs(nearest - ms) < distance) {
        best = nearest;
        distance = Math.abs(nearest - ms);
      }
    }
    return best;
  }

  showHover(clientX) {
    if (!this.day) return;
    const ms = this.msAt(clientX);
    this.hover.hidden = false;
    const gap = gapAt(this.day.gaps, ms);
    this.hover.textContent = clockTime(ms, this.day.zone) + (gap ? ` · ${gap.reason}` : "");
    this.hover.style.left = `${(100 * (ms - this.day.start)) / (this.day.end - this.day.start)}%`;
  }

  /** Show the cursor at `ms` (null hides it). */
  setCursor(ms) {
    this.cursorMs = ms;
    if (!this.day || ms === null || ms < this.day.start || ms >= this.day.end) {
      this.cursor.hidden = true;
      // a slider always has a value (ARIA): the day's start, said as "no moment chosen"
      this.track.setAttribute("aria-valuenow", "0");
      this.track.setAttribute("aria-valuetext", "no moment chosen");
      return;
    }
    this.cursor.hidden = false;
    this.cursor.style.left = `${(100 * (ms - this.day.start)) / (this.day.end - this.day.start)}%`;
    this.cursor.dataset.time = iso(ms);
    this.track.setAttribute("aria-valuenow", String(Math.round((ms - this.day.start) / 1000)));
    this.track.setAttribute("aria-valuetext", clockTime(ms, this.day.zone));
  }

  pick(ms, clickedAt = performance.now()) {
    this.setCursor(ms);
    this.onPick(ms, clickedAt);
  }

  onKey(event) {
    if (!this.day) return;
    const minute = 60_000;
    const steps = {
      ArrowLeft: -minute, ArrowRight: minute, ArrowDown: -minute, ArrowUp: minute,
      PageDown: -60 * minute, PageUp: 60 * minute,
    };
    let ms = this.cursorMs ?? this.day.start;
    if (event.key in steps) ms += steps[event.key] * (event.shiftKey ? 10 : 1);
    else if (event.key === "Home") ms = this.day.start;
    else if (event.key === "End") ms = this.day.end - 1000;
    else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      this.pick(ms);
      return;
    } else {
      return;
    }
    event.preventDefault();
    this.setCursor(Math.min(Math.max(ms, this.day.start), this.day.end - 1000));
  }
}

/** Draw one layer of bands on the timeline's day: `bands` of {from, to, attrs} (ms), each a
 * `div.${layer}` placed like the ranges (clipped to the day). The layer's old bands go first,
 * so it can be drawn again after every render; bands go under the ranges (first in the track). */
export function drawBands(timeline, layer, bands) {
  if (!timeline.day) return;
  const { start, end } = timeline.day;
  const span = end - start;
  for (const old of timeline.track.querySelectorAll(`:scope > .${layer}`)) old.remove();
  const first = timeline.track.firstChild;
  for (const { from, to, attrs = {} } of bands) {
    if (to <= start || from >= end) continue;
    const left = Math.max(from, start);
    const right = Math.min(to, end);
    timeline.track.insertBefore(h("div", {
      ...attrs, class: layer,
      style: {
        ...attrs.style, left: `${(100 * (left - start)) / span}%`, width: `${(100 * (right - left)) / span}%`,
      },
    }), first);
  }
}
