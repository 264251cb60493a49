// Following a camera's live edge (docs/viewer.md, "Live"): the live playlist
// (/devices/{d}/live.m3u8) lists a camera's newest files; a player holds its picture a fixed
// time behind the wall clock, measured by the picture's PROGRAM-DATE-TIME, so it neither
// runs dry nor drifts away.
//
// The time it trails by (liveLag): two segment durations — the one the camera is recording,
// and the one on its way (uploaded, then listed at the player's next poll, which comes up to
// a segment duration later) — and LIVE_MARGIN_MS for the upload's listing and the fetch. A
// picture ahead of that lag is slowed, one behind sped up (at most ±10 %: hardly seen);
// one further off than SEEK_BEYOND_MS jumps, and so does the first picture (joining).

import { devicePath, url } from "./api.js";

/** Beyond two segment durations: the upload listed, the file fetched and appended, and the
 * half second of pictures Chromium wants queued ahead before it plays on (with less it
 * stops and waits); tests/media/test_live_local.py measures the whole. */
export const LIVE_MARGIN_MS = 1500;
/** hls.js options for a live playlist: start two segments behind the playlist's end (the
 * follower then holds the lag); hls.js never jumps by itself while the picture stays within
 * the playlist. */
export const LIVE_HLS = {
  liveSyncDurationCount: 2,
  liveDurationInfinity: true,
  liveMaxLatencyDurationCount: Infinity,
  maxLiveSyncPlaybackRate: 1,
  maxBufferLength: 10,
  backBufferLength: 10,
};
const RATE_SPAN = 0.1;
const DEADBAND_MS = 100;
const SEEK_BEYOND_MS = 4000;
const SEEK_EVERY_MS = 5000;
const FOLLOW_EVERY_MS = 250;

export function liveAddress(device) {
  return url(devicePath(device, "/live.m3u8")).toString();
}

/** How far (ms) a live picture trails the wall clock for segments of `seconds`. */
export function liveLag(seconds) {
  return 2 * seconds * 1000 + LIVE_MARGIN_MS;
}

/** The typical segment duration (s) of a live playlist's fragments: their median. */
export function segmentSeconds(fragments) {
  const durations = fragments.map((f) => f.duration).sort((a, b) => a - b);
  return durations.length ? durations[Math.floor(durations.length / 2)] : 2;
}

/** The player position of wall-clock `ms` in live `fragments`: inside the one holding it, or
 * the nearest end of the playlist. */
export function livePosition(fragments, ms) {
  const dated = fragments.filter((f) => Number.isFinite(f.programDateTime));
  if (!dated.length) return null;
  for (const f of dated) {
    if (ms < f.programDateTime) return f.start;
    if (ms < f.programDateTime + f.duration * 1000) return f.start + (ms - f.programDateTime) / 1000;
  }
  const last = dated[dated.length - 1];
  return last.start + Math.max(0, last.duration - 0.5);
}

/** Holds a <video>'s picture `liveLag` behind the wall clock while it plays. */
export class LiveFollower {
  /**
   * @param {HTMLVideoElement} video
   * @param {{moment: () => number|null, fragments: () => object[]}} source the picture's
   *   wall-clock time, and the playlist's fragments (hls.js, with programDateTime)
   */
  constructor(video, source) {
    this.video = video;
    this.source = source;
    this.seekedAt = -Infinity;
    this.joined = false;
    this.timer = window.setInterval(() => this.follow(), FOLLOW_EVERY_MS);
  }

  /** The picture's lag behind the wall clock (ms) and the lag it keeps; null before a picture. */
  lag() {
    const moment = this.source.moment();
    if (moment === null) return null;
    return { lag: Date.now() - moment, target: liveLag(segmentSeconds(this.source.fragments())) };
  }

  follow() {
    const video = this.video;
    const found = this.lag();
    if (!found || video.paused || video.seeking || video.readyState < 3) return;
    const off = found.lag - found.target;
    video.dataset.liveLagMs = found.lag.toFixed(0);
    const joining = !this.joined && Math.abs(off) > DEADBAND_MS;
    this.joined = true;
    if (joining || (Math.abs(off) > SEEK_BEYOND_MS && performance.now() - this.seekedAt > SEEK_EVERY_MS)) {
      // Joining (hls.js starts near the edge, not at the lag), or far off (a pause, a
      // stall, a tab in the background): jump, then hold.
      this.seekedAt = performance.now();
      const position = livePosition(this.source.fragments(), Date.now() - found.target);
      if (position !== null) video.currentTime = position;
      video.playbackRate = 1;
      return;
    }
    const rate = Math.abs(off) < DEADBAND_MS ? 1 : 1 + Math.max(-RATE_SPAN, Math.min(RATE_SPAN, off / 5000));
    if (Math.abs(video.playbackRate - rate) > 0.005) video.playbackRate = rate;
  }

  stop() {
    window.clearInterval(this.timer);
  }
}
