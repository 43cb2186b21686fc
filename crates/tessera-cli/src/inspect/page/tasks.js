// Tasks: a card per task a tool call became, with its status, status
// message, Cancel while it runs, and its result (or error) once it ends.
import { el, fill, json, badge } from "./dom.js";
import { renderToolResult } from "./content.js";

const MAX_CARDS = 200;

export function init(ctx, panel) {
  const tasks = new Map();
  const list = el("div", { id: "task-list", class: "cards" });
  const serverList = el("div", { id: "task-server-list", "aria-live": "polite" });
  const listButton = el("button", { type: "button", id: "task-list-server", onclick: async () => {
    const c = ctx.conn();
    if (!c) return ctx.status("Not connected.", "bad");
    try {
      const { tasks: listed } = await ctx.api("GET", `connections/${c.id}/server-tasks`);
      fill(serverList, listed.length ? el("ul", {}, listed.map((t) => el("li", { "data-task": t.taskId },
        el("code", {}, t.taskId), " ", badge(String(t.status)), t.statusMessage ? ` ${t.statusMessage}` : "")))
        : el("p", {}, "The server lists no tasks."));
    } catch (e) {
      fill(serverList, el("p", { class: "bad" }, e.message));
    }
  } }, "List the server's tasks (tasks/list)");
  fill(panel, el("h2", {}, "Tasks"), list, el("h2", {}, "The server's list"), listButton, serverList);

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
