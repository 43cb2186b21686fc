// Protocol: every JSON-RPC message of every connection, in order; requests
// paired with their responses (the method is shown on both), notifications
// inline, errors marked; the rounds of a multi round-trip request (an
// `input_required` answer, the retries carrying input, the final answer)
// grouped under its first request; a message's JSON opens on demand.
import { el, fill, field, json, badge } from "./dom.js";
import { token } from "./api.js";

const MAX_ROWS = 5000;
// The most rounds shown under one multi round-trip request.
const MAX_ROUNDS = 200;

// The class of a JSON-RPC error code, as the page labels it.
const ERROR_CLASSES = new Map([
  [-32700, "parse error"],
  [-32600, "invalid request"],
  [-32601, "method not found"],
  [-32602, "invalid params"],
  [-32603, "internal error"],
  [-32002, "resource not found"],
  [-32020, "header mismatch"],
  [-32021, "missing client capability"],
  [-32022, "unsupported protocol version"],
  [-32042, "URL elicitation required"],
]);

export function errorClass(code) {
  if (ERROR_CLASSES.has(code)) return ERROR_CLASSES.get(code);
  if (typeof code !== "number") return "not a JSON-RPC error code";
  if (code >= -32099 && code <= -32000) return "server error";
  if (code >= -32768 && code <= -32000) return "reserved";
  return "application error";
}

export function init(ctx, panel) {
  const messages = [];
  const methods = new Map();
  const filter = el("input", { id: "proto-filter", type: "search", autocomplete: "off" });
  const count = el("span", { id: "proto-count", "aria-live": "polite" });
  const list = el("ol", { id: "proto-list", class: "protocol", "aria-label": "Protocol messages" });
  const exporter = el("a", { id: "proto-export", class: "button", href: `/api/transcript?token=${encodeURIComponent(token)}`,
    download: "tessera-transcript.json" }, "Export transcript");
  const importer = el("input", { id: "proto-import", type: "file", accept: ".json,application/json" });
  const imported = el("section", { id: "proto-imported", "aria-label": "Imported transcript", hidden: true });
  importer.addEventListener("change", async () => {
    const file = importer.files?.[0];
    if (!file) return;
    try {
      if (file.size > 64 * 1024 * 1024) throw new Error("over 64 MiB");
      const t = JSON.parse(await file.text());
      if (t?.format !== "tessera-inspect-transcript" || !Array.isArray(t.events)) {
        throw new Error("not a transcript exported by tessera inspect");
      }
      const events = t.events.filter((e) => e?.type === "protocol").slice(0, MAX_ROWS);
      const pairs = new Map();
      imported.hidden = false;
      fill(imported,
        el("div", { class: "row" },
          el("h2", {}, `Imported: ${file.name} (${events.length} messages; Replay sends to the current connection)`),
          el("button", { type: "button", onclick: () => { imported.hidden = true; fill(imported); } }, "Close")),
        el("ol", { class: "protocol" }, events.map((e) => item(e, pairs, null))));
    } catch (err) {
      ctx.status(`Import: ${err.message}`, "bad");
    }
    importer.value = "";
  });
  fill(panel, el("div", { class: "row" }, field("Filter (method, id or text)", filter), count, exporter,
    field("Import transcript", importer)), imported, list);

  const describe = (e, methods) => {
    const m = e.message || {};
    const key = (dir) => `${e.connection}/${dir}/${JSON.stringify(m.id)}`;
    if (Array.isArray(m)) return { kind: "batch", label: `batch of ${m.length}` };
    if (typeof m.method === "string") {
      if (m.id !== undefined) {
        if (methods.size > 10000) methods.clear();
        methods.set(key(e.dir), m.method);
        // A multi round-trip retry carries the answers (or the state) of the round before.
        const round = m.params && (m.params.inputResponses || m.params.requestState) ? "retry with input" : null;
        return { kind: "request", label: m.method, id: m.id, round, key: key(e.dir) };
      }
      return { kind: "notification", label: m.method };
    }
    if (m.id !== undefined) {
      const request = key(e.dir === "in" ? "out" : "in");
      const method = methods.get(request) || "?";
      methods.delete(request);
      if (m.error) {
        return { kind: "error", label: `${method} ✗ ${m.error.code}: ${m.error.message}`, id: m.id,
          errorClass: errorClass(m.error.code), method, request };
      }
      if (m.result?.resultType === "input_required") {
        return { kind: "response", label: `${method} ⋯ input required`, id: m.id, method, request, inputRequired: true };
      }
      return { kind: "response", label: `${method} ✓`, id: m.id, method, request };
    }
    return { kind: "other", label: "message" };
  };

  const item = (e, methods, target) => {
    const d = describe(e, methods);
    const li = row(e, d, target);
    li.describedAs = d;
    return li;
  };

  const row = (e, d, target) => {
    const li = el("li", { class: `msg ${d.kind} ${e.dir}`, "data-kind": d.kind, "data-method": d.label },
      el("details", {},
        el("summary", {},
          el("span", { class: "seq" }, `${e.seq}`), " ",
          el("span", { class: "time" }, `${Math.round(e.at)} ms`), " ",
          badge(`#${e.connection}`), " ",
          el("span", { class: "dir", "aria-label": e.dir === "out" ? "to the server" : "from the server" },
            e.dir === "out" ? "→" : "←"), " ",
          badge(d.kind, d.kind === "error" ? "bad" : ""), " ",
          d.errorClass ? [badge(d.errorClass, "bad"), " "] : null,
          d.round ? [badge(d.round), " "] : null,
          el("span", { class: "label" }, d.label),
          d.id !== undefined ? el("span", { class: "id" }, ` id ${JSON.stringify(d.id)}`) : null),
        json(e.message),
        d.kind === "request" && e.dir === "out" && d.label !== "initialize" ? replay(e, target) : null));
    li.dataset.search = `${d.label} ${JSON.stringify(d.id ?? "")}`.toLowerCase();
    return li;
  };

  // Multi round-trip grouping: where each request went (its group), and the
  // groups waiting for a retry (an input_required answer came), by
  // connection and method.
  const groups = new Map();
  const waiting = new Map();
  const nest = (g, li, round) => {
    if (!g.ol) {
      g.ol = el("ol", { class: "protocol rounds", "aria-label": `Rounds of ${g.method}` });
      g.li.append(g.ol);
      g.li.classList.add("grouped");
      g.li.querySelector("summary .label")?.before(badge("multi round-trip"), " ");
    }
    if (round) li.querySelector("summary .label")?.before(badge(`round ${round}`), " ");
    g.ol.append(li);
    while (g.ol.children.length > MAX_ROUNDS) g.ol.firstChild.remove();
  };
  // Places li (message e) in the list or under the group it belongs to;
  // true when it was nested.
  const place = (e, li) => {
    const d = li.describedAs;
    if (d.kind === "request" && d.key) {
      if (groups.size > 10000) groups.clear();
      const wait = `${e.connection} ${d.label}`;
      const g = d.round ? waiting.get(wait) : null;
      if (g) {
        waiting.delete(wait);
        g.round += 1;
        groups.set(d.key, g);
        nest(g, li, g.round);
        return true;
      }
      groups.set(d.key, { li, ol: null, round: 1, method: d.label });
      return false;
    }
    if ((d.kind === "response" || d.kind === "error") && d.request) {
      const g = groups.get(d.request);
      groups.delete(d.request);
      if (!g) return false;
      if (d.inputRequired) {
        if (waiting.size > 1000) waiting.clear();
        waiting.set(`${e.connection} ${d.method}`, g);
      }
      if (d.inputRequired || g.ol) {
        nest(g, li, null);
        return true;
      }
    }
    return false;
  };

  // Sends the request again (its params without _meta, which the client
  // writes) and shows the answer under it.
  const replay = (e, target) => {
    const out = el("div", { class: "replayed", "aria-live": "polite" });
    const button = el("button", { type: "button", "data-action": "replay", onclick: async () => {
      const params = { ...(e.message.params || {}) };
      delete params._meta;
      button.disabled = true;
      fill(out, el("p", { class: "meta" }, "Replaying…"));
      try {
        const conn = target ?? ctx.current;
        if (conn === null) throw new Error("not connected");
        const answer = await ctx.api("POST", `connections/${conn}/request`, { method: e.message.method, params });
        fill(out, el("p", { class: "meta" }, "Replayed: the answer"), json(answer.result ?? answer));
      } catch (err) {
        fill(out, el("p", { class: "bad" }, err.message));
      } finally {
        button.disabled = false;
      }
    } }, `Replay ${e.message.method}`);
    return el("div", {}, button, out);
  };

  const matches = (li) => !filter.value || li.dataset.search.includes(filter.value.toLowerCase())
    || li.textContent.toLowerCase().includes(filter.value.toLowerCase());
  const update = () => {
    count.textContent = `${messages.length} message${messages.length === 1 ? "" : "s"}`;
  };

  filter.addEventListener("input", () => {
    for (const li of list.children) li.hidden = !matches(li);
  });
  ctx.on("reset", () => {
    messages.length = 0;
    methods.clear();
    groups.clear();
    waiting.clear();
    fill(list);
    update();
  });
  ctx.on("event:protocol", (e) => {
    messages.push(e);
    if (messages.length > MAX_ROWS * 4) messages.shift();
    const li = item(e, methods, e.connection);
    if (place(e, li)) return update();
    li.hidden = !matches(li);
    list.append(li);
    while (list.children.length > MAX_ROWS) {
      list.firstChild.remove();
      messages.shift();
    }
    update();
  });
}
