// Tiny DOM helpers shared by the page modules. User data only ever goes in through textContent.

// h("button.primary", {dataset: {action: "run"}, title: "Run"}, "Run") -> element
export function h(spec, props = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag || "div");
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function emit(target, name, detail) {
  target.dispatchEvent(new CustomEvent(name, { detail, bubbles: true }));
}

export function debounce(fn, ms) {
  let timer = null;
  const wrapped = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, ms);
  };
  wrapped.flush = (...args) => {
    if (timer === null) return;
    clearTimeout(timer);
    timer = null;
    fn(...args);
  };
  wrapped.pending = () => timer !== null;
  return wrapped;
}

// The HTML each element had when it was drawn, for keepDrawn.
const drawnAs = new WeakMap();

// Note what `el` is drawn as now (keepDrawn does for what it puts in place); returns it.
export function markDrawn(el) {
  drawnAs.set(el, el.outerHTML);
  return el;
}

// Make `parent`'s children the `fresh` elements, keeping in their place the children already
// there that were drawn the same. A refresh that rebuilt a list took an opened <details>, a
// hover, a selection or a button half-pressed away from under the user (the Running page, the
// data panel). Compared with the HTML drawn, not the live element, which the user's own handling
// may have changed (a row opened, its body filled).
export function keepDrawn(parent, fresh) {
  const old = new Map();
  for (const el of parent.children) {
    const html = drawnAs.get(el);
    if (html === undefined) continue;
    if (!old.has(html)) old.set(html, []);
    old.get(html).push(el);
  }
  const next = fresh.map((el) => old.get(el.outerHTML)?.shift() || markDrawn(el));
  const same = next.length === parent.children.length && next.every((el, i) => parent.children[i] === el);
  if (!same) parent.replaceChildren(...next);
}
