// Numbers people read: sizes and durations.

const UNITS = ["bytes", "kB", "MB", "GB", "TB", "PB"];

/** A byte count in decimal units, three significant digits: "950 bytes", "12.3 MB". */
export function bytes(count) {
  if (!Number.isFinite(count) || count < 0) return "–";
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  if (unit === 0) return `${count} ${count === 1 ? "byte" : "bytes"}`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** A duration: "45 s", "4 min 10 s", "2 h 05 min". */
export function duration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "–";
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** A short duration for small calendar cells: "45s", "4m", "2h05". */
export function shortDuration(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}`;
}
