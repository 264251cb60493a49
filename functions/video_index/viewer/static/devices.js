// The device list: each device with its totals per kind (segments, size, recorded time)
// and its first and last video.

import { h, clear } from "./dom.js";
import { bytes, duration } from "./format.js";
import { dateTime, parseIso } from "./zones.js";

export function renderDevices(list, devices, { selected, zone, onOpen }) {
  clear(list);
  if (!devices.length) {
    list.append(h("li", { class: "empty", text: "No devices have uploaded anything yet." }));
    return;
  }
  for (const device of devices) {
    const kinds = Object.entries(device.kinds);
    const video = device.kinds.video;
    list.append(h("li", {},
      h("button", {
        type: "button", class: "device", "data-testid": `device-${device.device}`,
        "aria-pressed": device.device === selected ? "true" : "false", onclick: () => onOpen(device.device),
      },
      h("span", { class: "name", text: device.device }),
      h("span", { class: "totals" }, kinds.map(([kind, totals]) => h("span", { class: "kind", "data-kind": kind },
        `${kind}: ${totals.segments} · `, h("span", { class: "bytes", text: bytes(totals.bytes) }),
        kind === "video" ? ` · ${duration(totals.duration_ms)}` : ""))),
      video && video.first_start ? h("span", { class: "span" },
        h("span", { "data-first": video.first_start, text: `first ${dateTime(parseIso(video.first_start), zone)}` }),
        h("span", { "data-last": video.last_start, text: `last ${dateTime(parseIso(video.last_start), zone)}` })) : null)));
  }
}
