// A few lines instead of a framework: make elements, empty them, show a status line.

/** An element with attributes (`on*` functions become listeners) and children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "text") {
      element.textContent = value;
    } else if (name === "style") {
      Object.assign(element.style, value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

let statusTimer = 0;

/** A message in the status line (announced to screen readers); errors stay until replaced. */
export function status(message, kind = "info") {
  const line = document.getElementById("status");
  if (!line) return;
  window.clearTimeout(statusTimer);
  line.textContent = message || "";
  line.dataset.kind = kind;
  line.hidden = !message;
  if (message && kind === "info") {
    statusTimer = window.setTimeout(() => { line.hidden = true; }, 6000);
  }
}

/** An error shown in the status line as "<what>: <message>", never thrown into the console
 * (an aborted request is no error). */
export function report(error, what) {
  if (error && error.name === "AbortError") return;
  const message = error instanceof Error ? error.message : String(error);
  status(`${what}: ${message}`, "error");
}

/** `action` as a listener whose failure is reported as "<what>: …". */
export function guarded(what, action) {
  return (...args) => Promise.resolve().then(() => action(...args)).catch((error) => report(error, what));
}
