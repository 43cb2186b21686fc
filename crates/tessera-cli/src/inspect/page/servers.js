// Servers: connect by URL or command (era, protocol version), and the open
// connections with their badges.
import { el, fill, field, badge, json } from "./dom.js";
import { signIn } from "./signin.js";
import { samplingAutoPanel } from "./sampling_auto.js";

const VERSIONS = ["", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

export function init(ctx, panel) {
  const kind = el("select", { id: "srv-kind" },
    el("option", { value: "command" }, "Command (stdio)"),
    el("option", { value: "url" }, "URL (Streamable HTTP)"),
    el("option", { value: "server" }, "Named server (config file)"));
  const target = el("input", { id: "srv-target", type: "text", size: 48, autocomplete: "off", spellcheck: "false" });
  const args = el("textarea", { id: "srv-args", rows: 3, cols: 40, spellcheck: "false" });
  const headers = el("textarea", { id: "srv-headers", rows: 2, cols: 40, spellcheck: "false" });
  const era = el("select", { id: "srv-era" },
    el("option", { value: "auto" }, "auto (probe, fall back)"),
    el("option", { value: "legacy" }, "legacy (initialize)"),
    el("option", { value: "modern" }, "modern (2026-07-28)"));
  const version = el("select", { id: "srv-version" },
    VERSIONS.map((v) => el("option", { value: v }, v || "(negotiate)")));
  const tasks = el("input", { id: "srv-tasks", type: "checkbox" });
  const roots = el("textarea", { id: "srv-roots", rows: 2, cols: 40, spellcheck: "false" });
  const extensions = el("textarea", { id: "srv-extensions", rows: 2, cols: 40, spellcheck: "false",
    placeholder: "{\"io.example/feature\": {}}" });
  const timeout = el("input", { id: "srv-timeout", type: "number", min: "0.1", max: "600", step: "any", value: "60" });
  const button = el("button", { id: "srv-connect", type: "submit" }, "Connect");
  const saveName = el("input", { id: "srv-save-name", type: "text", autocomplete: "off", spellcheck: "false" });
  const save = el("button", { id: "srv-save", type: "button" }, "Save to the configuration file");
  const oauth = signIn(ctx, () => (kind.value === "url" ? target.value.trim() : ""));
  const argsField = field("Arguments (one per line)", args);
  const headersField = field("Headers (Name: value, one per line)", headers);
  const targetLabel = el("label", { for: "srv-target" }, "Program");
  const sync = () => {
    const k = kind.value;
    targetLabel.textContent = k === "url" ? "URL" : k === "server" ? "Server name" : "Program";
    argsField.hidden = k !== "command";
    headersField.hidden = k !== "url";
    oauth.button.hidden = k !== "url";
  };
  kind.addEventListener("change", sync);
  const lines = (t) => t.value.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
  const form = el("form", { class: "connect", "aria-label": "Connect to a server" },
    field("Transport", kind),
    el("div", { class: "field" }, targetLabel, target),
    argsField, headersField,
    field("Era", era), field("Protocol version", version),
    field("Name in the configuration file", saveName),
    field("Roots (file:// URIs, one per line)", roots),
    field("Timeout per request (seconds)", timeout),
    field("Client extensions to declare (JSON: identifier → settings)", extensions),
    el("div", { class: "field" }, el("label", { for: "srv-tasks" }, "Declare the tasks extension (2026-07-28)"), tasks),
    el("div", { class: "row" }, button, save, oauth.button), oauth.box);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const spec = { era: era.value };
    if (tasks.checked) spec.tasks = true;
    if (lines(roots).length > 0) spec.roots = lines(roots);
    if (timeout.value && Number(timeout.value) !== 60) spec.timeout = Number(timeout.value);
    if (version.value) spec.protocolVersion = version.value;
    if (extensions.value.trim()) {
      try {
        const parsed = JSON.parse(extensions.value);
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)
          || Object.values(parsed).some((v) => !v || typeof v !== "object" || Array.isArray(v))) {
          throw new Error("an object of identifier → settings object");
        }
        spec.extensions = parsed;
      } catch (err) {
        ctx.status(`Client extensions: ${err.message}`, "bad");
        extensions.focus();
        return;
      }
    }
    const k = kind.value;
    const t = target.value.trim();
    if (!t) {
      ctx.status("Give a program, a URL or a server name.", "bad");
      target.focus();
      return;
    }
    if (k === "url") {
      spec.url = t;
      spec.headers = lines(headers);
    } else if (k === "server") {
      spec.server = t;
    } else {
      spec.command = t;
      spec.args = args.value.split("\n").filter((l) => l.length > 0);
    }
    button.disabled = true;
    ctx.status(`Connecting to ${t}…`);
    try {
      const info = await ctx.api("POST", "connections", spec);
      ctx.upsert(info);
      ctx.select(info.id);
      ctx.status(`Connected to ${info.serverInfo?.name || t} (${info.era}, ${info.protocolVersion}).`, "ok");
      ctx.showTab("tools");
    } catch (err) {
      ctx.status(`Could not connect: ${err.message}`, "bad");
    } finally {
      button.disabled = false;
    }
  });
  sync();

  const list = el("div", { id: "srv-list", class: "cards" });
  const named = el("div", { id: "srv-config" });
  fill(panel, el("h2", {}, "Connect"), form, el("h2", {}, "Connections"), list,
    el("h2", {}, "Servers of the configuration file"), named,
    el("h2", {}, "Sampling"), samplingAutoPanel(ctx));

  const connectNamed = async (name) => {
    const spec = { server: name, era: era.value };
    if (tasks.checked) spec.tasks = true;
    ctx.status(`Connecting to ${name}…`);
    try {
      const info = await ctx.api("POST", "connections", spec);
      ctx.upsert(info);
      ctx.select(info.id);
      ctx.status(`Connected to ${name} (${info.era}, ${info.protocolVersion}).`, "ok");
      ctx.showTab("tools");
    } catch (err) {
      ctx.status(`Could not connect to ${name}: ${err.message}`, "bad");
    }
  };
  save.addEventListener("click", async () => {
    const name = saveName.value.trim();
    const t = target.value.trim();
    if (!name || !t || kind.value === "server") {
      ctx.status("To save: a command or URL, and a name for it.", "bad");
      return;
    }
    const entry = kind.value === "url"
      ? { url: t, headers: Object.fromEntries(lines(headers).map((h) => {
        const i = h.indexOf(":");
        return [h.slice(0, i).trim(), h.slice(i + 1).trim()];
      })) }
      : { command: t, args: args.value.split("\n").filter((l) => l.length > 0) };
    try {
      await ctx.api("PUT", `config/servers/${encodeURIComponent(name)}`, entry);
      ctx.status(`Saved ${name} to the configuration file.`, "ok");
      loadConfig();
    } catch (err) {
      ctx.status(`Could not save: ${err.message}`, "bad");
    }
  });
  const removeNamed = async (name) => {
    try {
      await ctx.api("DELETE", `config/servers/${encodeURIComponent(name)}`);
      ctx.status(`Removed ${name} from the configuration file.`);
      loadConfig();
    } catch (err) {
      ctx.status(err.message, "bad");
    }
  };
  const loadConfig = async () => {
    try {
      const c = await ctx.api("GET", "config");
      if (!c.path) return fill(named, el("p", {}, "No configuration file (set $TESSERA_CONFIG or --config)."));
      if (!c.exists) return fill(named, el("p", {}, `${c.path} does not exist.`));
      fill(named, el("p", { class: "meta" }, c.path),
        c.servers.length ? el("ul", { class: "list" }, c.servers.map((s) => el("li", {},
          el("div", { class: "card", "data-server": s.name },
            el("h3", {}, s.name),
            el("p", { class: "target" }, s.url ?? [s.command, ...(s.args || [])].join(" ")),
            s.problem ? el("p", { class: "bad" }, s.problem) : null,
            el("div", { class: "row" },
              s.problem ? null : el("button", { type: "button", "data-action": "connect-named", onclick: () => connectNamed(s.name) },
                `Connect ${s.name}`),
              el("button", { type: "button", class: "danger", "data-action": "remove-named", onclick: () => removeNamed(s.name) },
                `Remove ${s.name}`)))))) : el("p", {}, "No servers in it."));
    } catch (err) {
      fill(named, el("p", { class: "bad" }, err.message));
    }
  };
  ctx.on("tab", (name) => {
    if (name === "servers") loadConfig();
  });

  ctx.on("connections", (conns) => {
    const cards = [...conns.values()].map((c) =>
      el("article", { class: "card", "data-connection": c.id },
        el("h3", {}, `#${c.id} ${c.serverInfo?.name || ""} ${c.serverInfo?.version || ""}`),
        el("p", {}, badge(c.era, "era"), badge(c.transport), badge(c.protocolVersion),
          badge(c.connected ? "connected" : "disconnected", c.connected ? "ok" : "bad")),
        el("p", { class: "target" }, c.target),
        c.instructions ? el("p", { class: "instructions" }, c.instructions) : null,
        el("details", {}, el("summary", {}, "Capabilities"), json(c.capabilities)),
        el("div", { class: "row" },
          el("button", { type: "button", onclick: () => { ctx.select(c.id); ctx.showTab("tools"); } }, "Use"),
          el("button", {
            type: "button",
            class: "danger",
            onclick: async () => {
              try {
                await ctx.api("DELETE", `connections/${c.id}`);
                ctx.remove(c.id);
                ctx.status(`Disconnected #${c.id}.`);
              } catch (err) {
                ctx.status(err.message, "bad");
              }
            },
          }, `Disconnect #${c.id}`))));
    fill(list, cards.length ? cards : el("p", {}, "No connection yet."));
  });
}
