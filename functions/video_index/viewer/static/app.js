// The viewer: pick a device, see its month in a time zone, open a day, play from any moment,
// see the sensor/analysis data and annotations of the moment, annotate. The address holds the
// state (?device=&date=&tz=&t=), so every view is a link (docs/viewer.md). Only the controls the
// caller's role allows are shown (GET /me, access.js); the devices are those the API lists.

import { applyAccess, loadAccess } from "./access.js";
import { ApiError, devicePath, get } from "./api.js";
import { Annotations, spanOf } from "./annotations.js";
import { completeLogin } from "./auth.js";
import { focusDay, renderCalendar } from "./calendar.js";
import { DayMarks, markHeldDays } from "./marks.js";
import { renderDevices } from "./devices.js";
import { $, guarded, report, status } from "./dom.js";
import { Exporter } from "./export.js";
import { ShareLinks } from "./share-links.js";
import { setupKeys } from "./keys.js";
import { LiveButton } from "./live-button.js";
import { Overlays } from "./overlays.js";
import { Player } from "./player.js";
import { Previews } from "./previews.js";
import { renderRanges } from "./ranges.js";
import { SignIn } from "./sign-in.js";
import { Timeline } from "./timeline.js";
import { setupZoneField } from "./zone-field.js";
import {
  addDays, addMonths, browserZone, clockTime, dateTime, dayBounds, dayTitle, iso, isZone,
  localDate, monthTitle, parseIso, zoneName,
} from "./zones.js";

/** How much one playlist covers; at its end the next one continues. */
const PLAY_WINDOW_MS = 60 * 60_000;
/** How often the address follows the playing moment. */
const ADDRESS_EVERY_MS = 5_000;

const state = {
  config: { oidc: null },
  zone: browserZone(),
  devices: [],
  devicesCursor: null,
  device: null,
  month: null,
  date: null,
  day: null, // {start, end, ranges: [{start, end, startMs, endMs}]}
  moment: null,
  playing: null, // {device, start, end}: the window the player has
  addressAt: 0,
};

const ui = {
  zone: $("#zone"), devices: $("#devices"), moreDevices: $("#more-devices"),
  calendarSection: $("#calendar-section"), calendar: $("#calendar"), monthTitle: $("#month-title"),
  daySection: $("#day-section"), dayTitle: $("#day-title"), ranges: $("#ranges"),
  playerSection: $("#player-section"), momentSection: $("#moment-section"),
  video: $("#video"), clock: $("#clock"), speed: $("#speed"),
};

const timeline = new Timeline($("#timeline"), {
  onPick: (ms, clickedAt) => playFrom(ms, clickedAt).catch((error) => report(error, "playing")),
});
const exporter = new Exporter($("#export-form"), $("#timeline"), timeline);
new ShareLinks($("#share-links"), exporter);
new Previews($("#timeline"), timeline, () => state.device);
const dayMarks = new DayMarks(timeline);
const overlays = new Overlays($("#overlays"));
const player = new Player(ui.video, {
  onMoment: (ms) => onMoment(ms),
  onEnded: (ms) => continueAfter(ms).catch((error) => report(error, "continuing")),
  onError: (message) => status(message, "error"),
});
const live = new LiveButton($("#live"), $("#live-note"), {
  player, device: () => state.device, zone: () => state.zone,
  onStart: () => { state.playing = { device: state.device, live: true }; ui.momentSection.hidden = false; },
});
const annotations = new Annotations({
  list: $("#annotations"),
  form: $("#annotation-form"),
  dialog: $("#conflict"),
  context: () => ({ device: state.device, zone: state.zone, moment: state.moment, segment: player.segment }),
  onChange: (items) => drawTimeline(items),
});

// --- the address ---------------------------------------------------------------------------

function writeAddress({ push = false } = {}) {
  const params = new URLSearchParams();
  if (state.device) params.set("device", state.device);
  if (state.date) params.set("date", state.date);
  params.set("tz", state.zone);
  if (state.moment !== null && state.date) params.set("t", iso(state.moment));
  const target = `${location.pathname}?${params}`;
  if (target === `${location.pathname}${location.search}`) return;
  if (push) history.pushState(null, "", target);
  else history.replaceState(null, "", target);
}

async function applyAddress() {
  const params = new URLSearchParams(location.search);
  const zone = params.get("tz");
  if (zone && !isZone(zone)) status(`unknown time zone ${JSON.stringify(zone)}: showing ${state.zone}`, "error");
  else if (zone) state.zone = zone;
  ui.zone.value = state.zone;
  const t = parseIso(params.get("t"));
  let date = params.get("date");
  if (date && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    status(`date must be YYYY-MM-DD, not ${JSON.stringify(date)}`, "error");
    date = null;
  }
  if (!date && Number.isFinite(t)) date = localDate(t, state.zone);
  const device = params.get("device");
  if (!device) {
    showDevice(null);
    return;
  }
  try {
    await openDevice(device, { date, t: Number.isFinite(t) ? t : null, push: false });
  } catch (error) {
    // A device that does not exist, or one outside the caller's scope: the same answer.
    if (!(error instanceof ApiError && error.status === 404 && error.body?.error?.parameter === "device")) throw error;
    showDevice(null);
    status(`no such device ${JSON.stringify(device)}`, "error");
  }
}

// --- devices -------------------------------------------------------------------------------

async function loadDevices(more = false) {
  const page = await get("devices", { limit: 50, cursor: more ? state.devicesCursor : null });
  state.devices = more ? [...state.devices, ...page.items] : page.items;
  state.devicesCursor = page.next_cursor;
  ui.moreDevices.hidden = !page.next_cursor;
  drawDevices();
}

function drawDevices() {
  renderDevices(ui.devices, state.devices, {
    selected: state.device, zone: state.zone, onOpen: guarded("opening the device", (d) => openDevice(d, { push: true })),
  });
}

function showDevice(device) {
  state.device = device;
  ui.calendarSection.hidden = !device;
  if (!device) {
    ui.daySection.hidden = true;
    ui.playerSection.hidden = true;
    ui.momentSection.hidden = true;
  }
  drawDevices();
}

async function openDevice(device, { date = null, t = null, push = true } = {}) {
  const changed = device !== state.device;
  showDevice(device);
  if (changed) {
    player.stop();
    state.playing = null;
    state.moment = null;
    state.date = null;
    overlays.reset(device);
    annotations.clearList();
    ui.daySection.hidden = true;
    ui.playerSection.hidden = true;
    ui.momentSection.hidden = true;
  }
  const month = date ? date.slice(0, 7) : await lastVideoMonth(device);
  await showMonth(month, { focus: date });
  if (date) await openDay(date, { t, push: false });
  writeAddress({ push });
}

/** The month of the device's last video in the zone (this month when it has none). */
async function lastVideoMonth(device) {
  let totals = state.devices.find((d) => d.device === device);
  if (!totals) totals = await get(devicePath(device));
  const last = totals.kinds && totals.kinds.video && totals.kinds.video.last_start;
  return localDate(last ? parseIso(last) : Date.now(), state.zone).slice(0, 7);
}

// --- the month -----------------------------------------------------------------------------

async function showMonth(month, { focus = null } = {}) {
  const device = state.device;
  const answer = await get(devicePath(device, "/calendar"), { month, tz: state.zone });
  if (device !== state.device) return;
  state.month = month;
  ui.monthTitle.textContent = `${monthTitle(month)} · ${state.zone}`;
  ui.calendarSection.hidden = false;
  Object.assign(ui.calendar.dataset, { device, month, tz: answer.tz });
  renderCalendar(ui.calendar, {
    days: answer.days,
    selected: state.date,
    focus,
    onOpen: guarded("opening the day", (date) => openDay(date, { push: true })),
    onMove: guarded("changing the month", async (date) => {
      await showMonth(date.slice(0, 7), { focus: date });
      focusDay(ui.calendar, date);
    }),
  });
  markHeldDays(ui.calendar, device, answer.days.map((day) => day.date), state.zone)
    .catch((error) => report(error, "loading the holds"));
}

// --- the day -------------------------------------------------------------------------------

async function openDay(date, { t = null, push = true } = {}) {
  const device = state.device;
  const [start, end] = dayBounds(date, state.zone);
  if (date.slice(0, 7) !== state.month) await showMonth(date.slice(0, 7), { focus: date });
  state.date = date;
  for (const button of ui.calendar.querySelectorAll("button.day")) {
    button.setAttribute("aria-pressed", button.dataset.testid === `day-${date}` ? "true" : "false");
  }
  const answer = await get(devicePath(device, "/ranges"), { from: iso(start), to: iso(end) });
  if (device !== state.device || date !== state.date) return;
  state.day = {
    start, end,
    ranges: answer.ranges.map((r) => ({ ...r, startMs: parseIso(r.start), endMs: parseIso(r.end) })),
    gaps: answer.gaps.map((g) => ({ ...g, startMs: parseIso(g.start), endMs: parseIso(g.end) })),
  };
  const hours = Math.round((end - start) / 3_600_000);
  ui.dayTitle.textContent = `${dayTitle(date)}${hours === 24 ? "" : ` (${hours} hours)`}`;
  ui.daySection.hidden = false;
  ui.playerSection.hidden = false;
  ui.momentSection.hidden = false;
  drawTimeline(annotations.items);
  dayMarks.load(device, start, end, state.zone).catch((error) => report(error, "loading the holds and activity"));
  drawRanges();
  exporter.setDay({ device, start, end, zone: state.zone });
  live.offer(date);
  writeAddress({ push });
  annotations.load(device, start, end).catch((error) => report(error, "loading the annotations"));
  if (t !== null) await playFrom(t);
  else timeline.setCursor(state.moment);
}

function drawTimeline(items) {
  if (!state.day) return;
  timeline.render({
    start: state.day.start, end: state.day.end, zone: state.zone, ranges: state.day.ranges, gaps: state.day.gaps,
    annotated: items.map(spanOf).filter(Boolean),
  });
  dayMarks.draw();
  if (state.moment !== null) timeline.setCursor(state.moment);
}

function drawRanges() {
  renderRanges(ui.ranges, state.day.ranges, state.zone, guarded("playing", playFrom));
}

// --- playback ------------------------------------------------------------------------------

/** The first moment with video at or after `ms`, from the open day's ranges (null: none). */
function videoFrom(ms) {
  for (const range of state.day ? state.day.ranges : []) {
    if (ms < range.endMs) return Math.max(ms, range.startMs);
  }
  return null;
}

async function playFrom(ms, clickedAt = performance.now()) {
  const start = videoFrom(ms);
  if (start === null) {
    status(`no video after ${clockTime(ms, state.zone)} on this day`);
    return;
  }
  startWindow(start, clickedAt);
}

function startWindow(start, clickedAt = performance.now()) {
  state.playing = { device: state.device, start, end: start + PLAY_WINDOW_MS };
  state.moment = start;
  ui.playerSection.hidden = false;
  ui.momentSection.hidden = false;
  timeline.setCursor(start);
  showClock(start);
  player.play(state.device, start, state.playing.end, clickedAt);
  player.setRate(Number(ui.speed.value));
  writeAddress();
}

/** The window played to its end (`ms`: the last moment shown): go on with the next video
 * after it, wherever it is. */
async function continueAfter(ms) {
  const playing = state.playing;
  if (!playing || playing.live) return;
  // The window's last file may run past its end: go on after what was shown.
  const from = Math.max(ms ?? playing.end, playing.end) + 1;
  const answer = await get(devicePath(playing.device, "/ranges"), {
    from: iso(from), to: iso(from + 24 * 3_600_000),
  });
  if (state.playing !== playing) return;
  const until = parseIso(answer.to);
  const next = answer.ranges.map((r) => Math.max(parseIso(r.start), from)).find((t) => t < until);
  if (next === undefined) {
    status("end of the recorded video");
    return;
  }
  startWindow(next);
}

function onMoment(ms) {
  if (ms === null) return;
  state.moment = ms;
  showClock(ms);
  if (state.day && (ms >= state.day.end || ms < state.day.start) && !state.turning) {
    // Playback crossed midnight (of the zone): the next day's timeline follows it.
    state.turning = true;
    openDay(localDate(ms, state.zone), { push: false })
      .catch((error) => report(error, "opening the day"))
      .finally(() => { state.turning = false; });
  }
  timeline.setCursor(ms);
  annotations.mark(ms, player.segment);
  overlays.at(ms, state.zone).catch((error) => report(error, "loading sensor and analysis data"));
  const now = performance.now();
  if (now - state.addressAt > ADDRESS_EVERY_MS || ui.video.paused) {
    state.addressAt = now;
    writeAddress();
  }
}

function showClock(ms) {
  ui.clock.dataset.time = iso(ms);
  ui.clock.textContent = `${dateTime(ms, state.zone)} ${zoneName(ms, state.zone)}`;
}

// --- time zone -----------------------------------------------------------------------------

/** The same moment (or day, or month) seen from the new zone. */
async function changeZone(zone) {
  state.zone = zone;
  drawDevices();
  if (state.device) {
    const date = state.moment !== null && state.date ? localDate(state.moment, zone) : state.date;
    const month = date ? date.slice(0, 7) : state.month;
    state.month = null;
    await showMonth(month, { focus: date });
    if (date) await openDay(date, { push: false });
  }
  writeAddress({ push: true });
}

// --- start ---------------------------------------------------------------------------------

const signIn = new SignIn({
  oidc: () => state.config.oidc,
  onChange: async () => {
    await loadAccess();
    if (annotations.window) annotations.render();
    await loadDevices();
  },
});

function setupControls() {
  $("#prev-month").addEventListener("click", guarded("changing the month", () => showMonth(addMonths(state.month, -1))));
  $("#next-month").addEventListener("click", guarded("changing the month", () => showMonth(addMonths(state.month, 1))));
  $("#prev-day").addEventListener("click", guarded("opening the day", () => openDay(addDays(state.date, -1))));
  $("#next-day").addEventListener("click", guarded("opening the day", () => openDay(addDays(state.date, 1))));
  ui.moreDevices.addEventListener("click", guarded("loading devices", () => loadDevices(true)));
  ui.speed.addEventListener("change", () => player.setRate(Number(ui.speed.value)));
  $("#add-annotation").addEventListener("click", () => annotations.openNew());
  window.addEventListener("popstate", guarded("following the link", applyAddress));
}

async function start() {
  setupControls();
  setupZoneField(ui.zone, { current: () => state.zone, onChange: changeZone });
  setupKeys({
    video: ui.video,
    player,
    annotations,
    dayShown: () => Boolean(state.day),
    openAdjacent: (step) => {
      if (!state.date) return false;
      guarded("opening the day", openDay)(addDays(state.date, step));
      return true;
    },
  });
  try {
    state.config = await get("viewer/config.json");
    if (await completeLogin(state.config.oidc)) status("signed in");
  } catch (error) {
    report(error, "signing in");
  }
  signIn.show();
  applyAccess(); // nothing the role may not do is shown while /me is asked
  await loadAccess().catch((error) => report(error, "asking who you are"));
  if (!player.supported) status("this browser cannot play HLS with Media Source Extensions", "error");
  await loadDevices();
  await applyAddress();
  document.body.dataset.ready = "true";
}

start().catch((error) => {
  report(error, "starting");
  document.body.dataset.ready = "true";
});
