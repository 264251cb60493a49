// What the calendar and the day's timeline show besides video (docs/viewer.md): the windows
// an evidence hold keeps past retention (docs/holds.md), and the day's activity — files
// started per quarter hour, as GET /devices/{d}/activity counts them — as shading.

import { devicePath, get } from "./api.js";
import { h } from "./dom.js";
import { drawBands } from "./timeline.js";
import { clockTime, dayBounds, iso, parseIso } from "./zones.js";

/** The activity step the timeline is shaded by. */
export const ACTIVITY_STEP = "PT15M";
/** The longest window one GET of holds covers (the API's limit). */
const MAX_WINDOW_MS = 31 * 86_400_000;

/** The active holds of `device` overlapping [from, to), as {from, to, hold}: one GET per 31 days. */
export async function activeHolds(device, from, to) {
  const found = new Map();
  for (let low = from; low < to; low += MAX_WINDOW_MS) {
    const answer = await get(devicePath(device, "/holds"), {
      from: iso(low), to: iso(Math.min(low + MAX_WINDOW_MS, to)),
    });
    for (const hold of answer.items) {
      if (hold.active) found.set(hold.hold_id, { from: parseIso(hold.from), to: parseIso(hold.to), hold });
    }
  }
  return [...found.values()];
}

/** Mark the calendar's days that overlap an active hold (`data-held`, a "held" note). */
export async function markHeldDays(table, device, dates, zone) {
  if (!dates.length) return;
  const from = dayBounds(dates[0], zone)[0];
  const to = dayBounds(dates[dates.length - 1], zone)[1];
  const holds = await activeHolds(device, from, to);
  if (table.dataset.device !== device || table.dataset.month !== dates[0].slice(0, 7)) return;
  for (const date of dates) {
    const [start, end] = dayBounds(date, zone);
    const held = holds.filter((w) => w.from < end && w.to > start);
    const button = table.querySelector(`[data-testid="day-${date}"]`);
    if (!button || !held.length) continue;
    button.dataset.held = "true";
    button.title += ` · held: ${held.map((w) => w.hold.reason).join("; ")}`;
    button.append(h("span", { class: "held-mark", text: "held" }));
  }
}

/** The open day's holds and activity on the timeline, redrawn after each of its renders. */
export class DayMarks {
  constructor(timeline) {
    this.timeline = timeline;
    this.key = null;
    this.holds = [];
    this.activity = [];
  }

  async load(device, start, end, zone) {
    const key = `${device} ${start} ${end} ${zone}`;
    this.key = key;
    this.holds = [];
    this.activity = [];
    const window = { from: iso(start), to: iso(end) };
    const [holds, activity] = await Promise.all([
      activeHolds(device, start, end),
      get(devicePath(device, "/activity"), { ...window, kind: "video", step: ACTIVITY_STEP, tz: zone }),
    ]);
    if (this.key !== key) return;
    this.holds = holds;
    this.activity = activity.items.map((s) => ({ ...s, from: parseIso(s.start), to: parseIso(s.end) }));
    this.zone = zone;
    this.draw();
  }

  draw() {
    const most = Math.max(0, ...this.activity.map((s) => s.count));
    drawBands(this.timeline, "activity", this.activity.filter((s) => s.count > 0).map((s) => ({
      from: s.from, to: s.to,
      attrs: {
        "data-start": s.start, "data-end": s.end, "data-count": s.count, "aria-hidden": "true",
        style: { opacity: (0.1 + (0.35 * s.count) / most).toFixed(3) },
      },
    })));
    drawBands(this.timeline, "held", this.holds.map((w) => ({
      from: w.from, to: w.to,
      attrs: {
        "data-from": w.hold.from, "data-to": w.hold.to, "data-hold": w.hold.hold_id,
        title: `held ${clockTime(w.from, this.zone)} – ${clockTime(w.to, this.zone)}: ${w.hold.reason}`,
      },
    })));
  }
}
