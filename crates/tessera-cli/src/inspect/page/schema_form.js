// A form generated from a JSON Schema object (a tool's inputSchema):
// strings (enums as a list), numbers, integers and booleans get their own
// controls; anything else is edited as JSON. read() returns the arguments or
// throws an Error naming the field that is wrong.
import { el, field } from "./dom.js";

export function schemaForm(schema, prefix) {
  const properties = (schema && typeof schema.properties === "object" && schema.properties) || {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const readers = [];
  const fields = [];
  for (const [name, prop] of Object.entries(properties)) {
    const p = prop && typeof prop === "object" ? prop : {};
    const type = Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
    const id = `${prefix}-${name}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const label = `${p.title || name}${required.has(name) ? " *" : ""}`;
    const hint = [p.description, type ? `(${type})` : null].filter(Boolean).join(" ");
    let control;
    let read;
    if (Array.isArray(p.enum)) {
      control = el("select", { id, "data-arg": name },
        required.has(name) ? null : el("option", { value: "" }, "(none)"),
        p.enum.map((v, i) => el("option", { value: String(i) }, JSON.stringify(v))));
      read = () => (control.value === "" ? undefined : p.enum[Number(control.value)]);
    } else if (type === "boolean") {
      control = el("input", { id, type: "checkbox", "data-arg": name, checked: p.default === true });
      read = () => control.checked;
    } else if (type === "number" || type === "integer") {
      control = el("input", { id, type: "number", step: type === "integer" ? "1" : "any", "data-arg": name,
        value: p.default ?? "" });
      read = () => {
        if (control.value.trim() === "") return undefined;
        const n = Number(control.value);
        if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) {
          throw new Error(`${name}: expected ${type === "integer" ? "an integer" : "a number"}`);
        }
        return n;
      };
    } else if (type === "string") {
      const long = p.format === "textarea" || (p.maxLength ?? 0) > 200;
      control = el(long ? "textarea" : "input", { id, type: long ? null : "text", "data-arg": name,
        value: p.default ?? "", spellcheck: "false" });
      // An empty field is not given (a required one is then reported missing).
      read = () => (control.value === "" ? undefined : control.value);
    } else {
      control = el("textarea", { id, rows: 3, "data-arg": name, spellcheck: "false",
        value: p.default === undefined ? "" : JSON.stringify(p.default) });
      read = () => {
        if (control.value.trim() === "") return undefined;
        try {
          return JSON.parse(control.value);
        } catch (e) {
          throw new Error(`${name}: not valid JSON (${e.message})`);
        }
      };
    }
    if (required.has(name)) control.setAttribute("aria-required", "true");
    fields.push(field(label, control, hint || null));
    readers.push([name, read]);
  }
  const node = el("div", { class: "schema-form" }, fields.length ? fields : el("p", {}, "No arguments."));
  return {
    node,
    read() {
      const args = {};
      for (const [name, read] of readers) {
        const v = read();
        if (v === undefined) {
          if (required.has(name)) throw new Error(`${name} is required`);
        } else {
          args[name] = v;
        }
      }
      return args;
    },
  };
}
