// Sampling requests answered at once with a fixed reply, or put to the user
// each time (the default). The inspector holds the choice (PUT
// /api/sampling-auto), so it applies to every connection, page open or not.
import { el, field } from "./dom.js";

export function samplingAutoPanel(ctx) {
  const on = el("input", { type: "checkbox", id: "sampling-auto" });
  const text = el("textarea", { id: "sampling-auto-text", rows: 2, value: "A reply from the inspector." });
  const model = el("input", { type: "text", id: "sampling-auto-model", value: "tessera-inspect" });
  const state = el("p", { id: "sampling-auto-state", class: "meta", "aria-live": "polite" }, "Each sampling request is put to you.");
  const show = (auto) => {
    on.checked = Boolean(auto);
    if (auto) {
      text.value = auto.text;
      model.value = auto.model;
    }
    state.dataset.auto = auto ? "on" : "off";
    state.textContent = auto ? "Every sampling request is answered at once with this text." : "Each sampling request is put to you.";
  };
  const save = async () => {
    try {
      const body = on.checked ? { text: text.value, model: model.value } : { text: null };
      show((await ctx.api("PUT", "sampling-auto", body)).auto);
    } catch (e) {
      ctx.status(e.message, "bad");
    }
  };
  on.addEventListener("change", save);
  text.addEventListener("change", () => on.checked && save());
  model.addEventListener("change", () => on.checked && save());
  ctx.api("GET", "sampling-auto").then((r) => show(r.auto), () => {});
  return el("div", { class: "card", id: "sampling-auto-panel" },
    el("div", { class: "row" }, on, el("label", { for: "sampling-auto" }, "Answer sampling requests at once with a fixed reply")),
    field("Reply text", text), field("Model name", model), state);
}
