// Sensor and analysis entries of the playing moment. They are fetched by window (the
// moment minus 10 minutes to plus 20), again only when the moment leaves the window, and
// shown in step with playback: an entry with a duration while the moment is inside it, an
// instantaneous reading (duration 0) for a minute after it was taken, until the next one of
// its kind. Small entries (JSON, text) are read through their presigned URL and shown.

import { all, devicePath } from "./api.js";
import { h, clear } from "./dom.js";
import { clockTime, iso, parseIso } from "./zones.js";

const BEFORE_MS = 10 * 60_000;
const AFTER_MS = 20 * 60_000;
const POINT_HOLD_MS = 60_000;
const MAX_CONTENT_BYTES = 16_384;

export class Overlays {
  constructor(list) {
    this.list = list;
    this.reset(null);
  }

  reset(device) {
    this.device = device;
    this.window = null;
    this.entries = [];
    this.shown = null;
    this.pending = null;
    this.contents = new Map();
    clear(this.list);
  }

  /** Show the entries of the instant `ms` (fetching their window if needed). */
  async at(ms, zone) {
    if (!this.device || ms === null) return;
    this.zone = zone;
    if (!this.window || ms < this.window[0] || ms >= this.window[1]) {
      if (!this.pending) this.pending = this.fetch(ms);
      await this.pending;
    }
    this.show(ms);
  }

  async fetch(ms) {
    const window = [ms - BEFORE_MS, ms + AFTER_MS];
    const device = this.device;
    try {
      const items = await all(devicePath(device, "/overlays"), { from: iso(window[0]), to: iso(window[1]), limit: 500 });
      if (device === this.device) {
        this.entries = items.map((item) => ({ ...item, startMs: parseIso(item.start), endMs: parseIso(item.end) }));
        this.window = window;
      }
    } finally {
      this.pending = null;
    }
  }

  /** The entries of the moment `ms`. */
  of(ms) {
    const current = this.entries.filter((e) => e.endMs > e.startMs && e.startMs <= ms && ms < e.endMs);
    const latest = new Map();
    for (const entry of this.entries) {
      if (entry.endMs > entry.startMs || entry.startMs > ms || ms - entry.startMs > POINT_HOLD_MS) continue;
      const before = latest.get(entry.kind);
      if (!before || before.startMs < entry.startMs) latest.set(entry.kind, entry);
    }
    return [...current, ...latest.values()].sort((a, b) => a.startMs - b.startMs);
  }

  show(ms) {
    const entries = this.of(ms);
    const signature = entries.map((e) => e.id).join(",");
    if (signature === this.shown) return;
    this.shown = signature;
    clear(this.list);
    if (!entries.length) {
      this.list.append(h("li", { class: "empty", text: "No sensor or analysis data at this moment." }));
      return;
    }
    for (const entry of entries) {
      const when = entry.endMs > entry.startMs
        ? `${clockTime(entry.startMs, this.zone)} – ${clockTime(entry.endMs, this.zone)}`
        : clockTime(entry.startMs, this.zone);
      const content = h("div", { class: "content" });
      this.list.append(h("li", {
        "data-testid": "overlay", "data-kind": entry.kind, "data-id": entry.id,
        "data-start": entry.start, "data-end": entry.end,
      }, h("span", { class: `badge ${entry.kind}`, text: entry.kind }), h("span", { class: "when", text: when }), content));
      this.fill(entry, content);
    }
  }

  async fill(entry, element) {
    if (!entry.url || entry.size > MAX_CONTENT_BYTES) {
      if (entry.url) element.append(h("a", { href: entry.url, target: "_blank", rel: "noopener", text: "open" }));
      return;
    }
    let text = this.contents.get(entry.id);
    if (text === undefined) {
      try {
        const response = await fetch(entry.url);
        text = response.ok ? await response.text() : null;
      } catch {
        text = null;
      }
      this.contents.set(entry.id, text);
    }
    element.replaceChildren(text === null ? h("em", { text: "content unavailable" }) : summary(text));
  }
}

/** A readable summary of an entry's content: the fields of a JSON object, or the text. */
function summary(text) {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) {
      return h("dl", {}, Object.entries(value).slice(0, 8).flatMap(([key, field]) => [
        h("dt", { text: key }),
        h("dd", { text: typeof field === "object" ? JSON.stringify(field) : String(field) }),
      ]));
    }
  } catch {
    // not JSON: shown as text
  }
  return h("span", { text: text.length > 240 ? `${text.slice(0, 240)}…` : text });
}
