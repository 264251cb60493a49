// The read-only page of a share link (docs/shares.md): `share.html#<share id>.<secret>`.
// The secret lives in the fragment, which the browser never sends anywhere; the page hands
// it to the share's public routes as `key` and plays the share's window with hls.js. No
// sign-in, no token: nothing of the signed-in viewer is loaded here.

import Hls from "./hls.mjs";

const $ = (selector) => document.querySelector(selector);
const API_BASE = new URL("../", document.baseURI);

/** What an answer of a share route means for its holder, in words. */
function refusal(status) {
  if (status === 410) return "This link has expired or was revoked.";
  if (status === 404) return "This link is not valid (it may be incomplete).";
  return `The link could not be opened (the server answered ${status}).`;
}

/** The share's id and secret from the fragment, or null. */
export function linkOf(hash) {
  const found = /^#([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/.exec(hash);
  return found ? { id: found[1], key: found[2] } : null;
}

function shareUrl(link, rest = "") {
  const target = new URL(`shares/${link.id}${rest}`, API_BASE);
  target.searchParams.set("key", link.key);
  return target;
}

function say(text, kind = "info") {
  const line = $("#share-state");
  line.textContent = text;
  line.dataset.kind = kind;
}

function play(link) {
  const video = $("#share-video");
  video.hidden = false;
  // A test hook, and a fact: more than a second of the window has played.
  video.addEventListener("timeupdate", () => {
    if (video.currentTime > 1) video.dataset.played = "true";
  });
  const source = shareUrl(link, "/playlist.m3u8").href;
  if (!Hls.isSupported()) {
    video.src = source; // Safari plays HLS itself
    return;
  }
  const hls = new Hls();
  hls.on(Hls.Events.ERROR, (_event, data) => {
    if (data.fatal) say(`The video could not be played (${data.details}).`, "error");
  });
  // Muted, so the browser lets it start by itself; the controls unmute it.
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch(() => {}));
  hls.loadSource(source);
  hls.attachMedia(video);
  window.__share = { hls, video };
}

async function open() {
  const link = linkOf(window.location.hash);
  if (!link) {
    say("This link is not valid (it may be incomplete).", "error");
    return;
  }
  const response = await fetch(shareUrl(link), { headers: { Accept: "application/json" } });
  if (!response.ok) {
    say(refusal(response.status), "error");
    return;
  }
  const share = await response.json();
  $("#share-title").textContent = `Camera ${share.device}`;
  $("#share-window").textContent = `${share.from} to ${share.to} (UTC)`;
  say(`This link works until ${share.expires_at} (UTC).`);
  if (share.download) {
    const download = $("#share-download");
    download.href = shareUrl(link, "/download").href;
    download.hidden = false;
  }
  play(link);
}

open().catch((error) => say(`The link could not be opened: ${error.message}`, "error"));
