// Logs: the level asked of the server (logging/setLevel in the legacy era,
// the level sent with each request in 2026-07-28), and the log messages of
// every connection with a text and level filter.
import { el, fill, field, badge } from "./dom.js";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const MAX_ROWS = 2000;

export function init(ctx, panel) {
  const entries = [];
  const level = el("select", { id: "log-level" }, LEVELS.map((l) => el("option", { value: l }, l)));
  const set = el("button", { type: "button", id: "log-set" }, "Set level");
  const minimum = el("select", { id: "log-min" }, LEVELS.map((l) => el("option", { value: l }, l)));
  const text = el("input", { id: "log-filter", type: "search", autocomplete: "off" });
  const rows = el("tbody", { id: "log-rows" });
  const table = el("table", { class: "log" },
    el("caption", {}, "Log messages"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Time (ms)"), el("th", { scope: "col" }, "Connection"),
      el("th", { scope: "col" }, "Level"), el("th", { scope: "col" }, "Logger"), el("th", { scope: "col" }, "Data"))),
    rows);
  fill(panel,
    el("div", { class: "row" }, field("Server log level", level), set),
    el("div", { class: "row" }, field("Show from level", minimum), field("Filter text", text)),
    table);

  const dataText = (d) => (typeof d === "string" ? d : JSON.stringify(d));
  const visible = (e) => LEVELS.indexOf(e.level) >= LEVELS.indexOf(minimum.value)
    && (!text.value || `${e.logger ?? ""} ${dataText(e.data)}`.toLowerCase().includes(text.value.toLowerCase()));
  const row = (e) => el("tr", { class: `lvl-${e.level}` }, el("td", {}, String(Math.round(e.at))),
    el("td", {}, `#${e.connection}`), el("td", {}, badge(e.level)), el("td", {}, e.logger ?? ""),
    el("td", {}, el("pre", {}, dataText(e.data))));
  const render = () => fill(rows, entries.filter(visible).map(row));

  set.addEventListener("click", async () => {
    const c = ctx.conn();
    if (!c) return ctx.status("Not connected.", "bad");
    try {
      const info = await ctx.api("POST", `connections/${c.id}/logging/level`, { level: level.value });
      ctx.upsert(info);
      ctx.status(`Log level of #${c.id} set to ${level.value}.`, "ok");
    } catch (e) {
      ctx.status(e.message, "bad");
    }
  });
  minimum.addEventListener("change", render);
  text.addEventListener("input", render);
  ctx.on("reset", () => {
    entries.length = 0;
    render();
  });
  ctx.on("event:log", (e) => {
    entries.push(e);
    if (entries.length > MAX_ROWS) entries.shift();
    if (visible(e)) rows.append(row(e));
    while (rows.children.length > MAX_ROWS) rows.firstChild.remove();
  });
}
