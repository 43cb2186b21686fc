// Suggestions from the server (completion/complete) for a text field: a
// <datalist> the browser offers as the user types. Only when the server
// declares the completions capability.
import { el } from "./dom.js";

let lists = 0;

// Attaches suggestions to `input`. `ref` is {type: "ref/prompt", name} or
// {type: "ref/resource", uri}; `context()` returns the other arguments
// already given.
export function suggest(ctx, input, ref, argument, context) {
  const c = ctx.conn();
  if (!c || !c.capabilities?.completions) return null;
  lists += 1;
  const list = el("datalist", { id: `suggest-${lists}` });
  input.setAttribute("list", list.id);
  input.setAttribute("autocomplete", "off");
  let timer = null;
  let asked = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      asked += 1;
      const mine = asked;
      const params = { ref, argument: { name: argument, value: input.value } };
      const other = context();
      if (Object.keys(other).length > 0) params.context = { arguments: other };
      try {
        const answer = await ctx.api("POST", `connections/${c.id}/complete`, params);
        if (mine !== asked) return;
        const values = answer.result?.completion?.values;
        list.replaceChildren(...(Array.isArray(values) ? values : []).slice(0, 100)
          .map((v) => el("option", { value: String(v) })));
      } catch (e) {
        console.warn("completion failed", e.message);
      }
    }, 150);
  });
  return list;
}
