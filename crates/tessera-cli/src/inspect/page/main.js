// The inspector's page: tabs, the current connection, and the journal's
// events handed to each tab.
import { api, follow, token } from "./api.js";
import { el, fill, badge } from "./dom.js";
import * as servers from "./servers.js";
import * as tools from "./tools.js";
import * as resources from "./resources.js";
import * as prompts from "./prompts.js";
import * as logs from "./logs.js";
import * as protocol from "./protocol.js";
import * as asks from "./asks.js";
import * as tasks from "./tasks.js";
import * as consoleTab from "./console.js";
import * as skills from "./skills.js";
import * as apps from "./apps.js";
import * as network from "./network.js";
import { setSandboxPort } from "./sandbox.js";

const listeners = new Map();
const ctx = {
  api,
  connections: new Map(),
  current: null,
  on(type, fn) {
    if (!listeners.has(type)) listeners.set(type, []);
    listeners.get(type).push(fn);
  },
  emit(type, value) {
    for (const fn of listeners.get(type) || []) {
      try {
        fn(value);
      } catch (e) {
        console.error(e);
      }
    }
  },
  status(text, kind = "") {
    const s = document.getElementById("status");
    s.className = kind;
    s.textContent = text;
  },
  conn() {
    return ctx.current === null ? null : ctx.connections.get(ctx.current) || null;
  },
  select(id) {
    ctx.current = id;
    renderSelect();
    ctx.emit("select", ctx.conn());
  },
  showTab,
  upsert(info) {
    ctx.connections.set(info.id, info);
    if (ctx.current === null || !ctx.connections.has(ctx.current)) ctx.current = info.id;
    renderSelect();
    ctx.emit("connections", ctx.connections);
  },
  remove(id) {
    ctx.connections.delete(id);
    if (ctx.current === id) {
      const first = ctx.connections.keys().next();
      ctx.current = first.done ? null : first.value;
      ctx.emit("select", ctx.conn());
    }
    renderSelect();
    ctx.emit("connections", ctx.connections);
  },
};

function renderSelect() {
  const select = document.getElementById("conn-select");
  const options = [...ctx.connections.values()].map((c) =>
    el("option", { value: c.id, selected: c.id === ctx.current }, `#${c.id} ${c.serverInfo?.name || c.target}`),
  );
  if (options.length === 0) options.push(el("option", { value: "" }, "(none)"));
  fill(select, options);
  const c = ctx.conn();
  fill(
    document.getElementById("conn-badges"),
    c
      ? [
          badge(c.era, "era"),
          badge(c.transport),
          badge(c.protocolVersion),
          badge(c.connected ? "connected" : "disconnected", c.connected ? "ok" : "bad"),
        ]
      : [],
  );
}

const TABS = ["servers", "tools", "apps", "resources", "prompts", "tasks", "skills", "logs", "protocol", "network", "console"];

function showTab(name, focus = false) {
  ctx.tab = name;
  for (const t of TABS) {
    const tab = document.getElementById(`tab-${t}`);
    const on = t === name;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    document.getElementById(`panel-${t}`).hidden = !on;
    if (on && focus) tab.focus();
  }
  ctx.emit("tab", name);
}

function setUpTabs() {
  const list = document.querySelector("[role=tablist]");
  list.addEventListener("click", (e) => {
    const tab = e.target.closest("[role=tab]");
    if (tab) showTab(tab.dataset.tab);
  });
  list.addEventListener("keydown", (e) => {
    const i = TABS.indexOf(document.activeElement?.dataset?.tab);
    if (i < 0) return;
    let next = null;
    if (e.key === "ArrowRight") next = TABS[(i + 1) % TABS.length];
    if (e.key === "ArrowLeft") next = TABS[(i + TABS.length - 1) % TABS.length];
    if (e.key === "Home") next = TABS[0];
    if (e.key === "End") next = TABS[TABS.length - 1];
    if (next) {
      e.preventDefault();
      showTab(next, true);
    }
  });
  document.getElementById("conn-select").addEventListener("change", (e) => {
    const id = Number(e.target.value);
    if (ctx.connections.has(id)) ctx.select(id);
  });
}

async function start() {
  setUpTabs();
  const panel = (name) => document.getElementById(`panel-${name}`);
  servers.init(ctx, panel("servers"));
  tools.init(ctx, panel("tools"));
  apps.init(ctx, panel("apps"));
  resources.init(ctx, panel("resources"));
  prompts.init(ctx, panel("prompts"));
  logs.init(ctx, panel("logs"));
  protocol.init(ctx, panel("protocol"));
  network.init(ctx, panel("network"));
  tasks.init(ctx, panel("tasks"));
  consoleTab.init(ctx, panel("console"));
  skills.init(ctx, panel("skills"));
  asks.init(ctx, document.getElementById("asks"));
  renderSelect();
  if (!token) {
    showTab("servers");
    ctx.status("No token: open the URL that `tessera inspect` printed.", "bad");
    return;
  }
  ctx.on("event:connection", (e) => {
    if (e.state === "connected") {
      const first = ctx.connections.size === 0;
      ctx.upsert(e);
      if (first) {
        ctx.select(e.id);
        showTab("tools");
      }
    }
    if (e.state === "closed") ctx.remove(e.connection);
    if (e.state === "disconnected" && ctx.connections.has(e.connection)) {
      ctx.connections.get(e.connection).connected = false;
      renderSelect();
      ctx.emit("connections", ctx.connections);
    }
  });
  follow(
    (event) => ctx.emit(`event:${event.type}`, event),
    () => ctx.emit("reset"),
  );
  try {
    const info = await api("GET", "info");
    setSandboxPort(info.sandboxPort);
    ctx.version = info.version;
    const { connections } = await api("GET", "connections");
    for (const c of connections) ctx.connections.set(c.id, c);
    if (connections.length > 0) ctx.current = connections[0].id;
    renderSelect();
    ctx.emit("connections", ctx.connections);
    ctx.emit("select", ctx.conn());
    showTab(connections.length > 0 ? "tools" : "servers");
    ctx.status(connections.length > 0 ? "Connected." : "Not connected: add a server.");
    await deepLink();
  } catch (e) {
    showTab("servers");
    ctx.status(e.message, "bad");
  }
  document.body.dataset.ready = "true";
}

// ?server=NAME or ?url=URL (with &era= and &version=): connect to it (or
// use the open connection to it) and show its tools. The link's words are
// then taken off the address bar, with the token.
async function deepLink() {
  const q = new URLSearchParams(location.search);
  history.replaceState(null, "", "/");
  const server = q.get("server");
  const url = q.get("url");
  if (!server && !url) return;
  const spec = server ? { server } : { url };
  if (q.get("era")) spec.era = q.get("era");
  if (q.get("version")) spec.protocolVersion = q.get("version");
  const same = [...ctx.connections.values()].find((c) => c.connected && (c.target === url || c.target === server)
    && (!spec.era || spec.era === "auto" || c.era === spec.era));
  if (same) {
    ctx.select(same.id);
    showTab("tools");
    return;
  }
  ctx.status(`Connecting to ${server || url}…`);
  try {
    const info = await api("POST", "connections", spec);
    ctx.upsert(info);
    ctx.select(info.id);
    showTab("tools");
    ctx.status(`Connected to ${info.serverInfo?.name || server || url} (${info.era}, ${info.protocolVersion}).`, "ok");
  } catch (e) {
    showTab("servers");
    ctx.status(`Could not connect: ${e.message}`, "bad");
  }
}

start();
