// Tools: a searchable list (annotation badges, refreshed on list_changed), a
// form generated from the selected tool's inputSchema, Call with progress
// and Cancel, and the result rendered by content type with the outputSchema
// verdict.
import { el, fill, field, badge, json, reconcile, serialLoader } from "./dom.js";
import { schemaForm } from "./schema_form.js";
import { renderToolResult } from "./content.js";
import { initLoad, loadPanel } from "./load.js";
import { uiMeta, visibility } from "./apps.js";

export function init(ctx, panel) {
  initLoad(ctx);
  let tools = [];
  let selected = null;
  let form = null;
  let callId = null;
  let loadedFor = null;
  const search = el("input", { id: "tool-search", type: "search", autocomplete: "off" });
  const refresh = el("button", { type: "button", id: "tool-refresh" }, "Refresh");
  const list = el("ul", { id: "tool-list", class: "list", "aria-label": "Tools" });
  const detail = el("div", { id: "tool-detail", class: "detail" });
  const progress = el("progress", { id: "tool-progress", max: 1, value: 0, hidden: true, "aria-label": "Progress" });
  const progressText = el("span", { id: "tool-progress-text", "aria-live": "polite" });
  const result = el("div", { id: "tool-result", class: "result", "aria-live": "polite" });
  fill(panel,
    el("div", { class: "split" },
      el("div", { class: "side" }, field("Search tools", search), refresh, list),
      el("div", { class: "main" }, detail, el("div", { class: "row" }, progress, progressText), result)));

  // Each tool keeps its button across re-renders while the server's
  // description of it is unchanged: a list_changed that arrives while a
  // person (or a test) clicks never swallows the click.
  const renderList = () => {
    const q = search.value.trim().toLowerCase();
    const shown = tools.filter((t) => !q || t.name.toLowerCase().includes(q)
      || (t.title || "").toLowerCase().includes(q) || (t.description || "").toLowerCase().includes(q));
    const items = reconcile(list, shown, (t) => t.name, (t) => el("li", {},
      el("button", { type: "button", class: "item", "data-tool": t.name, onclick: () => choose(t) },
        el("span", { class: "name" }, t.title || t.name), " ", annotationBadges(t))));
    for (const item of items) {
      const button = item.firstElementChild;
      const on = selected?.name === button.dataset.tool;
      button.className = on ? "item on" : "item";
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
    if (shown.length === 0) list.append(el("li", {}, tools.length ? "No tool matches." : "No tools."));
  };

  const choose = (t) => {
    selected = t;
    form = schemaForm(t.inputSchema || {}, `arg-${t.name}`);
    const support = t.execution?.taskSupport;
    const asTask = el("input", { type: "checkbox", id: "tool-as-task", checked: support === "required",
      disabled: support === "required" });
    const taskField = support === "optional" || support === "required"
      ? el("div", { class: "row" }, asTask, el("label", { for: "tool-as-task" }, "Run as a task")) : null;
    const call = el("button", { type: "submit", id: "tool-call" }, `Call ${t.name}`);
    const openApp = typeof uiMeta(t)?.resourceUri === "string"
      ? el("button", { type: "button", id: "tool-open-app", onclick: () => {
        try {
          ctx.emit("open-app", { tool: t, args: form.read() });
        } catch (e) {
          fill(result, el("p", { class: "bad", role: "alert" }, e.message));
        }
      } }, "Call and open its app") : null;
    const cancel = el("button", { type: "button", id: "tool-cancel", disabled: true, onclick: doCancel }, "Cancel");
    const f = el("form", { "aria-label": `Arguments of ${t.name}` }, form.node, taskField, el("div", { class: "row" }, call, cancel, openApp));
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      doCall(t, call, cancel, asTask.checked && taskField !== null);
    });
    fill(detail,
      el("h2", {}, t.title || t.name),
      t.title ? el("p", {}, el("code", {}, t.name)) : null,
      t.description ? el("p", { class: "description" }, t.description) : null,
      el("p", {}, annotationBadges(t)),
      f,
      el("details", {}, el("summary", {}, "inputSchema"), json(t.inputSchema || {})),
      loadPanel(ctx, t, () => form.read()),
      t.outputSchema ? el("details", {}, el("summary", {}, "outputSchema"), json(t.outputSchema)) : null);
    fill(result);
    renderList();
  };

  const doCall = async (t, callButton, cancelButton, asTask) => {
    const c = ctx.conn();
    if (!c) return;
    let args;
    try {
      args = form.read();
    } catch (e) {
      fill(result, el("p", { class: "bad", role: "alert" }, e.message));
      return;
    }
    callId = `call-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    callButton.disabled = true;
    cancelButton.disabled = false;
    progress.hidden = true;
    progress.removeAttribute("value");
    progressText.textContent = "";
    fill(result, el("p", {}, `Calling ${t.name}…`));
    const started = performance.now();
    try {
      const body = { name: t.name, arguments: args, callId };
      if (asTask) body.task = true;
      const answer = await ctx.api("POST", `connections/${c.id}/tools/call`, body);
      const ms = Math.round(performance.now() - started);
      if (answer.task) {
        fill(result, el("p", { id: "tool-task-started" }, `Task ${answer.task.taskId} started. `,
          el("button", { type: "button", onclick: () => ctx.showTab("tasks", true) }, "Follow it in Tasks")));
      } else if (answer.cancelled) {
        fill(result, el("p", { class: "notice", id: "tool-cancelled" }, `Cancelled after ${ms} ms.`));
      } else {
        fill(result, el("p", { class: "meta" }, `Answered in ${ms} ms.`), renderToolResult(answer));
      }
    } catch (e) {
      fill(result, el("p", { class: "bad", role: "alert" }, e.message), e.detail ? json(e.detail) : null);
    } finally {
      callId = null;
      callButton.disabled = false;
      cancelButton.disabled = true;
    }
  };

  const doCancel = async () => {
    const c = ctx.conn();
    if (!c || !callId) return;
    try {
      await ctx.api("POST", `connections/${c.id}/calls/${encodeURIComponent(callId)}/cancel`);
    } catch (e) {
      ctx.status(e.message, "bad");
    }
  };

  // Another connection starts afresh; a list_changed or Refresh of the same
  // one keeps the chosen tool and what was typed into its form, unless the
  // server dropped or redefined that tool.
  const load = serialLoader(list, async (stale) => {
    const c = ctx.conn();
    const id = c ? c.id : null;
    if (id !== loadedFor) {
      loadedFor = id;
      tools = [];
      selected = null;
      fill(detail, el("p", {}, c ? "Choose a tool." : "Not connected."));
      fill(result);
      renderList();
    }
    if (!c) return;
    let answer;
    try {
      answer = (await ctx.api("GET", `connections/${c.id}/tools`)).tools;
    } catch (e) {
      if (stale()) return;
      if (selected) ctx.status(e.message, "bad");
      else fill(detail, el("p", { class: "bad" }, e.message));
      return;
    }
    if (stale() || loadedFor !== c.id) return;
    tools = Array.isArray(answer) ? answer : [];
    if (selected) {
      const now = tools.find((t) => t.name === selected.name);
      if (!now) {
        fill(detail, el("p", { class: "notice", id: "tool-gone" }, `The server no longer offers ${selected.name}.`));
        selected = null;
      } else if (JSON.stringify(now) !== JSON.stringify(selected)) {
        choose(now);
        detail.prepend(el("p", { class: "notice", id: "tool-redefined" }, `The server changed ${now.name}: its form is new.`));
      } else {
        selected = now;
      }
    }
    renderList();
  });

  search.addEventListener("input", renderList);
  refresh.addEventListener("click", load);
  // A connection chosen again (the same one) keeps its list: Refresh reloads it.
  ctx.on("select", (c) => {
    if (!c || loadedFor !== c.id) load();
  });
  ctx.on("tab", (name) => {
    if (name === "tools" && ctx.conn() && loadedFor !== ctx.conn().id) load();
  });
  ctx.on("event:changed", (e) => {
    if (e.what === "tools" && e.connection === ctx.current) load();
  });
  ctx.on("event:progress", (e) => {
    if (!callId || e.call !== callId) return;
    progress.hidden = false;
    if (typeof e.total === "number" && e.total > 0) {
      progress.max = e.total;
      progress.value = Math.min(e.progress, e.total);
    }
    progressText.textContent = `${e.progress}${e.total ? ` / ${e.total}` : ""}${e.message ? ` ${e.message}` : ""}`;
  });
}

function annotationBadges(t) {
  const a = t.annotations || {};
  const out = [];
  if (a.readOnlyHint) out.push(badge("read-only"));
  if (a.destructiveHint) out.push(badge("destructive", "bad"));
  if (a.idempotentHint) out.push(badge("idempotent"));
  if (a.openWorldHint) out.push(badge("open world"));
  if (t.execution?.taskSupport && t.execution.taskSupport !== "forbidden") out.push(badge(`task: ${t.execution.taskSupport}`));
  if (typeof uiMeta(t)?.resourceUri === "string") out.push(badge("app"));
  if (!visibility(t).includes("model")) out.push(badge("app only"));
  return out;
}
