// Console: what stdio servers write on stderr, line by line.
import { el, fill, field, badge } from "./dom.js";

const MAX_ROWS = 2000;

export function init(ctx, panel) {
  const filter = el("input", { id: "console-filter", type: "search", autocomplete: "off" });
  const lines = el("ol", { id: "console-lines", class: "console", "aria-label": "Standard error of stdio servers" });
  fill(panel, el("div", { class: "row" }, field("Filter text", filter)), lines);
  const matches = (li) => !filter.value || li.textContent.toLowerCase().includes(filter.value.toLowerCase());
  filter.addEventListener("input", () => {
    for (const li of lines.children) li.hidden = !matches(li);
  });
  ctx.on("reset", () => fill(lines));
  ctx.on("event:console", (e) => {
    const li = el("li", { "data-connection": e.connection }, badge(`#${e.connection}`), " ",
      el("code", {}, e.line), e.cut ? el("span", { class: "meta" }, " (cut)") : null);
    li.hidden = !matches(li);
    lines.append(li);
    while (lines.children.length > MAX_ROWS) lines.firstChild.remove();
  });
}
