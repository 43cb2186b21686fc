// Building the page's elements. Everything a server sends is put in as text
// (text nodes, textContent, attribute values): never parsed as HTML.

// el("button", {class: "x", onclick: fn}, "text", child, ...)
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "text") {
      node.textContent = String(value);
    } else if (key === "value") {
      node.value = value;
    } else if (key === "checked") {
      node.checked = Boolean(value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// Replaces the children of node.
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

// Pretty JSON in a <pre>.
export function json(value, attrs = {}) {
  return el("pre", { class: "json", ...attrs }, JSON.stringify(value, null, 2));
}

let counter = 0;
// A fresh id for label/for pairs.
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

// A labelled control: [label, control].
export function field(label, control, hint) {
  if (!control.id) control.id = uid("f");
  const parts = [el("label", { for: control.id }, label), control];
  if (hint) {
    const h = el("small", { id: uid("hint"), class: "hint" }, hint);
    control.setAttribute("aria-describedby", h.id);
    parts.push(h);
  }
  return el("div", { class: "field" }, parts);
}

export function badge(text, kind = "") {
  return el("span", { class: `badge ${kind}` }, text);
}

// The nodes `reconcile` rendered for each list, by key, with the JSON of the
// item each was rendered from.
const rendered = new WeakMap();

// Brings the children of `parent` in step with `items`: an item whose key
// and content are unchanged keeps the very node it had (a re-render never
// replaces what a person is about to click, nor what a test holds); a new or
// changed item gets a fresh node from `render`; nodes of items gone are
// removed. Returns the nodes in the order of `items`.
export function reconcile(parent, items, keyOf, render) {
  const before = rendered.get(parent) || new Map();
  const after = new Map();
  const nodes = items.map((item, i) => {
    let key = String(keyOf(item));
    if (after.has(key)) key = `${key}\u0000${i}`;
    const sig = JSON.stringify(item);
    const old = before.get(key);
    const node = old && old.sig === sig ? old.node : render(item);
    after.set(key, { sig, node });
    return node;
  });
  rendered.set(parent, after);
  let at = parent.firstChild;
  for (const node of nodes) {
    if (node === at) {
      at = at.nextSibling;
    } else {
      parent.insertBefore(node, at);
    }
  }
  while (at) {
    const next = at.nextSibling;
    at.remove();
    at = next;
  }
  return nodes;
}

// A loader for a list the server may change at any time: calls made while
// one runs coalesce into a single run after it (so answers never arrive out
// of order and an old answer never overwrites a newer one). `work(stale)`
// does one load; `stale()` is true once another run is due, and `work`
// then skips drawing. `node.dataset.state` is "loading" while runs are due
// and "ready" once the last one ended.
export function serialLoader(node, work) {
  let running = null;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    node.dataset.state = "loading";
    running = (async () => {
      try {
        do {
          again = false;
          try {
            await work(() => again);
          } catch (e) {
            console.error(e);
          }
        } while (again);
      } finally {
        running = null;
        node.dataset.state = "ready";
      }
    })();
    return running;
  };
}
