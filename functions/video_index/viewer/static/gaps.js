// Why a stretch of the day has no video (docs/viewer.md "Screens", docs/api.md#gaps): the
// reason the ranges answer gives each gap, said in words for the timeline's hover.

import { duration } from "./format.js";
import { clockTime, dateTime } from "./zones.js";

const REASONS = {
  deleted: "deleted",
  expired: "expired: older than the retention",
  archived: "archived: in storage that needs a restore",
  silent: "silent: the camera sent nothing",
  missing: "missing: the camera kept uploading, but this footage never arrived",
};

/** "10:00:00 – 10:20:00 (20 min): deleted by alice at 2026-11-30 09:00:00 (request 1f…)". */
export function gapText(gap, zone) {
  const from = gap.startMs;
  const to = gap.endMs;
  let why = REASONS[gap.reason] || gap.reason;
  const request = gap.deletion;
  if (request) {
    const when = request.created_at ? ` at ${dateTime(Date.parse(request.created_at), zone)}` : "";
    why += ` by ${request.created_by || "someone"}${when} (request ${request.deletion_id})`;
  }
  return `${clockTime(from, zone)} – ${clockTime(to, zone)} (${duration(to - from)}): ${why}`;
}

/** The gap holding `ms`, if any. */
export function gapAt(gaps, ms) {
  return (gaps || []).find((gap) => gap.startMs <= ms && ms < gap.endMs) || null;
}
