// The sandbox of MCP Apps views and HTML resources: a frame of the
// inspector's second origin (its own port), which runs the sandbox proxy.
// The proxy takes the HTML in `ui/notifications/sandbox-resource-ready` and
// renders it in an inner frame of an opaque origin, under the Content-
// Security-Policy the inspector built from the view's declaration; the
// JSON-RPC messages of the view come back here.
import { el } from "./dom.js";

let port = null;

// Called once /api/info has named the sandbox's port.
export function setSandboxPort(p) {
  port = p;
}

// The sandbox's origin: this page's host name, the sandbox's port.
export function sandboxOrigin() {
  return port ? `${location.protocol}//${location.hostname}:${port}` : null;
}

// A sandbox frame rendering `html`. `csp` is the view's declared policy (as
// its _meta.ui.csp), `sandbox` the inner frame's sandbox tokens (the proxy
// grants at most "allow-scripts allow-forms"; "" runs no script).
// onMessage(message) receives each message of the view. Returns {frame,
// post(message), close()}.
export function sandboxFrame({ html, csp, permissions, sandbox, title, onMessage }) {
  const origin = sandboxOrigin();
  if (!origin) throw new Error("the app sandbox is not known yet");
  const q = new URLSearchParams({ host: location.origin });
  if (csp) q.set("csp", JSON.stringify(csp));
  const frame = el("iframe", {
    src: `${origin}/proxy.html?${q}`,
    sandbox: "allow-scripts allow-same-origin",
    title,
    referrerpolicy: "no-referrer",
    class: "app-frame",
  });
  const listener = (event) => {
    if (!frame.isConnected) {
      window.removeEventListener("message", listener);
      return;
    }
    if (event.source !== frame.contentWindow || event.origin !== origin) return;
    const m = event.data;
    if (m?.method === "ui/notifications/sandbox-proxy-ready") {
      const params = { html, csp, permissions };
      if (typeof sandbox === "string") params.sandbox = sandbox;
      frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params }, origin);
      return;
    }
    onMessage?.(m);
  };
  window.addEventListener("message", listener);
  return {
    frame,
    post: (m) => frame.contentWindow?.postMessage(m, origin),
    close: () => {
      window.removeEventListener("message", listener);
      frame.remove();
    },
  };
}
