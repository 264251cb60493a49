// The month calendar of a device: one button per local day, marked when the API says the
// day has video, with the day's video time. Keyboard: arrows move by a day or a week,
// Page Up/Down by a month, Home/End to the week's ends, Enter opens the day.

import { h, clear } from "./dom.js";
import { duration, shortDuration } from "./format.js";
import { addDays, weekday } from "./zones.js";

const WEEKDAYS = (() => {
  const format = new Intl.DateTimeFormat(undefined, { weekday: "short", timeZone: "UTC" });
  // 2024-01-01 was a Monday.
  return Array.from({ length: 7 }, (_, i) => format.format(new Date(Date.UTC(2024, 0, 1 + i))));
})();

/**
 * @param {HTMLTableElement} table
 * @param {{days: Array, selected: string|null, focus: string|null, onOpen: Function, onMove: Function}} options
 *   `days` as the API's calendar answers them; `onMove(date)` when the keyboard leaves the month.
 */
export function renderCalendar(table, { days, selected, focus, onOpen, onMove }) {
  clear(table);
  table.append(h("thead", {}, h("tr", {}, WEEKDAYS.map((name) => h("th", { scope: "col", text: name })))));
  const body = h("tbody");
  const dates = days.map((day) => day.date);
  const focusDate = dates.includes(focus) ? focus : dates.includes(selected) ? selected
    : (days.find((day) => day.has_video) || days[0] || {}).date;
  let row = h("tr");
  for (let blank = 0; blank < weekday(dates[0]); blank += 1) row.append(h("td", { class: "blank" }));
  for (const day of days) {
    if (row.children.length === 7) {
      body.append(row);
      row = h("tr");
    }
    const number = Number(day.date.slice(8));
    const label = day.has_video
      ? `${day.date}: ${duration(day.video_ms)} of video in ${day.segments} segments`
      : `${day.date}: no video`;
    row.append(h("td", {},
      h("button", {
        type: "button",
        class: "day",
        "data-testid": `day-${day.date}`,
        "data-has-video": day.has_video ? "true" : "false",
        "data-video-ms": day.video_ms,
        // the visible text is the name (WCAG 2.5.3: what is seen can be said); the whole
        // sentence is the description
        title: label,
        "aria-pressed": day.date === selected ? "true" : "false",
        tabindex: day.date === focusDate ? "0" : "-1",
        onclick: () => onOpen(day.date),
      },
      h("span", { class: "number", text: number }),
      day.has_video ? " " : null,
      day.has_video ? h("span", { class: "video-time", text: shortDuration(day.video_ms) }) : null),
    ));
  }
  while (row.children.length < 7) row.append(h("td", { class: "blank" }));
  body.append(row);
  table.append(body);
  table.onkeydown = (event) => moveFocus(event, table, dates, onMove);
}

const STEPS = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };

function moveFocus(event, table, dates, onMove) {
  const current = event.target.closest("button.day");
  if (!current) return;
  const date = current.dataset.testid.slice(4);
  let target = null;
  if (event.key in STEPS) target = addDays(date, STEPS[event.key]);
  else if (event.key === "Home") target = addDays(date, -weekday(date));
  else if (event.key === "End") target = addDays(date, 6 - weekday(date));
  else if (event.key === "PageUp" || event.key === "PageDown") {
    const [year, month, day] = date.split("-").map(Number);
    const moved = new Date(Date.UTC(year, month - 1 + (event.key === "PageUp" ? -1 : 1), 1));
    const last = new Date(Date.UTC(moved.getUTCFullYear(), moved.getUTCMonth() + 1, 0)).getUTCDate();
    moved.setUTCDate(Math.min(day, last));
    target = moved.toISOString().slice(0, 10);
  } else {
    return;
  }
  event.preventDefault();
  if (!dates.includes(target)) {
    onMove(target);
    return;
  }
  const next = table.querySelector(`[data-testid="day-${target}"]`);
  current.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

/** Focus the button of `date` (after a render that kept it). */
export function focusDay(table, date) {
  const button = table.querySelector(`[data-testid="day-${date}"]`);
  if (button) button.focus();
}
