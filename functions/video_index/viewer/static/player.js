// Playback: hls.js on the product's playlist of a window. The playlist lists each file with
// its PROGRAM-DATE-TIME, a discontinuity before every file and gaps left out, so the player
// goes on across files and skips gaps by itself; the wall-clock time of the picture is the
// playing fragment's date plus the time played into it.

import Hls from "./hls.mjs";
import { authHeaders, devicePath, isApi, url } from "./api.js";
import { LIVE_HLS, LiveFollower, liveAddress } from "./live.js";
import { iso } from "./zones.js";

/**
 * The video segment's key file name in a playlist URI (`media/<start>_<duration>_<id>.<ext>
 * [?part=…]`): with kind `video`, the segment's address (an annotation's segment target).
 */
export function segmentNameOf(uri) {
  const match = /media\/([^/?]*?_\d+_[a-z0-9]+\.[a-z0-9]+)(?:\?|$)/.exec(uri || "");
  return match ? match[1] : null;
}

export class Player {
  /**
   * @param {HTMLVideoElement} video
   * @param {{onMoment: Function, onEnded: Function, onError: Function}} handlers
   */
  constructor(video, handlers) {
    this.video = video;
    this.handlers = handlers;
    this.hls = null;
    this.segment = null;
    this.loadedAt = 0;
    this.firstFrameMs = null;
    this.follower = null;
    video.addEventListener("timeupdate", () => this.handlers.onMoment(this.moment()));
    video.addEventListener("seeked", () => this.handlers.onMoment(this.moment()));
    video.addEventListener("ended", () => this.handlers.onEnded(this.moment()));
  }

  get supported() {
    return Hls.isSupported();
  }

  /** The wall-clock instant (epoch ms) of the picture shown, or null: from the file whose
   * span of the player's timeline holds the position. (hls.js's `playingDate` follows the
   * file it last saw playing, which lags on a busy machine: past the end of the file
   * before a gap it would show instants inside the gap.) */
  moment() {
    return this.momentAt(this.video.currentTime);
  }

  /** The wall-clock instant (epoch ms) of the player position `position` (s), or null. */
  momentAt(position) {
    const hls = this.hls;
    if (!hls) return null;
    const level = hls.levels[Math.max(hls.currentLevel, 0)];
    for (const fragment of level?.details?.fragments ?? []) {
      const date = fragment.programDateTime;
      if (date === null || date === undefined) continue;
      if (position >= fragment.start && position < fragment.start + fragment.duration) {
        return date + (position - fragment.start) * 1000;
      }
    }
    const playing = hls.playingDate;
    return playing ? playing.getTime() : null;
  }

  /** Load `device`'s playlist of [startMs, endMs) and play from `startMs` (or the first
   * video after it). `clickedAt` (performance.now()) times the first frame. */
  play(device, startMs, endMs, clickedAt = performance.now()) {
    const address = url(devicePath(device, "/playlist.m3u8"), { from: iso(startMs), to: iso(endMs) });
    this.load(address.toString(), {}, clickedAt, (fragments) => this.positionOf(fragments, startMs));
  }

  /** Follow `device`'s live edge (live.js): start `liveLag` behind the wall clock and hold
   * the picture there. */
  playLive(device, clickedAt = performance.now()) {
    // hls.js starts loading by itself (near the edge: a live playlist is reloaded only when
    // loading started with it), and the follower then holds the lag.
    this.load(liveAddress(device), { ...LIVE_HLS, autoStartLoad: true }, clickedAt, () => {
      this.follower = new LiveFollower(this.video, {
        moment: () => this.moment(),
        fragments: () => this.hls?.levels[Math.max(this.hls.currentLevel, 0)]?.details?.fragments ?? [],
      });
      return null;
    });
  }

  get live() {
    return Boolean(this.follower);
  }

  /** Load the playlist at `address` with hls.js (`options` added to the viewer's own) and
   * play from the position `startAt(fragments)` picks once its first level is loaded (null:
   * where hls.js started loading by itself). */
  load(address, options, clickedAt, startAt) {
    this.stop();
    this.loadedAt = clickedAt;
    this.firstFrameMs = null;
    delete this.video.dataset.firstFrameMs;
    const hls = new Hls({
      // The ES module build runs the transmuxer on the main thread (no worker file to serve).
      enableWorker: false,
      autoStartLoad: false,
      maxBufferLength: 20,
      backBufferLength: 30,
      ...options,
      xhrSetup: (xhr, target) => {
        if (!isApi(target)) return;
        for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
      },
    });
    this.hls = hls;
    let started = false;
    hls.on(Hls.Events.LEVEL_LOADED, (_event, data) => {
      if (this.hls !== hls || started) return;
      started = true;
      const fragments = data.details.fragments;
      if (!fragments.length) {
        this.handlers.onError(data.details.live ? "no video from this camera yet" : "no video in this window");
        return;
      }
      const position = startAt(fragments);
      if (position !== null) hls.startLoad(position);
      this.start();
    });
    hls.on(Hls.Events.FRAG_CHANGED, (_event, data) => {
      this.segment = segmentNameOf(data.frag.relurl || data.frag.url);
      // data-segment stays the id (a stable interface); data-segment-name is the address
      this.video.dataset.segment = this.segment ? this.segment.split("_")[2].split(".")[0] : "";
      this.video.dataset.segmentName = this.segment || "";
    });
    this.watchErrors(hls);
    this.watchFirstFrame();
    hls.loadSource(address);
    hls.attachMedia(this.video);
  }

  watchErrors(hls) {
    let recovered = false;
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal || this.hls !== hls) return;
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR && !recovered) {
        recovered = true;
        hls.recoverMediaError();
        return;
      }
      this.handlers.onError(`playback stopped: ${data.type}/${data.details}`);
      this.stop();
    });
  }

  /** The player position of the instant `ms`: inside the file holding it, else the start of
   * the first file after it. */
  positionOf(fragments, ms) {
    for (const fragment of fragments) {
      const date = fragment.programDateTime;
      if (date === null || date === undefined) continue;
      if (ms < date) return fragment.start;
      if (ms < date + fragment.duration * 1000) return fragment.start + (ms - date) / 1000;
    }
    return fragments[0].start;
  }

  start() {
    const attempt = this.video.play();
    if (attempt) {
      attempt.catch((error) => {
        if (error.name === "NotAllowedError" && !this.video.muted) {
          // No user gesture (a deep link): browsers only start muted video by themselves.
          this.video.muted = true;
          this.video.play().catch(() => {});
        }
      });
    }
  }

  watchFirstFrame() {
    const video = this.video;
    const hls = this.hls;
    const done = () => {
      if (this.hls !== hls || this.firstFrameMs !== null) return;
      this.firstFrameMs = performance.now() - this.loadedAt;
      video.dataset.firstFrameMs = this.firstFrameMs.toFixed(0);
    };
    if (typeof video.requestVideoFrameCallback === "function") {
      video.requestVideoFrameCallback(done);
    } else {
      video.addEventListener("playing", done, { once: true });
    }
  }

  togglePause() {
    if (!this.hls) return;
    if (this.video.paused) this.start();
    else this.video.pause();
  }

  seekBy(seconds) {
    if (!this.hls) return;
    this.video.currentTime = Math.max(0, this.video.currentTime + seconds);
  }

  setRate(rate) {
    this.video.defaultPlaybackRate = rate;
    this.video.playbackRate = rate;
  }

  stop() {
    if (this.follower) {
      this.follower.stop();
      this.follower = null;
      this.video.playbackRate = this.video.defaultPlaybackRate;
      delete this.video.dataset.liveLagMs;
    }
    if (this.hls) {
      this.hls.destroy();
      this.hls = null;
    }
    this.segment = null;
  }
}
