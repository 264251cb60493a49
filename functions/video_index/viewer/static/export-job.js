// One export job followed from the page (docs/viewer.md, "Export a clip"), shared by the
// day's export form (export.js) and the grid's exports (grid-export.js): start it
// (POST /devices/{d}/exports, at most 6 hours), ask after it (GET /exports/{id}) every second
// until it is done or failed, and say each step — and what goes wrong — in words. The job
// tells its page what to show through `onChange(update)`; the page draws it its own way.

import { ApiError, devicePath, request } from "./api.js";
import { bytes, duration } from "./format.js";
import { clockTime, dateTime, iso } from "./zones.js";

/** The API's bound on one export (docs/playback.md, "Clip export"). */
export const MAX_EXPORT_MS = 6 * 3_600_000;
/** How often a running job is asked after. */
const POLL_MS = 1_000;

/**
 * What went wrong, said for a person.
 * @param {unknown} error
 * @param {[number, number] | null} window the window asked for (ms), to say its length
 */
export function exportWords(error, window = null) {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const detail = (error.body && error.body.error) || {};
  const message = detail.message || error.message;
  if (error.status === 403) return "You may not export this camera's video: exports need the operator role for this camera (403).";
  if (error.status === 400 && /hours/.test(message)) {
    const asked = window ? ` (${duration(window[1] - window[0])} asked)` : "";
    return `That window is too long${asked}: one export covers at most 6 hours. Choose a shorter window.`;
  }
  if (error.status === 400) return `The export was refused: ${message}.`;
  if (error.status === 404) return `Not found: ${message}.`;
  return `The export could not start: ${message}.`;
}

/**
 * An update for the page:
 * {state: "starting"|"queued"|"running"|"done"|"failed"|"empty"|"error", kind: "info"|"error",
 *  message, busy (a progress bar is shown), percent (0..100, or null: not known yet),
 *  url and linkText (done), job (the API's job, once there is one)}.
 * @typedef {object} ExportUpdate
 */

export class ExportJob {
  /**
   * @param {{device: string, from: number, to: number, zone: string,
   *          onChange: (update: ExportUpdate) => void}} options
   */
  constructor({ device, from, to, zone, onChange }) {
    this.device = device;
    this.from = from;
    this.to = to;
    this.zone = zone;
    this.onChange = onChange;
    this.job = null;
    this.timer = 0;
    this.stopped = false;
    this.what = `${dateTime(from, zone)} – ${clockTime(to, zone)}`;
  }

  /** Start the job and follow it; what goes wrong is said, never thrown. */
  async start() {
    this.tell({ state: "starting", kind: "info", busy: true, percent: null, message: `Starting the export of ${this.what}…` });
    let answer;
    try {
      answer = await request(devicePath(this.device, "/exports"), {
        method: "POST", body: { from: iso(this.from), to: iso(this.to) }, user: true,
      });
    } catch (error) {
      this.tell({ state: "error", kind: "error", busy: false, message: exportWords(error, [this.from, this.to]) });
      return;
    }
    if (this.stopped) return;
    const job = answer.data;
    this.job = job;
    if (job.segments === 0) {
      // The API queues it anyway (and fails it); the person learns now, in words.
      this.tell({
        state: "empty", kind: "error", busy: false,
        message: `No footage between ${this.what} (no playable video file): there is nothing to export. Choose a window over the green ranges.`,
      });
      return;
    }
    this.follow(job);
  }

  /** Stop asking after the job (another one replaces it, the page forgets it). */
  stop() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  follow(job) {
    this.job = job;
    const files = `${job.segments} file${job.segments === 1 ? "" : "s"}, ${bytes(job.bytes)}`;
    if (job.state === "done") {
      this.tell({ state: "done", kind: "info", busy: false, message: "The clip is ready.", url: job.url, linkText: `Download the clip (${files})` });
      return;
    }
    if (job.state === "failed") {
      this.tell({ state: "failed", kind: "error", busy: false, message: `The export failed: ${job.error || "no reason given"}.` });
      return;
    }
    const done = Math.round(100 * (Number(job.progress) || 0));
    const running = job.state === "running";
    this.tell({
      state: job.state, kind: "info", busy: true, percent: running ? done : null,
      message: running ? `Making the clip of ${files}: ${done} %…` : `Export queued (${files})…`,
    });
    this.timer = window.setTimeout(() => this.poll(), POLL_MS);
  }

  async poll() {
    if (this.stopped) return;
    try {
      const { data } = await request(`exports/${encodeURIComponent(this.job.export_id)}`);
      if (!this.stopped) this.follow(data);
    } catch (error) {
      if (!this.stopped) this.tell({ state: "error", kind: "error", busy: false, message: exportWords(error, [this.from, this.to]) });
    }
  }

  tell(update) {
    if (!this.stopped) this.onChange({ job: this.job, ...update });
  }
}
