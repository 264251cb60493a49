// Who the page acts for. With a JWT-authorized API every request carries
// `Authorization: Bearer <token>`: a token pasted by the user, or one from an OpenID Connect
// login (authorization code with PKCE: a public client, no secret in the page). The token
// lives in sessionStorage only (gone with the tab). The local stack needs no token; there,
// a name may be given instead, sent as `X-User` on annotation changes (docs/viewer.md).

const TOKEN_KEY = "video-index.token";
const USER_KEY = "video-index.user";
const LOGIN_KEY = "video-index.oidc-login";

/** The stored token, or null (an expired one is forgotten). */
export function token() {
  const stored = sessionStorage.getItem(TOKEN_KEY);
  if (stored && isExpired(stored)) {
    sessionStorage.removeItem(TOKEN_KEY);
    return null;
  }
  return stored;
}

export function setToken(value) {
  const trimmed = (value || "").trim().replace(/^Bearer\s+/i, "");
  if (trimmed) sessionStorage.setItem(TOKEN_KEY, trimmed);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** The name sent as X-User (local stack only), or null. */
export function localUser() {
  return sessionStorage.getItem(USER_KEY);
}

export function setLocalUser(value) {
  const trimmed = (value || "").trim();
  if (trimmed) sessionStorage.setItem(USER_KEY, trimmed);
  else sessionStorage.removeItem(USER_KEY);
}

/** The claims of a JWT, unverified (for display and expiry only: the API verifies). */
export function claims(jwt) {
  const parts = (jwt || "").split(".");
  if (parts.length !== 3) return null;
  try {
    const text = atob(parts[1].replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

function isExpired(jwt) {
  const found = claims(jwt);
  return Boolean(found && typeof found.exp === "number" && found.exp * 1000 <= Date.now());
}

/** Who the page acts as, for display. */
export function identity() {
  const current = token();
  if (current) {
    const found = claims(current);
    return (found && (found.email || found.preferred_username || found.sub)) || "signed in";
  }
  return localUser();
}

function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function random(size) {
  return base64url(crypto.getRandomValues(new Uint8Array(size)));
}

async function discover(issuer) {
  const response = await fetch(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`the identity provider answered ${response.status}`);
  return response.json();
}

function redirectUri() {
  return `${location.origin}${location.pathname}`;
}

/** Leave for the identity provider's login page; the page comes back with ?code=&state=. */
export async function beginLogin(oidc) {
  const provider = await discover(oidc.issuer);
  const verifier = random(48);
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const state = random(16);
  sessionStorage.setItem(LOGIN_KEY, JSON.stringify({
    verifier, state, tokenEndpoint: provider.token_endpoint, back: location.search,
  }));
  const url = new URL(provider.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code", client_id: oidc.client_id, redirect_uri: redirectUri(),
    scope: "openid", state, code_challenge: challenge, code_challenge_method: "S256",
  }).toString();
  location.assign(url.toString());
}

/** Back from the identity provider: trade the code for a token, restore the address the
 * user left from. Returns true when a login was completed. */
export async function completeLogin(oidc) {
  const params = new URLSearchParams(location.search);
  const saved = JSON.parse(sessionStorage.getItem(LOGIN_KEY) || "null");
  if (!oidc || !saved || !params.has("state") || !(params.has("code") || params.has("error"))) {
    return false;
  }
  sessionStorage.removeItem(LOGIN_KEY);
  history.replaceState(null, "", `${location.pathname}${saved.back || ""}`);
  if (params.get("state") !== saved.state) throw new Error("the login answer does not match the request");
  if (params.has("error")) throw new Error(`login failed: ${params.get("error_description") || params.get("error")}`);
  const response = await fetch(saved.tokenEndpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code", code: params.get("code"), redirect_uri: redirectUri(),
      client_id: oidc.client_id, code_verifier: saved.verifier,
    }),
  });
  if (!response.ok) throw new Error(`the identity provider refused the login (${response.status})`);
  const tokens = await response.json();
  // The token the API takes (its access policy's token_use, docs/access.md): the ID token,
  // which carries the user's attributes (the device scope, custom:devices), unless the
  // deployment takes access tokens. Never the other one: a Cognito access token has the
  // groups but not the scope, and the API refuses it where it expects the ID token.
  const kind = oidc.token === "access" ? "access" : "id";
  const chosen = kind === "access" ? tokens.access_token : tokens.id_token;
  if (!claims(chosen)) throw new Error(`the identity provider gave no ${kind} token`);
  setToken(chosen);
  return true;
}
