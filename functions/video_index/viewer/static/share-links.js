// Share links from the day's page (docs/shares.md, docs/viewer.md "Share a window"): an
// operator shares the window chosen for an export (drag across the timeline, or the two
// times) for a chosen life, sees the device's shares and revokes one. The link is shown
// once (its secret is not stored anywhere); the list never holds a secret.

import { ApiError, devicePath, request } from "./api.js";
import { h } from "./dom.js";

/** The lives offered, in seconds (the server holds the maximum: 7 days by default). */
export const LIVES = [["1 hour", 3600], ["1 day", 86_400], ["7 days", 604_800]];

export class ShareLinks {
  /**
   * @param {HTMLElement} root the share section (index.html, `data-needs="share"`)
   * @param {{day: ?{device: string}, window: (strict: boolean) => ?[number, number]}} exporter
   */
  constructor(root, exporter) {
    this.root = root;
    this.exporter = exporter;
    this.form = root.querySelector("form");
    this.list = root.querySelector("ul");
    this.state = root.querySelector(".share-state");
    this.link = root.querySelector("input[name=link]");
    for (const [label, seconds] of LIVES) this.form.elements.life.append(h("option", { value: String(seconds) }, label));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create().catch((error) => this.say(words(error), "error"));
    });
    const opener = root.querySelector("button.share-open");
    opener.addEventListener("click", () => {
      const open = opener.getAttribute("aria-expanded") !== "true";
      opener.setAttribute("aria-expanded", String(open));
      root.querySelector("#share-body").hidden = !open;
      if (open) this.refresh().catch((error) => this.say(words(error), "error"));
    });
  }

  say(text, kind = "info") {
    this.state.textContent = text;
    this.state.dataset.kind = kind;
  }

  /** Share the export form's window of the open device. */
  async create() {
    const device = this.exporter.day && this.exporter.day.device;
    const window = this.exporter.window(false);
    if (!device || !window) {
      this.say("Choose a window first: drag across the timeline, or type the times above.", "error");
      return;
    }
    const body = {
      from: new Date(window[0]).toISOString(),
      to: new Date(window[1]).toISOString(),
      expires_in_s: Number(this.form.elements.life.value),
      download: this.form.elements.download.checked,
    };
    const { data } = await request(devicePath(device, "/shares"), { method: "POST", body });
    this.link.value = data.url;
    this.link.hidden = false;
    this.say(`Shared until ${data.expires_at}. Copy the link now: it is shown only once.`);
    await this.refresh();
  }

  /** The device's shares, each active one with its revoke button. */
  async refresh() {
    const device = this.exporter.day && this.exporter.day.device;
    if (!device) return;
    const { data } = await request(devicePath(device, "/shares"));
    this.list.replaceChildren(...data.items.map((share) => this.row(share)));
  }

  row(share) {
    const text = `${share.from} – ${share.to}, ${share.state}, until ${share.expires_at} (${share.created_by})`;
    const item = h("li", { "data-testid": "share-item", "data-state": share.state }, text);
    if (share.state === "active") {
      const revoke = h("button", { type: "button", "data-testid": "share-revoke" }, "Revoke");
      revoke.addEventListener("click", () => this.revoke(share.share_id).catch((error) => this.say(words(error), "error")));
      item.append(" ", revoke);
    }
    return item;
  }

  async revoke(shareId) {
    await request(`shares/${shareId}`, { method: "DELETE" });
    this.say("Revoked: the link stops working at once.");
    await this.refresh();
  }
}

function words(error) {
  if (error instanceof ApiError && error.status === 403) return "Your role does not allow this (shares need an operator; revoking, the share's creator or an admin).";
  return error.message;
}
