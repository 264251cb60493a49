// The open day's continuous ranges as a list (docs/viewer.md "Screens"): each a button that
// plays from its start, with its clock times in the zone and its length.

import { clear, h } from "./dom.js";
import { duration } from "./format.js";
import { clockTime } from "./zones.js";

/** `ranges`: [{start, startMs, endMs}]; `onPlay(startMs, clickedAt)` plays from one. */
export function renderRanges(list, ranges, zone, onPlay) {
  clear(list);
  if (!ranges.length) {
    list.append(h("li", { class: "empty", text: "No video on this day." }));
    return;
  }
  for (const range of ranges) {
    list.append(h("li", {}, h("button", {
      type: "button", class: "range-item", "data-start": range.start,
      onclick: (event) => { event.preventDefault(); onPlay(range.startMs, performance.now()); },
    }, `${clockTime(range.startMs, zone)} – ${clockTime(range.endMs, zone)}`,
    h("span", { class: "length", text: ` ${duration(range.endMs - range.startMs)}` }))));
  }
}
