// Requests from servers: elicitation (a form from requestedSchema,
// checked before sending; Accept, Decline or Cancel), URL-mode elicitation
// (consent, the URL shown in full) and sampling (edit the reply and send it,
// or reject). Shown above the tabs until answered.
import { el, fill, field, json, badge, reconcile } from "./dom.js";
import { schemaForm } from "./schema_form.js";

export function init(ctx, region) {
  const open = new Map();

  const answer = async (id, body) => {
    try {
      await ctx.api("POST", `asks/${id}`, body);
    } catch (e) {
      ctx.status(e.message, "bad");
    }
  };

  const elicitation = (a) => {
    const form = schemaForm(a.requestedSchema || {}, `ask-${a.ask}`);
    const error = el("p", { class: "bad", role: "alert" });
    const f = el("form", { "aria-label": "Answer the server" }, form.node, error,
      el("div", { class: "row" },
        el("button", { type: "submit", "data-action": "accept" }, "Accept"),
        el("button", { type: "button", "data-action": "decline", onclick: () => answer(a.ask, { reply: { action: "decline" } }) }, "Decline"),
        el("button", { type: "button", "data-action": "cancel", onclick: () => answer(a.ask, { reply: { action: "cancel" } }) }, "Cancel")));
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      let content;
      try {
        content = form.read();
      } catch (err) {
        error.textContent = err.message;
        return;
      }
      answer(a.ask, { reply: { action: "accept", content } });
    });
    return [el("p", { class: "message" }, a.message ?? ""), f];
  };

  const sampling = (a) => {
    const messages = Array.isArray(a.params?.messages) ? a.params.messages : [];
    const reply = el("textarea", { rows: 3, "data-role": "reply", value: "A reply from the inspector." });
    const model = el("input", { type: "text", value: "tessera-inspect", "data-role": "model" });
    const f = el("form", { "aria-label": "Reply as the model" },
      field("Reply text", reply), field("Model name", model),
      el("div", { class: "row" },
        el("button", { type: "submit", "data-action": "send" }, "Send reply"),
        el("button", { type: "button", "data-action": "reject", onclick: () => answer(a.ask, { reject: "the user rejected the sampling request" }) }, "Reject")));
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      answer(a.ask, { reply: { role: "assistant", content: { type: "text", text: reply.value }, model: model.value, stopReason: "endTurn" } });
    });
    return [
      messages.map((m) => el("div", { class: "message" }, badge(String(m.role)),
        el("pre", { class: "text" }, m.content?.type === "text" ? m.content.text : JSON.stringify(m.content)))),
      a.params?.systemPrompt ? el("p", { class: "meta" }, `System prompt: ${a.params.systemPrompt}`) : null,
      f,
      el("details", {}, el("summary", {}, "Request"), json(a.params)),
    ];
  };

  // URL mode: the whole URL shown, its host apart (against look-alike
  // names); the inspector never opens it, the user does, after consenting.
  const urlConsent = (a) => [
    el("p", { class: "message" }, a.message ?? ""),
    el("p", {}, "The server asks you to open: ", el("code", { class: "url", "data-role": "url" }, a.url ?? "")),
    el("p", {}, "Host: ", el("strong", { "data-role": "host" }, a.host ?? "(none)")),
    el("div", { class: "row" },
      el("button", { type: "button", "data-action": "accept", onclick: () => answer(a.ask, { reply: { action: "accept" } }) },
        "I will open it (accept)"),
      el("button", { type: "button", "data-action": "decline", onclick: () => answer(a.ask, { reply: { action: "decline" } }) }, "Decline"),
      el("button", { type: "button", "data-action": "cancel", onclick: () => answer(a.ask, { reply: { action: "cancel" } }) }, "Cancel")),
  ];

  // Each question keeps its card while others come and go: what the user
  // typed into one is never lost to another's arrival.
  const heading = el("h2", {});
  const cards = el("div", { class: "ask-cards" });
  fill(region, heading, cards);
  const render = () => {
    region.hidden = open.size === 0;
    heading.textContent = `Requests from servers (${open.size})`;
    reconcile(cards, [...open.values()], (a) => a.ask, (a) => el("article", { class: "card ask", "data-ask": a.ask, "data-kind": a.kind },
      el("h3", {}, `#${a.connection} asks: ${a.kind}`),
      a.kind === "elicitation" ? elicitation(a) : a.kind === "url" ? urlConsent(a) : sampling(a)));
  };

  ctx.on("reset", () => {
    open.clear();
    render();
  });
  ctx.on("event:ask", (a) => {
    const first = open.size === 0;
    open.set(a.ask, a);
    render();
    if (first) region.querySelector("input, textarea, button")?.focus();
  });
  ctx.on("event:answered", (a) => {
    if (open.delete(a.ask)) render();
  });
}
