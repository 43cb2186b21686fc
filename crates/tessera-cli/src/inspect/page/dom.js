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
