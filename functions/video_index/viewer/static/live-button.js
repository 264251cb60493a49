// The day page's Live button (docs/viewer.md, "Live"): on today's page it plays the camera's
// live edge (Player.playLive, live.js) and says, while it does, how far the picture trails
// the wall clock. Picking a moment on the timeline leaves live (the player loads a window).

import { localDate } from "./zones.js";

export class LiveButton {
  /**
   * @param {HTMLButtonElement} button
   * @param {HTMLElement} note where the lag is said
   * @param {{player: import("./player.js").Player, device: () => string|null,
   *   zone: () => string, onStart: () => void}} context
   */
  constructor(button, note, context) {
    this.button = button;
    this.note = note;
    this.context = context;
    button.addEventListener("click", () => this.start());
    context.player.video.addEventListener("timeupdate", () => this.show());
  }

  /** Offered on today's page (`date`, in the zone) only. */
  offer(date) {
    this.button.hidden = !date || date !== localDate(Date.now(), this.context.zone());
    this.show();
  }

  start() {
    const device = this.context.device();
    if (!device) return;
    this.context.player.playLive(device);
    this.context.onStart();
    this.show();
  }

  /** Pressed while the player follows the live edge; the lag in words. */
  show() {
    const live = this.context.player.live;
    this.button.setAttribute("aria-pressed", live ? "true" : "false");
    const lag = Number(this.context.player.video.dataset.liveLagMs);
    this.note.hidden = !live;
    this.note.textContent = live && Number.isFinite(lag) ? `live, ${(lag / 1000).toFixed(1)} s behind` : "live";
  }
}
