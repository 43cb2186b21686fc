// OAuth sign-in (the flow of `tessera login`, run by the inspector; the
// token goes to the same token file, so the CLI and later connections use
// it): a button, and what the `login` events say — the authorization page
// to open (never opened by the inspector itself), then signed in or failed.
import { el, fill } from "./dom.js";

// The button (for the URL in urlOf()) and the box showing the sign-in.
export function signIn(ctx, urlOf) {
  const box = el("div", { id: "srv-login", "aria-live": "polite" });
  const button = el("button", { id: "srv-signin", type: "button" }, "Sign in (OAuth)");
  let current = null;
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
      fill(box, el("p", { class: "meta" }, `Signing in to ${url} (the token goes to ${started.tokenFile})…`));
    } catch (e) {
      fill(box, el("p", { class: "bad", role: "alert" }, e.message));
      button.disabled = false;
    }
  });
  ctx.on("event:login", (e) => {
    if (e.login !== current) return;
    if (e.state === "authorize") {
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
  });
  return { button, box };
}
