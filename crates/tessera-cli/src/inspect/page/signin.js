// OAuth sign-in (the flow of `tessera login`, run by the inspector; the
// token goes to the same token file, so the CLI and later connections use
// it): a button, and what the `login` events say — the authorization page
// to open (never opened by the inspector itself), then signed in or failed;
// and the OAuth debugger: each step of the flow (discovery, registration,
// the authorization request, the token request, the MCP requests challenged
// and then sent with the token), its request and answer, and the rules it
// keeps or breaks. A sign-in's events may come before the answer naming it:
// they are kept (for the last few sign-ins) and shown once it is known.
import { el, fill, badge, json } from "./dom.js";

const MAX_STEPS = 100;
const MAX_KEPT = 4;

function checkList(checks) {
  return el("ul", { class: "checks" }, (checks || []).map((c) =>
    el("li", { class: c.ok ? "ok" : "bad", "data-ok": String(c.ok) }, c.ok ? "✓ " : "✗ ", `${c.rule} — ${c.detail}`)));
}

// The button (for the URL in urlOf()) and the box showing the sign-in.
export function signIn(ctx, urlOf) {
  const box = el("div", { id: "srv-login", "aria-live": "polite" });
  const steps = el("ol", { id: "srv-oauth-steps", class: "protocol", "aria-label": "OAuth sign-in steps" });
  const debug = el("details", { id: "srv-oauth-debug", hidden: true }, el("summary", {}, "OAuth debugger: each step of the sign-in"), steps);
  const step = (phase, title, checks, ...more) => {
    const failing = (checks || []).filter((c) => !c.ok).length;
    steps.append(el("li", { "data-phase": phase, "data-checks": failing ? "failing" : "ok" },
      el("details", {}, el("summary", {}, badge(phase, "era"), " ", el("span", { class: "label" }, title), " ",
        failing ? badge(`${failing} rule${failing > 1 ? "s" : ""} broken`, "bad") : badge("rules kept", "ok")),
      checkList(checks), ...more)));
    while (steps.children.length > MAX_STEPS) steps.firstChild.remove();
  };
  const button = el("button", { id: "srv-signin", type: "button" }, "Sign in (OAuth)");
  let current = null;
  const seen = new Map();
  const keep = (e) => {
    if (!seen.has(e.login)) {
      seen.set(e.login, []);
      while (seen.size > MAX_KEPT) seen.delete(seen.keys().next().value);
    }
    const list = seen.get(e.login);
    list.push(e);
    if (list.length > MAX_STEPS) list.shift();
  };
  button.addEventListener("click", async () => {
    const url = urlOf();
    if (!url) {
      ctx.status("Give the server's URL to sign in to.", "bad");
      return;
    }
    button.disabled = true;
    try {
      const started = await ctx.api("POST", "login", { url });
      current = started.login;
      fill(steps);
      debug.hidden = false;
      fill(box, el("p", { class: "meta" }, `Signing in to ${url} (the token goes to ${started.tokenFile})…`));
      for (const e of seen.get(current) || []) show(e);
    } catch (e) {
      fill(box, el("p", { class: "bad", role: "alert" }, e.message));
      button.disabled = false;
    }
  });
  const show = (e) => (e.type === "login" ? showLogin(e) : showHttp(e));
  const showLogin = (e) => {
    if (e.state === "authorize") {
      step("authorization", "the authorization request the user opens", e.checks, el("pre", { class: "text" }, String(e.url)));
      let href = null;
      try {
        const u = new URL(e.url);
        if (u.protocol === "https:" || u.protocol === "http:") href = u.href;
      } catch {
        // shown as text below
      }
      fill(box, el("p", {}, "Authorize in the authorization server's page: "),
        href ? el("a", { href, target: "_blank", rel: "noopener noreferrer", "data-role": "authorize" }, href)
          : el("code", {}, String(e.url)),
        el("p", { class: "meta" }, `Its host: ${href ? new URL(href).host : "?"}. The inspector waits up to five minutes.`));
    } else if (e.state === "signedIn") {
      button.disabled = false;
      fill(box, el("p", { class: "ok", "data-state": "signed-in" },
        e.stored ? `Signed in to ${e.server}${e.dpop ? " (DPoP-bound token)" : ""}: connect to use the token (${e.tools} tools).`
          : `${e.server} asked for no authorization (${e.tools} tools).`));
    } else if (e.state === "failed") {
      button.disabled = false;
      fill(box, el("p", { class: "bad", role: "alert" }, `Sign-in failed: ${e.error}`));
    }
  };
  const showHttp = (e) => {
    step(e.oauth, `${e.method} ${e.url} → ${e.status ?? e.error}`, e.checks,
      e.requestBody !== null && e.requestBody !== undefined ? [el("h4", {}, "Sent"), json(e.requestBody)] : null,
      e.responseBody !== null && e.responseBody !== undefined ? [el("h4", {}, "Answer"), json(e.responseBody)] : null);
  };
  const on = (e) => {
    if (e.login === undefined || e.login === null) return;
    keep(e);
    if (e.login === current) show(e);
  };
  ctx.on("event:login", on);
  ctx.on("event:http", on);
  return { button, box: el("div", {}, box, debug) };
}
