// The product's HTTP API, as the page calls it: relative to the page (the viewer is served
// by the API itself), with the token when there is one, errors as ApiError.

import { localUser, token } from "./auth.js";

/** The API's base: the folder the page is served from (`/viewer` → `/`). */
// A page below /viewer/ (grid.html) names the API's base in <meta name="api-base">.
export const API_BASE = new URL(document.querySelector("meta[name=api-base]")?.content || "./", document.baseURI);

export class ApiError extends Error {
  constructor(status, body, headers) {
    const detail = body && body.error ? body.error : null;
    const what = detail ? `${detail.parameter ? `${detail.parameter}: ` : ""}${detail.message}` : "";
    super(what ? `${status}: ${what}` : `the API answered ${status}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export function url(path, params = {}) {
  const target = new URL(path.replace(/^\//, ""), API_BASE);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") target.searchParams.set(name, value);
  }
  return target;
}

/** Whether a URL goes to the API (only those get the token). */
export function isApi(address) {
  return new URL(address, API_BASE).origin === API_BASE.origin;
}

/** Headers every API request carries: the token, and X-User when asked (local stack). */
export function authHeaders({ user = false } = {}) {
  const headers = {};
  const bearer = token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const name = localUser();
  if (user && name) headers["X-User"] = name;
  return headers;
}

/** One request: {status, data, etag}; a status of 400 or more raises ApiError. */
export async function request(path, { method = "GET", params, body, ifMatch, user = false, signal } = {}) {
  const headers = { Accept: "application/json", ...authHeaders({ user }) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  const response = await fetch(url(path, params), {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent("auth-required"));
  if (!response.ok) throw new ApiError(response.status, data, response.headers);
  return { status: response.status, data, etag: response.headers.get("ETag"), headers: response.headers };
}

export async function get(path, params, options = {}) {
  return (await request(path, { ...options, params })).data;
}

/** Every item of a paginated list, following next_cursor (at most `maxPages` pages). */
export async function all(path, params = {}, { maxPages = 20, signal } = {}) {
  const items = [];
  let cursor = null;
  for (let page = 0; page < maxPages; page += 1) {
    const data = await get(path, { ...params, cursor }, { signal });
    items.push(...data.items);
    cursor = data.next_cursor;
    if (!cursor) break;
  }
  return items;
}

export function devicePath(device, rest = "") {
  return `devices/${encodeURIComponent(device)}${rest}`;
}
