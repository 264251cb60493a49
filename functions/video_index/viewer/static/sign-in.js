// Signing in (docs/viewer.md "Signing in"): the account button, the dialog (a token pasted,
// a local user name, or the identity provider's login) and the name shown beside it.

import { beginLogin, identity, localUser, setLocalUser, setToken, token } from "./auth.js";
import { $, guarded } from "./dom.js";

/** The dialog and button of the page; `oidc()` gives the identity provider (null: none);
 * `onChange()` runs after the caller signed in or out. */
export class SignIn {
  constructor({ oidc, onChange }) {
    this.button = $("#sign-in");
    this.dialog = $("#sign-in-dialog");
    this.label = $("#identity");
    this.oidc = oidc;
    this.button.addEventListener("click", () => this.open());
    $("#oidc-login").addEventListener("click", guarded("signing in", () => beginLogin(this.oidc())));
    this.dialog.addEventListener("close", guarded("signing in", async () => {
      if (!this.apply(this.dialog.returnValue)) return;
      this.show();
      await onChange();
    }));
    window.addEventListener("auth-required", () => this.open("The API asks for a sign-in (401)."));
  }

  /** Who is signed in, beside the button. */
  show() {
    const who = identity();
    this.label.textContent = who ? `as ${who}` : "";
    this.button.textContent = token() ? "Account" : "Sign in";
  }

  open(reason = "") {
    if (this.dialog.open) return;
    $("#sign-in-reason").textContent = reason;
    $("#token-input").value = token() || "";
    $("#user-input").value = localUser() || "";
    $("#oidc-login").hidden = !this.oidc();
    this.dialog.returnValue = "";
    this.dialog.showModal();
  }

  /** The dialog's choice applied; false when it was closed without one. */
  apply(choice) {
    if (choice === "save") {
      setToken($("#token-input").value);
      setLocalUser($("#user-input").value);
    } else if (choice === "sign-out") {
      setToken("");
      setLocalUser("");
    } else {
      return false;
    }
    return true;
  }
}
