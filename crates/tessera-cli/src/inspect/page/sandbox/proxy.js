// The MCP Apps sandbox proxy of tessera inspect, served from its own origin
// (a second loopback port). It tells the inspector's page it is ready, takes
// the view's HTML from `ui/notifications/sandbox-resource-ready`, renders it
// in an inner iframe without allow-same-origin (an opaque origin, under this
// page's Content-Security-Policy, which the srcdoc frame inherits), and relays
// every other JSON-RPC message between the page and the view. It sends no
// request of its own.
"use strict";
(() => {
  const host = new URLSearchParams(location.search).get("host") || "";
  // The inner frame may run scripts and submit forms in its own opaque
  // origin; nothing else is ever granted, whatever the page asks.
  const ALLOWED = new Set(["allow-scripts", "allow-forms"]);
  const MAX_HTML = 8 * 1024 * 1024;
  let inner = null;
  const reserved = (m) => typeof m?.method === "string" && m.method.startsWith("ui/notifications/sandbox-");

  const load = (params) => {
    if (inner || typeof params?.html !== "string" || params.html.length > MAX_HTML) return;
    inner = document.createElement("iframe");
    const asked = typeof params.sandbox === "string" ? params.sandbox : "allow-scripts allow-forms";
    const tokens = asked.split(/\s+/).filter((t) => ALLOWED.has(t));
    inner.setAttribute("sandbox", tokens.join(" "));
    inner.setAttribute("title", "app view");
    inner.srcdoc = params.html;
    document.body.append(inner);
  };

  window.addEventListener("message", (event) => {
    const m = event.data;
    if (event.source === window.parent && event.origin === host) {
      if (m?.method === "ui/notifications/sandbox-resource-ready") load(m.params);
      else if (!reserved(m) && inner) inner.contentWindow.postMessage(m, "*");
    } else if (inner && event.source === inner.contentWindow) {
      if (!reserved(m)) window.parent.postMessage(m, host);
    }
  });
  if (host) {
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
  }
})();
