// Annotations of the open day and of the playing moment (docs/annotations.md, docs/viewer.md): listed by start, those
// covering the moment marked; added, edited (a whole replacement) and deleted with the
// version the user saw (`If-Match`). When someone else changed it meanwhile the API answers
// 412: the page shows their version beside the user's and lets the user choose — keep
// theirs, go back to editing, or knowingly save over theirs. Nothing is overwritten silently.
// Only the controls the caller's role allows are shown (access.js): a reviewer edits their
// own annotations and only the review status of others'; an admin edits any.

import { can, owns } from "./access.js";
import { ApiError, all, devicePath, request } from "./api.js";
import { h, clear, status } from "./dom.js";
import { TimeField } from "./form-times.js";
import { clockTime, dateTime, iso, parseIso } from "./zones.js";

const TAG = /^[a-z0-9-]{1,32}$/;
const MAX_TAGS = 20;

/** [fromMs, toMs] of an annotation's target when it names times, else null. */
export function spanOf(annotation) {
  const target = annotation.target || {};
  const from = parseIso(target.from ?? annotation.start);
  const to = parseIso(target.to ?? annotation.end);
  return Number.isFinite(from) && Number.isFinite(to) ? [from, to] : null;
}

export class Annotations {
  /**
   * @param {{list: HTMLElement, form: HTMLFormElement, dialog: HTMLDialogElement,
   *          context: () => {device: string, zone: string, moment: number|null, segment: string|null},
   *          onChange: Function}} parts
   */
  constructor({ list, form, dialog, context, onChange }) {
    this.list = list;
    this.form = form;
    this.dialog = dialog;
    this.context = context;
    this.onChange = onChange;
    this.items = [];
    this.window = null;
    this.editing = null; // {id, etag} while editing, null while adding
    this.reviewOnly = false; // editing another's annotation: its review status only
    // The form's times keep the instants they were given (docs/viewer.md)
    this.from = new TimeField(form.elements.from, form.elements.fromOffset);
    this.to = new TimeField(form.elements.to, form.elements.toOffset);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
    form.elements.cancel.addEventListener("click", () => this.closeForm());
    form.addEventListener("change", () => this.syncTarget());
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.closeForm();
      }
    });
  }

  /** Load the annotations whose target intersects [from, to) (the open day). */
  async load(device, from, to) {
    this.window = { device, from, to };
    const items = await all(devicePath(device, "/annotations"), { from: iso(from), to: iso(to), limit: 100 });
    if (this.window.device !== device || this.window.from !== from) return;
    this.items = items;
    this.render();
  }

  clearList() {
    this.window = null;
    this.items = [];
    clear(this.list);
  }

  render() {
    const { zone } = this.context();
    clear(this.list);
    if (!this.items.length) {
      this.list.append(h("li", { class: "empty", text: "No annotations on this day yet." }));
    }
    for (const item of this.items) {
      const span = spanOf(item);
      const when = span
        ? `${clockTime(span[0], zone)} – ${clockTime(span[1], zone)}`
        : `segment ${item.target && item.target.segment}`;
      this.list.append(h("li", {
        "data-testid": "annotation", "data-annotation-id": item.annotation_id,
        "data-version": item.version, "data-status": item.status,
      },
      h("div", { class: "annotation-head" },
        h("span", { class: "when", text: when }),
        h("span", { class: `badge status-${item.status}`, text: item.status }),
        item.segment_present === false ? h("span", { class: "badge gone", text: "segment gone" }) : null),
      item.description ? h("p", { class: "description", text: item.description }) : null,
      item.tags && item.tags.length ? h("p", { class: "tags" }, item.tags.map((tag) => h("span", { class: "tag", text: tag }))) : null,
      h("p", { class: "meta", text: `v${item.version} · ${item.updated_by || item.created_by || "?"} · ${item.updated_at ? dateTime(parseIso(item.updated_at), zone) : ""}` }),
      this.actions(item)));
    }
    this.mark(this.lastMoment ?? null, this.lastSegment ?? null);
    this.onChange(this.items);
  }

  /** The controls of one listed annotation the caller may use (none for a viewer). */
  actions(item) {
    const mine = owns(item) && can("annotate");
    const any = can("manage_others");
    const review = !mine && !any && can("review");
    if (!mine && !any && !review) return null;
    return h("div", { class: "actions" },
      h("button", {
        type: "button", "data-action": review ? "review" : "edit",
        onclick: () => this.openEdit(item.annotation_id, { reviewOnly: review }),
        text: review ? "Review" : "Edit",
      }),
      mine || any ? h("button", { type: "button", "data-action": "delete", onclick: () => this.remove(item), text: "Delete" }) : null);
  }

  /** Mark the annotations that cover the moment `ms` or target the segment playing. */
  mark(ms, segment) {
    this.lastMoment = ms;
    this.lastSegment = segment;
    for (const element of this.list.querySelectorAll("[data-testid=annotation]")) {
      const item = this.items.find((i) => i.annotation_id === element.dataset.annotationId);
      const span = item && spanOf(item);
      const now = Boolean(item && ms !== null && (
        (span && span[0] <= ms && ms < Math.max(span[1], span[0] + 1000)) ||
        (segment && item.target && item.target.kind === "video" && item.target.name === segment)));
      if ((element.dataset.now === "true") !== now) element.dataset.now = now ? "true" : "false";
    }
  }

  // --- the form -----------------------------------------------------------------------------

  openNew() {
    if (!can("annotate")) return;
    const { moment, zone, segment } = this.context();
    const start = moment ?? Date.now();
    this.editing = null;
    this.reviewOnly = false;
    this.fill({
      target: { from: iso(start), to: iso(start + 10_000) }, description: "", status: "pending", tags: [],
    }, zone, segment);
    this.form.querySelector(".form-title").textContent = "New annotation";
    this.show();
  }

  async openEdit(id, { reviewOnly = false } = {}) {
    const { device, zone, segment } = this.context();
    try {
      const { data, etag } = await request(devicePath(device, `/annotations/${encodeURIComponent(id)}`));
      this.editing = { id, etag, version: data.version };
      this.reviewOnly = reviewOnly;
      this.fill(data, zone, segment);
      const verb = reviewOnly ? "Review" : "Edit";
      this.form.querySelector(".form-title").textContent = `${verb} annotation (version ${data.version})`;
      this.show();
    } catch (error) {
      status(`could not open the annotation: ${error.message}`, "error");
    }
  }

  fill(annotation, zone, segment) {
    const fields = this.form.elements;
    const span = spanOf(annotation);
    const onSegment = Boolean(annotation.target && annotation.target.name);
    fields.target.value = onSegment ? "segment" : "range";
    // a segment target is its entry's kind and file name; the player plays video files
    fields.segment.value = onSegment ? annotation.target.name : segment || "";
    fields.segmentKind.value = onSegment ? annotation.target.kind : "video";
    const start = span ? span[0] : this.context().moment ?? Date.now();
    this.from.set(start, zone);
    this.to.set(span ? span[1] : start + 10_000, zone);
    fields.description.value = annotation.description || "";
    fields.status.value = annotation.status || "pending";
    fields.tags.value = (annotation.tags || []).join(", ");
    this.form.querySelector(".form-error").textContent = "";
    this.syncTarget();
  }

  syncTarget() {
    const fields = this.form.elements;
    const onSegment = fields.target.value === "segment";
    fields.from.disabled = onSegment || this.reviewOnly;
    fields.to.disabled = onSegment || this.reviewOnly;
    fields.segment.disabled = !onSegment;
    // Reviewing another's annotation: the server accepts a change of its status only.
    for (const name of ["description", "tags"]) fields[name].disabled = this.reviewOnly;
    for (const radio of this.form.querySelectorAll("input[name=target]")) radio.disabled = this.reviewOnly;
    this.from.refreshChoices();
    this.to.refreshChoices();
    this.form.querySelector("[data-target=segment]").disabled = !fields.segment.value || this.reviewOnly;
  }

  show() {
    this.form.hidden = false;
    this.form.elements[this.reviewOnly ? "status" : "description"].focus();
  }

  closeForm() {
    this.form.hidden = true;
    this.editing = null;
    this.reviewOnly = false;
  }

  /** The form as the API's body; throws with a message naming the field. */
  body() {
    const fields = this.form.elements;
    let target;
    if (fields.target.value === "segment") {
      if (!fields.segment.value) throw new Error("no segment is playing to annotate");
      target = { kind: fields.segmentKind.value || "video", name: fields.segment.value };
    } else {
      const from = this.from.value("from");
      const to = this.to.value("to");
      if (to <= from) throw new Error("to must be after from");
      target = { from: iso(from), to: iso(to) };
    }
    const tags = fields.tags.value.split(/[\s,]+/).filter(Boolean);
    const bad = tags.find((tag) => !TAG.test(tag));
    if (bad) throw new Error(`tag ${JSON.stringify(bad)}: use 1 to 32 of a-z, 0-9 and -`);
    if (tags.length > MAX_TAGS) throw new Error(`at most ${MAX_TAGS} tags`);
    return { target, description: fields.description.value, status: fields.status.value, tags };
  }

  async save(etag = null) {
    const { device } = this.context();
    const error = this.form.querySelector(".form-error");
    let body;
    try {
      body = this.body();
    } catch (problem) {
      error.textContent = problem.message;
      return;
    }
    error.textContent = "";
    try {
      if (this.editing) {
        const id = this.editing.id;
        await request(devicePath(device, `/annotations/${encodeURIComponent(id)}`), {
          method: "PUT", body, ifMatch: etag || this.editing.etag, user: true,
        });
        status("annotation saved");
      } else {
        await request(devicePath(device, "/annotations"), { method: "POST", body, user: true });
        status("annotation added");
      }
      this.closeForm();
      await this.reload();
    } catch (problem) {
      if (problem instanceof ApiError && problem.status === 412 && this.editing) {
        await this.conflict(body);
      } else {
        error.textContent = problem.message;
      }
    }
  }

  async reload() {
    if (this.window) await this.load(this.window.device, this.window.from, this.window.to);
  }

  async remove(item) {
    const { device } = this.context();
    const path = devicePath(device, `/annotations/${encodeURIComponent(item.annotation_id)}`);
    if (!window.confirm(`Delete this annotation (version ${item.version})?`)) return;
    try {
      // The version the user saw is the one deleted: a newer one is a conflict.
      const { data, etag } = await request(path);
      if (data.version !== item.version) {
        await this.deleteConflict(item, data, etag);
        return;
      }
      await request(path, { method: "DELETE", ifMatch: etag, user: true });
      status("annotation deleted");
      await this.reload();
    } catch (problem) {
      if (problem instanceof ApiError && problem.status === 412) {
        await this.deleteConflict(item, null, null);
      } else {
        status(`could not delete: ${problem.message}`, "error");
        await this.reload();
      }
    }
  }

  // --- conflicts ----------------------------------------------------------------------------

  /** Their current version, or null when it was deleted. */
  async current(id) {
    const { device } = this.context();
    try {
      return await request(devicePath(device, `/annotations/${encodeURIComponent(id)}`));
    } catch (problem) {
      if (problem instanceof ApiError && problem.status === 404) return null;
      throw problem;
    }
  }

  /** The 412 of a save: show theirs beside mine; the user decides. */
  async conflict(mine) {
    const id = this.editing.id;
    const theirs = await this.current(id);
    const choice = await this.ask({
      title: theirs ? "Someone else changed this annotation" : "Someone else deleted this annotation",
      text: theirs
        ? `You edited version ${this.editing.version}; version ${theirs.data.version} was saved by ${theirs.data.updated_by} at ${dateTime(parseIso(theirs.data.updated_at), this.context().zone)}. Your changes are not saved yet.`
        : `You edited version ${this.editing.version}; it was deleted meanwhile. Your changes are not saved yet.`,
      theirs: theirs ? theirs.data : null,
      mine,
      choices: theirs
        ? [["theirs", "Keep theirs"], ["edit", "Edit again"], ["mine", "Save mine over theirs"]]
        : [["theirs", "Discard mine"], ["new", "Save mine as a new annotation"]],
    });
    if (choice === "theirs") {
      this.closeForm();
      await this.reload();
    } else if (choice === "edit") {
      // Theirs is now the version being edited: the next save replaces it knowingly.
      this.editing = { id, etag: theirs.etag, version: theirs.data.version };
      this.form.querySelector(".form-title").textContent = `Edit annotation (version ${theirs.data.version})`;
      this.show();
    } else if (choice === "mine") {
      this.editing = { id, etag: theirs.etag, version: theirs.data.version };
      await this.save(theirs.etag);
    } else if (choice === "new") {
      this.editing = null;
      await this.save();
    }
  }

  async deleteConflict(item, data, etag) {
    const theirs = data ? { data, etag } : await this.current(item.annotation_id);
    if (!theirs) {
      status("it was already deleted by someone else");
      await this.reload();
      return;
    }
    const choice = await this.ask({
      title: "Someone else changed this annotation",
      text: `You meant to delete version ${item.version}; version ${theirs.data.version} was saved by ${theirs.data.updated_by} since.`,
      theirs: theirs.data,
      mine: null,
      choices: [["theirs", "Keep it"], ["delete", "Delete their version"]],
    });
    if (choice === "delete") {
      try {
        await request(devicePath(this.context().device, `/annotations/${encodeURIComponent(item.annotation_id)}`), {
          method: "DELETE", ifMatch: theirs.etag, user: true,
        });
        status("annotation deleted");
      } catch (problem) {
        status(`could not delete: ${problem.message}`, "error");
      }
    }
    await this.reload();
  }

  /** The conflict dialog; resolves with the choice's value ("cancel" on Escape). */
  ask({ title, text, theirs, mine, choices }) {
    const dialog = this.dialog;
    const { zone } = this.context();
    clear(dialog).append(h("form", { method: "dialog" },
      h("h2", { text: title }),
      h("p", { text }),
      h("div", { class: "compare" },
        theirs ? version("Their version", theirs, zone, "theirs") : null,
        mine ? version("Your version", mine, zone, "mine") : null),
      h("div", { class: "actions" }, choices.map(([value, label]) => h("button", { value, text: label })))));
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue || "cancel"), { once: true });
      dialog.returnValue = "";
      dialog.showModal();
    });
  }
}

function version(title, annotation, zone, which) {
  const span = spanOf(annotation);
  return h("section", { class: "version", "data-version-of": which },
    h("h3", { text: title }),
    h("dl", {},
      h("dt", { text: "When" }),
      h("dd", { text: span ? `${dateTime(span[0], zone)} – ${clockTime(span[1], zone)}` : `segment ${annotation.target.segment}` }),
      h("dt", { text: "Status" }), h("dd", { text: annotation.status }),
      h("dt", { text: "Tags" }), h("dd", { text: (annotation.tags || []).join(", ") || "–" }),
      h("dt", { text: "Description" }), h("dd", { class: "description", text: annotation.description || "–" })));
}
