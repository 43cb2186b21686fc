// Prompts: the list, an argument form, and the messages prompts/get returns.
import { el, fill, field, json, badge, reconcile, serialLoader } from "./dom.js";
import { renderContentBlock } from "./content.js";
import { suggest } from "./completion.js";

export function init(ctx, panel) {
  let loadedFor = null;
  let chosen = null;
  const list = el("ul", { id: "prompt-list", class: "list", "aria-label": "Prompts" });
  const detail = el("div", { id: "prompt-detail" });
  const view = el("div", { id: "prompt-view", class: "result", "aria-live": "polite" });
  const refresh = el("button", { type: "button", id: "prompt-refresh" }, "Refresh");
  fill(panel, el("div", { class: "split" },
    el("div", { class: "side" }, el("h2", {}, "Prompts"), refresh, list),
    el("div", { class: "main" }, detail, view)));

  const choose = (p) => {
    chosen = p;
    const args = Array.isArray(p.arguments) ? p.arguments : [];
    const inputs = args.map((a) => el("input", { type: "text", "data-arg": a.name, spellcheck: "false",
      "aria-required": a.required ? "true" : null }));
    const given = (skip) => Object.fromEntries(args.map((a, i) => [a.name, inputs[i].value])
      .filter(([name, v]) => name !== skip && v !== ""));
    const lists = args.map((a, i) => suggest(ctx, inputs[i], { type: "ref/prompt", name: p.name }, a.name, () => given(a.name)));
    const f = el("form", { "aria-label": `Arguments of ${p.name}` },
      args.map((a, i) => field(`${a.title || a.name}${a.required ? " *" : ""}`, inputs[i], a.description)), lists,
      el("button", { type: "submit", id: "prompt-get" }, `Get ${p.name}`));
    f.addEventListener("submit", async (e) => {
      e.preventDefault();
      const c = ctx.conn();
      if (!c) return;
      const values = {};
      for (const [i, a] of args.entries()) {
        const v = inputs[i].value;
        if (v === "" && a.required) {
          fill(view, el("p", { class: "bad", role: "alert" }, `${a.name} is required`));
          inputs[i].focus();
          return;
        }
        if (v !== "") values[a.name] = v;
      }
      fill(view, el("p", {}, `Getting ${p.name}…`));
      try {
        const answer = await ctx.api("POST", `connections/${c.id}/prompts/get`, { name: p.name, arguments: values });
        const r = answer.result || {};
        fill(view,
          r.description ? el("p", { class: "description" }, r.description) : null,
          (Array.isArray(r.messages) ? r.messages : []).map((m) => el("div", { class: "message" },
            badge(String(m.role)), renderContentBlock(m.content))),
          el("details", {}, el("summary", {}, "Raw result"), json(r)));
      } catch (err) {
        fill(view, el("p", { class: "bad", role: "alert" }, err.message));
      }
    });
    fill(detail, el("h2", {}, p.title || p.name), p.description ? el("p", {}, p.description) : null, f);
    fill(view);
  };

  // Another connection starts afresh; a list_changed or Refresh of the same
  // one keeps each unchanged prompt's button and the chosen prompt's form.
  const load = serialLoader(list, async (stale) => {
    const c = ctx.conn();
    const id = c ? c.id : null;
    if (id !== loadedFor) {
      loadedFor = id;
      chosen = null;
      fill(detail);
      fill(view);
    }
    if (!c) return fill(list, el("li", {}, "Not connected."));
    let prompts;
    try {
      prompts = (await ctx.api("GET", `connections/${c.id}/prompts`)).prompts;
    } catch (e) {
      if (!stale()) fill(list, el("li", { class: "bad" }, e.message));
      return;
    }
    if (stale() || loadedFor !== c.id) return;
    prompts = Array.isArray(prompts) ? prompts : [];
    reconcile(list, prompts, (p) => p.name, (p) => el("li", {},
      el("button", { type: "button", class: "item", "data-prompt": p.name, onclick: () => choose(p) },
        el("span", { class: "name" }, p.title || p.name))));
    if (prompts.length === 0) list.append(el("li", {}, "No prompts."));
    if (chosen) {
      const now = prompts.find((p) => p.name === chosen.name);
      if (!now) {
        fill(detail, el("p", { class: "notice" }, `The server no longer offers ${chosen.name}.`));
        chosen = null;
      } else if (JSON.stringify(now) !== JSON.stringify(chosen)) {
        choose(now);
      }
    }
  });

  refresh.addEventListener("click", load);
  ctx.on("select", (c) => {
    if (ctx.tab === "prompts" && loadedFor !== (c?.id ?? null)) load();
  });
  ctx.on("tab", (name) => {
    if (name === "prompts" && loadedFor !== (ctx.conn()?.id ?? null)) load();
  });
  ctx.on("event:changed", (e) => {
    if (e.what === "prompts" && e.connection === ctx.current && loadedFor !== null) load();
  });
}
