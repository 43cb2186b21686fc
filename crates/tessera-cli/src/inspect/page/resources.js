// Resources: the list and the templates (a field per URI template
// variable), and a viewer for what resources/read returns.
import { el, fill, field, json, reconcile, serialLoader } from "./dom.js";
import { renderResourceContents } from "./content.js";
import { suggest } from "./completion.js";

export function init(ctx, panel) {
  let loadedFor = null;
  let shown = null;
  const subscribed = new Set();
  const updated = new Map();
  const list = el("ul", { id: "res-list", class: "list", "aria-label": "Resources" });
  const templates = el("div", { id: "res-templates" });
  const view = el("div", { id: "res-view", class: "result", "aria-live": "polite" });
  const refresh = el("button", { type: "button", id: "res-refresh" }, "Refresh");
  fill(panel, el("div", { class: "split" },
    el("div", { class: "side" }, el("h2", {}, "Resources"), refresh, list, el("h2", {}, "Templates"), templates),
    el("div", { class: "main" }, view)));

  const read = async (uri) => {
    const c = ctx.conn();
    if (!c) return;
    fill(view, el("p", {}, `Reading ${uri}…`));
    try {
      const answer = await ctx.api("POST", `connections/${c.id}/resources/read`, { uri });
      const contents = Array.isArray(answer.result?.contents) ? answer.result.contents : [];
      shown = uri;
      const pdf = async (u) => (await ctx.api("POST", `connections/${c.id}/documents`, { uri: u })).path;
      fill(view, el("h2", {}, uri), followControls(c, uri), contents.map((x) => renderResourceContents(x, { pdf })),
        el("details", {}, el("summary", {}, "Raw result"), json(answer.result)));
    } catch (e) {
      fill(view, el("p", { class: "bad", role: "alert" }, e.message));
    }
  };

  // Subscribe / Unsubscribe, and when the server last said it changed.
  const followControls = (c, uri) => {
    const can = c.era === "modern" || c.capabilities?.resources?.subscribe;
    if (!can) return el("p", { class: "meta" }, "The server does not offer resource subscriptions.");
    const on = subscribed.has(`${c.id} ${uri}`);
    const when = updated.get(`${c.id} ${uri}`);
    return el("div", { class: "row" },
      el("button", { type: "button", id: "res-subscribe", "aria-pressed": on ? "true" : "false", onclick: async () => {
        try {
          await ctx.api("POST", `connections/${c.id}/resources/${on ? "unsubscribe" : "subscribe"}`, { uri });
        } catch (e) {
          ctx.status(e.message, "bad");
        }
      } }, on ? "Unsubscribe" : "Subscribe"),
      el("span", { id: "res-updated", class: "meta" }, when ? `Updated at ${when}` : on ? "No update yet" : ""));
  };
  const refreshControls = () => {
    const c = ctx.conn();
    const old = view.querySelector("#res-subscribe")?.parentElement;
    if (c && shown && old) old.replaceWith(followControls(c, shown));
  };
  ctx.on("event:subscription", (e) => {
    const key = `${e.connection} ${e.uri}`;
    if (e.state === "subscribed") subscribed.add(key);
    else subscribed.delete(key);
    refreshControls();
  });
  ctx.on("event:changed", (e) => {
    if (e.what !== "resource") return;
    if (updated.size > 1000) updated.clear();
    updated.set(`${e.connection} ${e.uri}`, new Date().toLocaleTimeString());
    refreshControls();
  });
  ctx.on("reset", () => {
    subscribed.clear();
    updated.clear();
  });

  const templateForm = (t) => {
    const vars = [...new Set([...String(t.uriTemplate).matchAll(/\{[+#./;?&]?([^}]+)\}/g)]
      .flatMap((m) => m[1].split(",").map((v) => v.replace(/[*]|:\d+$/g, ""))))];
    const inputs = vars.map((v) => el("input", { type: "text", "data-var": v, spellcheck: "false" }));
    const given = (skip) => Object.fromEntries(vars.map((v, i) => [v, inputs[i].value])
      .filter(([v, value]) => v !== skip && value !== ""));
    const lists = vars.map((v, i) => suggest(ctx, inputs[i], { type: "ref/resource", uri: t.uriTemplate }, v, () => given(v)));
    const f = el("form", { class: "card", "aria-label": `Template ${t.name}` },
      el("h3", {}, t.title || t.name), el("p", {}, el("code", {}, t.uriTemplate)),
      inputs.map((input, i) => field(vars[i], input)), lists,
      el("button", { type: "submit" }, "Read"));
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      let uri = String(t.uriTemplate);
      vars.forEach((v, i) => {
        uri = uri.replace(new RegExp(`\\{[+#./;?&]?${v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\}`), encodeURIComponent(inputs[i].value));
      });
      read(uri);
    });
    return f;
  };

  // Another connection starts afresh; a list_changed or Refresh of the same
  // one keeps unchanged entries' nodes, the template forms as typed while
  // the templates are unchanged, and the resource being read.
  const load = serialLoader(list, async (stale) => {
    const c = ctx.conn();
    const id = c ? c.id : null;
    if (id !== loadedFor) {
      loadedFor = id;
      shown = null;
      fill(view);
    }
    if (!c) {
      fill(list, el("li", {}, "Not connected."));
      fill(templates);
      return;
    }
    try {
      const { resources } = await ctx.api("GET", `connections/${c.id}/resources`);
      if (stale() || loadedFor !== c.id) return;
      const all = Array.isArray(resources) ? resources : [];
      reconcile(list, all, (r) => r.uri, (r) => el("li", {},
        el("button", { type: "button", class: "item", "data-uri": r.uri, onclick: () => read(r.uri) },
          el("span", { class: "name" }, r.title || r.name), " ", el("code", {}, r.uri),
          r.mimeType ? ` ${r.mimeType}` : "")));
      if (all.length === 0) list.append(el("li", {}, "No resources."));
    } catch (e) {
      if (!stale()) fill(list, el("li", { class: "bad" }, e.message));
    }
    try {
      const { resourceTemplates } = await ctx.api("GET", `connections/${c.id}/resource-templates`);
      if (stale() || loadedFor !== c.id) return;
      const all = Array.isArray(resourceTemplates) ? resourceTemplates : [];
      reconcile(templates, all, (t) => t.uriTemplate, templateForm);
      if (all.length === 0) templates.append(el("p", {}, "No templates."));
    } catch (e) {
      if (!stale()) fill(templates, el("p", { class: "bad" }, e.message));
    }
  });

  refresh.addEventListener("click", load);
  ctx.on("select", (c) => {
    if (ctx.tab === "resources" && loadedFor !== (c?.id ?? null)) load();
  });
  ctx.on("tab", (name) => {
    if (name === "resources" && loadedFor !== (ctx.conn()?.id ?? null)) load();
  });
  ctx.on("event:changed", (e) => {
    if (e.what === "resources" && e.connection === ctx.current && loadedFor !== null) load();
  });
}
