// Skills: what the server publishes (the Skills extension) — each skill's
// entry and files, and Verify: every file read and checked against its
// manifest entry (digest, size; the frontmatter of SKILL.md).
import { el, fill, json, badge } from "./dom.js";

export function init(ctx, panel) {
  let loadedFor = null;
  const list = el("ul", { id: "skill-list", class: "list", "aria-label": "Skills" });
  const detail = el("div", { id: "skill-detail", "aria-live": "polite" });
  const refresh = el("button", { type: "button", id: "skill-refresh" }, "Refresh");
  fill(panel, el("div", { class: "split" },
    el("div", { class: "side" }, el("h2", {}, "Skills"), refresh, list),
    el("div", { class: "main" }, detail)));

  const files = (s) => (Array.isArray(s.resources) ? s.resources : []);
  const choose = (s) => {
    const c = ctx.conn();
    const rows = el("tbody", {}, files(s).map((f) => el("tr", { "data-file": f.uri },
      el("td", {}, el("code", {}, f.uri)), el("td", {}, String(f.size)), el("td", {}, el("code", {}, f.digest)),
      el("td", { class: "verdict" }, ""))));
    const verify = el("button", { type: "button", id: "skill-verify", onclick: async () => {
      verify.disabled = true;
      try {
        const v = await ctx.api("POST", `connections/${c.id}/skills/verify`, { uri: s.uri });
        for (const f of v.files) {
          const cell = [...rows.children].find((r) => r.dataset.file === f.uri)?.querySelector(".verdict");
          if (cell) fill(cell, badge(f.verdict, f.verdict === "ok" ? "ok" : "bad"), f.detail ? ` ${f.detail}` : "");
        }
      } catch (e) {
        ctx.status(e.message, "bad");
      } finally {
        verify.disabled = false;
      }
    } }, "Verify every file");
    fill(detail, el("h2", {}, s.frontmatter?.name || s.uri), el("p", {}, s.frontmatter?.description || ""),
      el("p", {}, el("code", {}, s.uri)),
      s.resources === "dynamic" ? el("p", { class: "notice" }, "A dynamic skill: no digests to verify against.")
        : [el("table", { class: "log" }, el("caption", {}, "Files"),
          el("thead", {}, el("tr", {}, ["File", "Bytes", "Digest", "Verdict"].map((h) => el("th", { scope: "col" }, h)))),
          rows), verify],
      el("details", {}, el("summary", {}, "Frontmatter"), json(s.frontmatter)));
  };

  const load = async () => {
    const c = ctx.conn();
    loadedFor = c ? c.id : null;
    fill(detail);
    if (!c) return fill(list, el("li", {}, "Not connected."));
    try {
      const { skills } = await ctx.api("GET", `connections/${c.id}/skills`);
      fill(list, skills.length ? skills.map((s) => el("li", {},
        el("button", { type: "button", class: "item", "data-skill": s.uri, onclick: () => choose(s) },
          el("span", { class: "name" }, s.frontmatter?.name || s.uri)))) : el("li", {}, "No skills."));
    } catch (e) {
      fill(list, el("li", { class: "bad" }, e.message));
    }
  };
  refresh.addEventListener("click", load);
  ctx.on("select", () => {
    loadedFor = null;
    if (ctx.tab === "skills") load();
  });
  ctx.on("tab", (name) => {
    if (name === "skills" && loadedFor !== (ctx.conn()?.id ?? null)) load();
  });
}
