// Apps: the tools that name a view (`_meta.ui.resourceUri`, MCP Apps). Open
// one: the tool is called with the form's arguments while its view is
// fetched and rendered in the sandbox (a second origin, the view's declared
// Content-Security-Policy shown); the inspector is the view's host: it
// answers `ui/initialize`, sends the tool's input and result, forwards the
// view's `tools/call` (tools visible to apps only) and `resources/read` to
// the server, shows `ui/message`, `ui/open-link`, `ui/update-model-context`
// and logs, and lists every message of the bridge both ways.
import { el, fill, badge, json, reconcile, serialLoader } from "./dom.js";
import { schemaForm } from "./schema_form.js";
import { sandboxFrame } from "./sandbox.js";

const MAX_TRAFFIC = 500;
const MAX_SHOWN = 8 * 1024;
const APPS_VERSION = "2026-01-26";

// The tool's _meta.ui (also from the deprecated flat key), or null.
export function uiMeta(tool) {
  const meta = tool?._meta;
  if (!meta || typeof meta !== "object") return null;
  if (meta.ui && typeof meta.ui === "object") return meta.ui;
  if (typeof meta["ui/resourceUri"] === "string") return { resourceUri: meta["ui/resourceUri"] };
  return null;
}

// Who may call the tool: "model", "app" (both when it says nothing).
export function visibility(tool) {
  const v = uiMeta(tool)?.visibility;
  return Array.isArray(v) ? v : ["model", "app"];
}

function cut(value) {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}\n… (${text.length} characters)` : text;
}

export function init(ctx, panel) {
  let tools = [];
  let loadedFor = null;
  let open = null;
  const list = el("ul", { id: "app-list", class: "list", "aria-label": "Tools with an app" });
  const detail = el("div", { id: "app-detail", class: "detail" });
  const stage = el("div", { id: "app-stage" });
  const refresh = el("button", { type: "button", id: "app-refresh" }, "Refresh");
  fill(panel, el("div", { class: "split" },
    el("div", { class: "side" }, el("h2", {}, "Apps"), refresh, list),
    el("div", { class: "main" }, detail, stage)));

  // Coalesced and keyed like the Tools tab's list: a list_changed keeps the
  // buttons of unchanged tools.
  const load = serialLoader(list, async (stale) => {
    const c = ctx.conn();
    loadedFor = c ? c.id : null;
    if (!c) {
      fill(list, el("li", {}, "Not connected."));
      return;
    }
    let answer;
    try {
      answer = (await ctx.api("GET", `connections/${c.id}/tools`)).tools;
    } catch (e) {
      if (!stale()) fill(list, el("li", { class: "bad" }, e.message));
      return;
    }
    if (stale() || loadedFor !== c.id) return;
    tools = Array.isArray(answer) ? answer : [];
    const apps = tools.filter((t) => typeof uiMeta(t)?.resourceUri === "string");
    reconcile(list, apps, (t) => t.name, (t) => el("li", {},
      el("button", { type: "button", class: "item", "data-app-tool": t.name, onclick: () => choose(t) },
        el("span", { class: "name" }, t.title || t.name), " ",
        visibility(t).includes("model") ? null : badge("app only"))));
    if (apps.length === 0) list.append(el("li", {}, "No tool of this server names a view."));
  });

  const choose = (t, args) => {
    const form = schemaForm(t.inputSchema || {}, `app-arg-${t.name}`);
    const f = el("form", { "aria-label": `Arguments of ${t.name}` }, form.node,
      el("div", { class: "row" }, el("button", { type: "submit", id: "app-open" }, `Call ${t.name} and open its app`)));
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      let a;
      try {
        a = form.read();
      } catch (err) {
        ctx.status(err.message, "bad");
        return;
      }
      start(t, a);
    });
    fill(detail, el("h2", {}, t.title || t.name),
      el("p", { class: "meta" }, "View ", el("code", {}, uiMeta(t).resourceUri), " · callable by ",
        visibility(t).join(" and ")),
      t.description ? el("p", { class: "description" }, t.description) : null,
      visibility(t).includes("model") ? f : el("p", { class: "notice" }, "Only its app may call this tool."));
    if (args) start(t, args);
  };

  // Opens tool t's app, calling t with args.
  const start = async (t, args) => {
    const c = ctx.conn();
    if (!c) return;
    await close("another app was opened");
    const traffic = el("ol", { id: "app-traffic", class: "protocol", "aria-label": "App bridge messages" });
    const messages = el("ul", { id: "app-messages", class: "list", "aria-label": "What the app sent" });
    const contextBox = el("div", { id: "app-context", "aria-live": "polite" });
    const frameBox = el("div", { id: "app-frame-box", class: "app-box" }, el("p", {}, `Fetching the view of ${t.name}…`));
    const closer = el("button", { type: "button", id: "app-close", onclick: () => close("closed by the user") }, "Close app");
    fill(stage, el("div", { class: "row" }, el("h3", {}, `App of ${t.name}`), closer), frameBox,
      el("h3", {}, "From the app"), messages, contextBox,
      el("details", { open: true }, el("summary", {}, "Bridge messages"), traffic));
    const state = { t, c, args, initialized: false, result: null, cancelled: null, bridge: null, pending: new Map(), next: 1 };
    open = state;

    const log = (dir, m) => {
      const label = typeof m?.method === "string" ? m.method
        : m?.error ? `error ${m.error.code}: ${m.error.message}` : "result";
      traffic.append(el("li", { class: `msg ${dir === "out" ? "out" : "in"}`, "data-method": label },
        el("details", {}, el("summary", {},
          el("span", { class: "dir", "aria-label": dir === "out" ? "to the app" : "from the app" }, dir === "out" ? "→" : "←"), " ",
          el("span", { class: "label" }, label),
          m?.id !== undefined ? el("span", { class: "id" }, ` id ${JSON.stringify(m.id)}`) : null),
        el("pre", { class: "json" }, cut(m)))));
      while (traffic.children.length > MAX_TRAFFIC) traffic.firstChild.remove();
    };
    const say = (kind, ...parts) => {
      messages.append(el("li", { "data-kind": kind }, badge(kind), " ", ...parts));
      while (messages.children.length > MAX_TRAFFIC) messages.firstChild.remove();
    };
    const send = (m) => {
      if (open !== state || !state.bridge) return;
      log("out", m);
      state.bridge.post(m);
    };
    const reply = (id, result) => send({ jsonrpc: "2.0", id, result });
    const fail = (id, code, message) => send({ jsonrpc: "2.0", id, error: { code, message } });
    const notify = (method, params) => send({ jsonrpc: "2.0", method, params });
    const deliver = () => {
      if (!state.initialized) return;
      if (state.result) notify("ui/notifications/tool-result", state.result);
      if (state.cancelled) notify("ui/notifications/tool-cancelled", { reason: state.cancelled });
    };

    // The tool call and the view, at the same time.
    ctx.api("POST", `connections/${c.id}/tools/call`, { name: t.name, arguments: args }).then((answer) => {
      if (answer.cancelled) state.cancelled = "cancelled";
      else state.result = answer.result;
      deliver();
    }, (e) => {
      state.cancelled = `the call failed: ${e.message}`;
      deliver();
    });
    let view;
    try {
      view = await ctx.api("POST", `connections/${c.id}/apps/view`, { tool: t.name });
    } catch (e) {
      fill(frameBox, el("p", { class: "bad", role: "alert" }, `The view could not be fetched: ${e.message}`));
      return;
    }
    if (open !== state) return;
    const perms = Object.keys(view.meta?.permissions || {});
    const policy = el("details", { id: "app-policy" }, el("summary", {}, "Content-Security-Policy of the view"),
      el("pre", { class: "json" }, view.policy),
      view.refused.length ? el("p", { class: "bad" }, `Declared origins left out: ${view.refused.join(", ")}`) : null,
      perms.length ? el("p", { class: "meta" }, `Permissions asked (not granted): ${perms.join(", ")}`) : null);
    state.bridge = sandboxFrame({
      html: view.html,
      csp: view.meta?.csp,
      permissions: view.meta?.permissions,
      title: `App of ${t.name}`,
      onMessage: (m) => onMessage(m),
    });
    if (view.meta?.prefersBorder === false) state.bridge.frame.classList.add("borderless");
    fill(frameBox, el("p", { class: "meta" }, el("code", {}, view.uri)), policy, state.bridge.frame);

    const callTool = async (id, params) => {
      const name = params?.name;
      const target = tools.find((x) => x.name === name);
      if (typeof name !== "string" || !target) return fail(id, -32602, `no tool ${JSON.stringify(name)} on this server`);
      if (!visibility(target).includes("app")) return fail(id, -32000, `the tool ${name} is not visible to apps`);
      say("tools/call", el("code", {}, name));
      try {
        const answer = await ctx.api("POST", `connections/${c.id}/tools/call`, { name, arguments: params.arguments || {} });
        if (answer.cancelled) return fail(id, -32000, "cancelled");
        reply(id, answer.result);
      } catch (e) {
        fail(id, e.detail?.code ?? -32603, e.message);
      }
    };
    const readResource = async (id, params) => {
      if (typeof params?.uri !== "string") return fail(id, -32602, "resources/read needs a uri");
      try {
        reply(id, (await ctx.api("POST", `connections/${c.id}/resources/read`, { uri: params.uri })).result);
      } catch (e) {
        fail(id, e.detail?.code ?? -32603, e.message);
      }
    };
    const onMessage = (m) => {
      if (open !== state) return;
      log("in", m);
      const isId = (id) => typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") {
        say("refused", "a message that is not JSON-RPC 2.0");
        return;
      }
      if (typeof m.method !== "string") {
        // An answer to one of the host's requests (ui/resource-teardown).
        const done = isId(m.id) && state.pending.get(m.id);
        if (done) {
          state.pending.delete(m.id);
          done(m);
        }
        return;
      }
      const p = m.params && typeof m.params === "object" ? m.params : {};
      if (m.id === undefined) {
        if (m.method === "ui/notifications/initialized") {
          state.initialized = true;
          notify("ui/notifications/tool-input", { arguments: args || {} });
          deliver();
        } else if (m.method === "ui/notifications/size-changed") {
          const h = Number(p.height);
          if (Number.isFinite(h) && h > 0) state.bridge.frame.style.height = `${Math.min(Math.max(h, 40), 2000)}px`;
        } else if (m.method === "notifications/message") {
          say("log", `${p.level ?? "info"}: `, el("code", {}, cut(p.data)));
        }
        return;
      }
      if (!isId(m.id)) {
        say("refused", `${m.method}: the id is neither a string nor a number`);
        return;
      }
      switch (m.method) {
        case "ui/initialize":
          say("initialize", `${p.appInfo?.name ?? "an app"} ${p.appInfo?.version ?? ""}`);
          return reply(m.id, {
            protocolVersion: APPS_VERSION,
            hostInfo: { name: "tessera-inspect", version: ctx.version || "" },
            hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} },
            hostContext: {
              toolInfo: { tool: t },
              theme: "light",
              displayMode: "inline",
              availableDisplayModes: ["inline"],
              containerDimensions: { maxHeight: 2000 },
              platform: "web",
              locale: navigator.language,
              timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
              userAgent: "tessera-inspect",
            },
          });
        case "ping":
          return reply(m.id, {});
        case "tools/call":
          return callTool(m.id, p);
        case "resources/read":
          return readResource(m.id, p);
        case "ui/message": {
          const text = Array.isArray(p.content) ? p.content.map((b) => b?.text ?? "").join("\n") : p.content?.text;
          say("message", `${p.role ?? "user"}: `, el("span", { class: "app-said" }, String(text ?? "")));
          return reply(m.id, {});
        }
        case "ui/update-model-context":
          fill(contextBox, el("h4", {}, "Model context from the app"), el("pre", { class: "json", id: "app-model-context" }, cut(p)));
          return reply(m.id, {});
        case "ui/open-link": {
          let url = null;
          try {
            url = new URL(String(p.url));
          } catch {
            // refused below
          }
          if (!url || !["http:", "https:"].includes(url.protocol)) return fail(m.id, -32000, "Invalid URL");
          say("open-link", "The app asks to open ", el("a", { href: url.href, target: "_blank", rel: "noopener noreferrer" }, url.href));
          return reply(m.id, {});
        }
        case "ui/request-display-mode":
          return reply(m.id, { mode: "inline" });
        default:
          return fail(m.id, -32601, `the inspector does not offer ${m.method} to apps`);
      }
    };
  };

  // Tears the open app down: ui/resource-teardown, then (answered or after
  // two seconds) the frame goes.
  const close = async (reason) => {
    const state = open;
    if (!state) return;
    if (state.bridge && state.initialized) {
      const id = `teardown-${state.next++}`;
      const answered = new Promise((resolve) => {
        state.pending.set(id, resolve);
        setTimeout(resolve, 2000);
      });
      const m = { jsonrpc: "2.0", id, method: "ui/resource-teardown", params: { reason } };
      state.bridge.post(m);
      await answered;
    }
    state.bridge?.close();
    if (open === state) {
      open = null;
      fill(stage);
    }
  };

  refresh.addEventListener("click", load);
  ctx.on("select", () => {
    close("the connection changed");
    loadedFor = null;
    fill(detail);
    if (ctx.tab === "apps") load();
  });
  ctx.on("tab", (name) => {
    if (name === "apps" && loadedFor !== (ctx.conn()?.id ?? null)) load();
  });
  ctx.on("event:changed", (e) => {
    if (e.what === "tools" && e.connection === ctx.current && loadedFor !== null) load();
  });
  // The Tools tab's "Open its app".
  ctx.on("open-app", async ({ tool, args }) => {
    ctx.showTab("apps");
    await load();
    const t = tools.find((x) => x.name === tool.name) || tool;
    choose(t, args);
  });
}
