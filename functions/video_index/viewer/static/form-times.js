// The annotation form's times (docs/annotations.md, docs/viewer.md "Times that never shift").
//
// A datetime-local field holds wall-clock seconds in a zone; an instant holds milliseconds
// and no zone. Turning one into the other and back loses what the field cannot show (the
// milliseconds) and, in the hour a daylight-saving change repeats, which of the two
// instants was meant. So a field never round-trips: it keeps the instant it was given and
// answers exactly that instant until the person changes the field; only then is a new one
// derived from what they typed. When what they typed happens twice (the repeated hour), the
// field shows both offsets and the person chooses; when it never happens (the skipped hour),
// the field says so instead of guessing.

import { offsetMs, pad, toLocalInput, zoneName } from "./zones.js";

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/;
const DAY_MS = 86_400_000;

/** Wall-clock milliseconds (a local time read as if it were UTC) of a datetime-local value. */
function wallOf(value) {
  const match = LOCAL.exec(value || "");
  if (!match) return Number.NaN;
  const [, y, mo, d, h, mi, s] = match.map((part) => Number(part || 0));
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/**
 * Every instant the datetime-local `value` names in `zone`, earliest first: one on most
 * days, two in a repeated hour, none in a skipped hour or for an empty value.
 */
export function instantsOf(value, zone) {
  const wall = wallOf(value);
  if (!Number.isFinite(wall)) return [];
  // The offsets in force a day either side cover every offset the wall time could have
  // (zones change at most once a day); a candidate counts only if it reads back the same.
  const offsets = new Set([offsetMs(wall - DAY_MS, zone), offsetMs(wall, zone), offsetMs(wall + DAY_MS, zone)]);
  const shown = toLocalInput(wall, "UTC");
  const found = [...offsets].map((offset) => wall - offset)
    .filter((ms) => toLocalInput(ms, zone) === shown);
  return [...new Set(found)].sort((a, b) => a - b);
}

/** "UTC+02:00" of the zone's offset at `ms`. */
export function offsetText(ms, zone) {
  const offset = offsetMs(ms, zone);
  const sign = offset < 0 ? "−" : "+";
  const minutes = Math.abs(offset) / 60_000;
  return `UTC${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** The label of one choice in a repeated hour: "CEST (UTC+02:00)", or "UTC+02:00" where the
 * browser knows no abbreviation. */
export function choiceLabel(ms, zone) {
  const name = zoneName(ms, zone);
  const offset = offsetText(ms, zone);
  return /^(GMT|UTC)/.test(name) ? offset : `${name} (${offset})`;
}

/**
 * One time field of the form: a datetime-local input and, beside it, a select of the
 * offsets when the input's local time repeats (hidden otherwise).
 */
export class TimeField {
  /** @param {HTMLInputElement} input @param {HTMLSelectElement} offset */
  constructor(input, offset) {
    this.input = input;
    this.offset = offset;
    this.zone = "UTC";
    this.given = Number.NaN; // the instant the field was filled with
    this.shown = ""; // the input's value when filled
    this.shownChoice = ""; // the offset select's value when filled
    input.addEventListener("input", () => this.refreshChoices());
    input.addEventListener("change", () => this.refreshChoices());
  }

  /** Fill with the instant `ms` (kept exactly while the person leaves the field alone). */
  set(ms, zone) {
    this.zone = zone;
    this.given = ms;
    this.input.value = Number.isFinite(ms) ? toLocalInput(ms, zone) : "";
    this.shown = this.input.value;
    this.refreshChoices(ms);
    this.shownChoice = this.offset.value;
  }

  /** Whether the person changed the field (its time or its chosen offset) since `set`. */
  changed() {
    return this.input.value !== this.shown || this.offset.value !== this.shownChoice;
  }

  /** Offer the offsets when the input's time repeats; `prefer` is the instant to select. */
  refreshChoices(prefer = Number.NaN) {
    const instants = instantsOf(this.input.value, this.zone);
    const previous = Number(this.offset.value);
    this.offset.replaceChildren(...instants.map((ms) => {
      const option = document.createElement("option");
      option.value = String(ms);
      option.textContent = choiceLabel(ms, this.zone);
      return option;
    }));
    // (instants of a field are whole seconds; the one given may carry milliseconds)
    const keep = [prefer, previous].map((ms) => Math.floor(ms / 1000) * 1000)
      .find((ms) => instants.includes(ms));
    if (keep !== undefined) this.offset.value = String(keep);
    const repeats = instants.length > 1;
    this.offset.hidden = !repeats;
    this.offset.disabled = !repeats || this.input.disabled;
  }

  /**
   * The instant the field means: the one it was given while unchanged, else the one the
   * person typed (and chose, in a repeated hour). Throws with a message naming `label`.
   */
  value(label) {
    if (!this.changed() && Number.isFinite(this.given)) return this.given;
    const instants = instantsOf(this.input.value, this.zone);
    if (!this.input.value) throw new Error(`${label} is required`);
    if (!instants.length) {
      throw new Error(`${label}: ${this.input.value.replace("T", " ")} does not exist in ${this.zone} (the clocks skip it)`);
    }
    if (instants.length === 1) return instants[0];
    const chosen = Number(this.offset.value);
    if (!instants.includes(chosen)) throw new Error(`${label}: choose the offset, the time happens twice`);
    return chosen;
  }
}
