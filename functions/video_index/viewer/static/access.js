// What the caller may do, as the API says it (GET /me, docs/access.md): the page shows the
// controls of those actions and no others. The role table lives on the server only; hiding a
// control is a convenience, the API refuses what the role does not allow all the same.
//
// A control of the page is marked with the action it needs, `data-needs="annotate"`, and
// shown only when /me names that action; controls made by a module ask `can("annotate")`.

import { ApiError, request } from "./api.js";
import { status } from "./dom.js";

/** The /me answer ({principal, role, roles, actions, scope}), or null: nothing allowed. */
let current = null;

/** Ask the API who the page acts for (again after a sign-in); shows and hides the controls. */
export async function loadAccess() {
  try {
    current = (await request("me", { user: true })).data;
  } catch (error) {
    current = null;
    if (error instanceof ApiError && error.status === 403) {
      status("this account has no role here: ask an administrator for one", "error");
    } else if (!(error instanceof ApiError && error.status === 401)) {
      applyAccess();
      throw error;
    }
  }
  applyAccess();
  return current;
}

/** The caller as the API names it, or null. */
export function caller() {
  return current;
}

/** Whether the caller's roles allow `action` (one of /me's `actions`). */
export function can(action) {
  return Boolean(current && current.actions.includes(action));
}

/** Whether the caller made `item` (an annotation, a request: its `created_by`). */
export function owns(item) {
  return Boolean(current && item && item.created_by === current.principal);
}

/** Show the marked controls the caller may use, hide the others. */
export function applyAccess(root = document) {
  document.body.dataset.role = current ? current.role : "none";
  for (const element of root.querySelectorAll("[data-needs]")) {
    element.hidden = !can(element.dataset.needs);
  }
}
