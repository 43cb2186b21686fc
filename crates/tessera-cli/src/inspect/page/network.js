// Network: each HTTP exchange of the HTTP connections, in order — method,
// URL, status, time to the answer's headers; opened: the request's and the
// answer's headers (the Mcp-* ones highlighted, credentials masked), the
// request body, and the check of each Mcp-* header against the Streamable
// HTTP rules (a mark on the row when one fails). An authorization challenge
// (401/403) is labelled, and so is the traffic of an OAuth sign-in, by
// phase (discovery, registration, token, first call), with the answer's
// body and the rules of each step (secrets masked). The body of each answer
// follows as it is read (an SSE stream as it goes): its first 64 KiB, then
// its size and how it ended. Whatever a server sends is put in as text.
import { el, fill, field, badge, json } from "./dom.js";

const MAX_ROWS = 2000;

// The body of an answer: text as it arrives; once complete, JSON is shown
// pretty-printed. Never parsed as HTML.
function bodyView(exchange) {
  const pre = el("pre", { class: "body", "data-body": String(exchange) });
  const meta = el("p", { class: "meta body-state", "data-state": "reading" }, "Reading…");
  return { node: el("div", { class: "response-body" }, el("h4", {}, "Response body"), pre, meta), pre, meta };
}

function endBody(view, e) {
  if (typeof e.text === "string") view.pre.append(e.text);
  const bytes = Number(e.bytes) || 0;
  const text = view.pre.textContent;
  if (!e.truncated && !e.error && text) {
    try {
      view.pre.textContent = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON (an SSE stream, or text): shown as it came.
    }
  }
  view.meta.dataset.state = e.error ? "stopped" : e.truncated ? "truncated" : "complete";
  view.meta.className = `meta body-state${e.error ? " bad" : ""}`;
  view.meta.textContent = `${bytes} byte${bytes === 1 ? "" : "s"}`
    + (e.truncated ? `; the first ${new TextEncoder().encode(text).length} shown` : "")
    + (e.error ? `; ${e.error}` : "")
    + (bytes === 0 && !e.error ? " (empty)" : "");
}

function headerTable(caption, rows) {
  return el("table", { class: "log headers" }, el("caption", {}, caption),
    el("tbody", {}, (rows || []).map(([k, v]) => el("tr", { class: /^mcp-/i.test(k) ? "mcp" : "" },
      el("th", { scope: "row" }, k), el("td", {}, el("code", {}, v))))));
}

export function init(ctx, panel) {
  const filter = el("input", { id: "net-filter", type: "search", autocomplete: "off" });
  const count = el("span", { id: "net-count", "aria-live": "polite" });
  const list = el("ol", { id: "net-list", class: "protocol", "aria-label": "HTTP exchanges" });
  fill(panel, el("div", { class: "row" }, field("Filter (method, URL, status or header)", filter), count),
    el("p", { class: "meta" }, "HTTP connections only: stdio servers have no HTTP exchanges."), list);
  let total = 0;
  // The body views of the rows shown, by exchange id.
  const bodies = new Map();
  const matches = (li) => !filter.value || li.textContent.toLowerCase().includes(filter.value.toLowerCase());
  filter.addEventListener("input", () => {
    for (const li of list.children) li.hidden = !matches(li);
  });
  ctx.on("reset", () => {
    total = 0;
    bodies.clear();
    fill(list);
    count.textContent = "";
  });
  ctx.on("event:http", (e) => {
    total += 1;
    const checks = Array.isArray(e.checks) ? e.checks : [];
    const failing = checks.filter((c) => !c.ok);
    const status = e.status ?? "failed";
    const rpc = e.requestBody && typeof e.requestBody.method === "string" ? e.requestBody.method : null;
    const body = typeof e.exchange === "number" && !e.error ? bodyView(e.exchange) : null;
    const li = el("li", { class: `msg ${failing.length ? "error" : ""}`, "data-status": String(status),
      "data-checks": failing.length ? "failing" : "ok", "data-exchange": e.exchange ?? null },
      el("details", {},
        el("summary", {},
          el("span", { class: "seq" }, `${e.seq}`), " ",
          el("span", { class: "time" }, `${e.ms} ms`), " ",
          e.connection !== null && e.connection !== undefined ? badge(`#${e.connection}`) : badge(`sign-in ${e.login}`), " ",
          e.oauth ? [badge(`OAuth: ${e.oauth}`, "era"), " "] : null,
          badge(e.method), " ",
          badge(String(status), typeof e.status === "number" && e.status < 400 ? "ok" : "bad"), " ",
          e.auth ? [badge("auth challenge", "bad"), " "] : null,
          e.attempt > 1 ? [badge(`attempt ${e.attempt}`), " "] : null,
          failing.length ? [badge(`${failing.length} header rule${failing.length > 1 ? "s" : ""} broken`, "bad"), " "] : null,
          el("span", { class: "label" }, rpc ? `${rpc} ` : "", el("code", {}, e.url))),
        e.error ? el("p", { class: "bad" }, e.error) : null,
        checks.length ? el("ul", { class: "checks", "aria-label": "Header rules" }, checks.map((c) =>
          el("li", { class: c.ok ? "ok" : "bad", "data-header": c.header ?? "", "data-ok": String(c.ok) },
            c.ok ? "✓ " : "✗ ", c.header ? el("code", {}, c.header) : null, ` ${c.rule} — ${c.detail}`))) : null,
        headerTable("Request headers", e.requestHeaders),
        e.requestBody !== null && e.requestBody !== undefined ? [el("h4", {}, "Request body"), json(e.requestBody)] : null,
        e.responseHeaders ? headerTable("Response headers", e.responseHeaders) : null,
        e.responseBody !== null && e.responseBody !== undefined ? [el("h4", {}, "Response body"), json(e.responseBody)] : null,
        body ? body.node : null));
    li.hidden = !matches(li);
    list.append(li);
    if (body) bodies.set(e.exchange, body);
    while (list.children.length > MAX_ROWS) {
      bodies.delete(Number(list.firstChild.dataset.exchange));
      list.firstChild.remove();
    }
    count.textContent = `${total} exchange${total === 1 ? "" : "s"}`;
  });
  ctx.on("event:http-body", (e) => {
    const view = bodies.get(e.exchange);
    if (!view) return;
    if (e.end) endBody(view, e);
    else if (typeof e.text === "string") view.pre.append(e.text);
  });
}
