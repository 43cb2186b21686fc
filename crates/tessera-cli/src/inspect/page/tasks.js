// Tasks: a card per task a tool call became, with its status, status
// message, Cancel while it runs, and its result (or error) once it ends.
import { el, fill, json, badge } from "./dom.js";
import { renderToolResult } from "./content.js";

const MAX_CARDS = 200;

export function init(ctx, panel) {
  const tasks = new Map();
  const list = el("div", { id: "task-list", class: "cards" });
  fill(panel, el("h2", {}, "Tasks"), list);

  const card = (t) => {
    const terminal = ["completed", "failed", "cancelled"].includes(t.status) || t.result || t.error;
    const cancel = el("button", { type: "button", class: "danger", "data-action": "cancel-task", onclick: async () => {
      try {
        await ctx.api("POST", `connections/${t.connection}/tasks/${encodeURIComponent(t.taskId)}/cancel`);
        ctx.status(`Asked the server to cancel task ${t.taskId}.`);
      } catch (e) {
        ctx.status(e.message, "bad");
      }
    } }, "Cancel task");
    return el("article", { class: "card", "data-task": t.taskId, "data-status": t.status },
      el("h3", {}, `Task ${t.taskId}`),
      el("p", {}, badge(`#${t.connection}`), badge(String(t.status), t.status === "failed" ? "bad" : t.status === "completed" ? "ok" : "")),
      t.statusMessage ? el("p", { class: "meta" }, t.statusMessage) : null,
      terminal ? null : cancel,
      t.result ? el("div", { class: "result" }, renderToolResult({ result: t.result })) : null,
      t.error ? el("div", {}, el("p", { class: "bad" }, t.error), t.remote ? json(t.remote) : null) : null);
  };
  const render = () => fill(list, tasks.size ? [...tasks.values()].reverse().map(card) : el("p", {}, "No tasks yet."));

  const update = (e, extra) => {
    const key = `${e.connection}/${e.taskId}`;
    const t = { ...(tasks.get(key) || {}), ...extra };
    tasks.set(key, t);
    while (tasks.size > MAX_CARDS) tasks.delete(tasks.keys().next().value);
    render();
  };
  ctx.on("reset", () => {
    tasks.clear();
    render();
  });
  ctx.on("event:task", (e) => update(e, { connection: e.connection, taskId: e.taskId, status: e.status, statusMessage: e.statusMessage }));
  ctx.on("event:taskResult", (e) => update(e, { result: e.result, error: e.error, remote: e.remote }));
  render();
}
