// Time in an IANA zone with nothing but Intl: the local parts of an instant, the instant of
// a local time, local days (23, 24 or 25 hours long) and their hours, and the formats the
// page shows. Instants are epoch milliseconds (numbers) everywhere in the viewer.

const formatters = new Map();

function formatter(zone) {
  let found = formatters.get(zone);
  if (!found) {
    found = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
    formatters.set(zone, found);
  }
  return found;
}

/** The browser's own zone. */
export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** Whether `zone` is an IANA zone this browser knows. */
export function isZone(zone) {
  if (!zone || typeof zone !== "string") return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Every zone the browser knows (for the zone picker). */
export function allZones() {
  return typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
}

/** {year, month, day, hour, minute, second} of the instant `ms` in `zone`. */
export function zonedParts(ms, zone) {
  const parts = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year, month: parts.month, day: parts.day,
    hour: parts.hour % 24, minute: parts.minute, second: parts.second,
  };
}

/** The zone's offset from UTC at the instant `ms`, in milliseconds. */
export function offsetMs(ms, zone) {
  const p = zonedParts(ms, zone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The instant of a local wall time in `zone` (the later one when it repeats, the first
 * existing one after it when it falls into a gap). */
export function zonedToUtc(zone, year, month, day, hour = 0, minute = 0, second = 0) {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  let guess = wall - offsetMs(wall, zone);
  guess = wall - offsetMs(guess, zone);
  return guess;
}

/** "YYYY-MM-DD" of the instant `ms` in `zone`. */
export function localDate(ms, zone) {
  const p = zonedParts(ms, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

/** [start, end) of the local day "YYYY-MM-DD" in `zone`: its first instant and the next day's. */
export function dayBounds(date, zone) {
  const [year, month, day] = date.split("-").map(Number);
  const next = new Date(Date.UTC(year, month - 1, day + 1));
  return [
    startOfDay(zone, year, month, day),
    startOfDay(zone, next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate()),
  ];
}

function startOfDay(zone, year, month, day) {
  const date = `${year}-${pad(month)}-${pad(day)}`;
  let ms = zonedToUtc(zone, year, month, day);
  // Midnight may not exist (a zone that springs forward at 00:00): the day starts at the
  // first quarter hour that belongs to it; every zone's transitions are on quarter hours.
  for (let step = 0; step < 16 && localDate(ms, zone) < date; step += 1) ms += 15 * 60_000;
  // The two-pass guess can land after midnight when the offset changed during the night.
  while (localDate(ms - 15 * 60_000, zone) === date) ms -= 15 * 60_000;
  return ms;
}

/** The instants of the local hour marks (00:00, 01:00, …) of the day [start, end): 23, 24 or
 * 25 of them (a repeated hour is marked twice). Offsets change on quarter hours only. */
export function hourMarks(start, end, zone) {
  const marks = [];
  for (let ms = start; ms < end; ms += 15 * 60_000) {
    const parts = zonedParts(ms, zone);
    if (parts.minute === 0 && parts.second === 0) marks.push({ ms, hour: parts.hour });
  }
  return marks;
}

/** "YYYY-MM" of a month plus `delta` months. */
export function addMonths(month, delta) {
  const [year, number] = month.split("-").map(Number);
  const moved = new Date(Date.UTC(year, number - 1 + delta, 1));
  return `${moved.getUTCFullYear()}-${pad(moved.getUTCMonth() + 1)}`;
}

/** "YYYY-MM-DD" plus `delta` days (calendar arithmetic, no zone involved). */
export function addDays(date, delta) {
  const [year, month, day] = date.split("-").map(Number);
  const moved = new Date(Date.UTC(year, month - 1, day + delta));
  return moved.toISOString().slice(0, 10);
}

/** Day of the week of "YYYY-MM-DD", Monday = 0. */
export function weekday(date) {
  const [year, month, day] = date.split("-").map(Number);
  return (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
}

export function monthTitle(month) {
  const [year, number] = month.split("-").map(Number);
  return new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric", timeZone: "UTC" })
    .format(new Date(Date.UTC(year, number - 1, 1)));
}

export function dayTitle(date) {
  const [year, month, day] = date.split("-").map(Number);
  return new Intl.DateTimeFormat(undefined, {
    weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC",
  }).format(new Date(Date.UTC(year, month - 1, day)));
}

/** "HH:MM:SS" of `ms` in `zone`. */
export function clockTime(ms, zone) {
  const p = zonedParts(ms, zone);
  return `${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** "YYYY-MM-DD HH:MM:SS" of `ms` in `zone`. */
export function dateTime(ms, zone) {
  return `${localDate(ms, zone)} ${clockTime(ms, zone)}`;
}

/** The zone's abbreviation or offset at `ms` ("CEST", "GMT+5:30"). */
export function zoneName(ms, zone) {
  const part = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "short" })
    .formatToParts(new Date(ms)).find((p) => p.type === "timeZoneName");
  return part ? part.value : zone;
}

/** UTC ISO 8601 with milliseconds and Z, as the API writes times. */
export function iso(ms) {
  return new Date(ms).toISOString();
}

/** Epoch ms of an ISO 8601 time, or NaN. */
export function parseIso(text) {
  return typeof text === "string" ? Date.parse(text) : Number.NaN;
}

/** The value of an <input type="datetime-local"> for `ms` in `zone`. */
export function toLocalInput(ms, zone) {
  return `${localDate(ms, zone)}T${clockTime(ms, zone)}`;
}

export function pad(number) {
  return String(number).padStart(2, "0");
}
