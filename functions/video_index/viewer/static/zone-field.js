// The time zone field (docs/viewer.md "Screens"): every IANA zone offered as a suggestion;
// a name that is no zone is refused with a message and the field shows the zone in force.

import { $, guarded, h, status } from "./dom.js";
import { allZones, isZone } from "./zones.js";

/** `current()` is the zone in force; `onChange(zone)` runs for another, known zone. */
export function setupZoneField(field, { current, onChange }) {
  const list = $("#zones");
  for (const zone of allZones()) list.append(h("option", { value: zone }));
  field.value = current();
  field.addEventListener("change", guarded("changing the time zone", async () => {
    const zone = field.value.trim();
    if (!isZone(zone)) {
      status(`unknown time zone ${JSON.stringify(zone)}`, "error");
      field.value = current();
      return;
    }
    if (zone !== current()) await onChange(zone);
  }));
}
