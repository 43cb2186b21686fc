// Rendering what a server returns: tool result content (text, images,
// audio, resource links, embedded resources) and resource contents. Data
// is shown as text; images and audio only from base64 with a media type of
// their kind.
import { el, fill, json, badge } from "./dom.js";
import { sandboxFrame, sandboxOrigin } from "./sandbox.js";

const MEDIA = /^[a-z]+\/[A-Za-z0-9.+-]+$/;

function dataUrl(kind, mime, data) {
  if (typeof mime !== "string" || !MEDIA.test(mime) || !mime.startsWith(`${kind}/`)) return null;
  if (typeof data !== "string" || !/^[A-Za-z0-9+/=\s]*$/.test(data)) return null;
  return `data:${mime};base64,${data.replace(/\s/g, "")}`;
}

export function renderContentBlock(block) {
  const type = block?.type;
  if (type === "text") return el("pre", { class: "text" }, block.text ?? "");
  if (type === "image") {
    const src = dataUrl("image", block.mimeType, block.data);
    return src ? el("img", { src, alt: `image (${block.mimeType})`, class: "media" })
      : el("p", { class: "bad" }, `image with an unusable media type or data (${block.mimeType})`);
  }
  if (type === "audio") {
    const src = dataUrl("audio", block.mimeType, block.data);
    return src ? el("audio", { src, controls: true, "aria-label": `audio (${block.mimeType})` })
      : el("p", { class: "bad" }, `audio with an unusable media type or data (${block.mimeType})`);
  }
  if (type === "resource_link") {
    return el("div", { class: "link" }, badge("resource link"), " ",
      el("code", {}, block.uri ?? ""), block.name ? ` ${block.name}` : "",
      block.description ? el("p", {}, block.description) : null);
  }
  if (type === "resource") {
    return el("div", { class: "embedded" }, badge("embedded resource"), renderResourceContents(block.resource || {}));
  }
  return el("div", {}, badge(`content type ${String(type)}`), json(block));
}

// One entry of a resources/read result (or an embedded resource). With
// opts.pdf(uri) (resolving to a path of the sandbox origin), a PDF can be
// shown in the browser's viewer, framed from that origin.
export function renderResourceContents(c, opts = {}) {
  const head = el("p", { class: "meta" }, el("code", {}, c.uri ?? ""), c.mimeType ? ` ${c.mimeType}` : "");
  const html = htmlOf(c);
  if (html !== null && sandboxOrigin()) {
    // Rendered in the sandbox origin, no script allowed; the source beside it.
    const view = sandboxFrame({ html, sandbox: "", title: `HTML of ${c.uri ?? "the resource"}` });
    view.frame.classList.add("html-view");
    return el("div", { class: "html-resource" }, head, badge("HTML, rendered in the sandbox without scripts"), view.frame,
      el("details", {}, el("summary", {}, "HTML source"), el("pre", { class: "text" }, html)));
  }
  if (typeof c.text === "string") {
    if (c.mimeType && /json/.test(c.mimeType)) {
      try {
        return el("div", {}, head, json(JSON.parse(c.text)));
      } catch {
        // shown as text below
      }
    }
    return el("div", {}, head, el("pre", { class: "text" }, c.text));
  }
  if (typeof c.blob === "string") {
    const image = dataUrl("image", c.mimeType, c.blob);
    if (image) return el("div", {}, head, el("img", { src: image, alt: c.uri ?? "image", class: "media" }));
    const audio = dataUrl("audio", c.mimeType, c.blob);
    if (audio) return el("div", {}, head, el("audio", { src: audio, controls: true, "aria-label": c.uri ?? "audio" }));
    const bytes = Math.floor((c.blob.length * 3) / 4);
    if (c.mimeType === "application/pdf" && opts.pdf && sandboxOrigin()) {
      const box = el("div", { class: "pdf-box" });
      const button = el("button", { type: "button", "data-action": "pdf", onclick: async () => {
        button.disabled = true;
        try {
          const path = await opts.pdf(c.uri);
          fill(box, el("iframe", { class: "pdf-view", src: `${sandboxOrigin()}${path}`, title: `PDF ${c.uri ?? ""}`,
            referrerpolicy: "no-referrer" }));
        } catch (e) {
          fill(box, el("p", { class: "bad", role: "alert" }, e.message));
          button.disabled = false;
        }
      } }, `Show the PDF (about ${bytes} bytes)`);
      return el("div", {}, head, badge("PDF, shown by the browser's viewer from the sandbox origin"), " ", button, box);
    }
    return el("div", {}, head, el("p", { class: "notice" }, `binary content, about ${bytes} bytes (not shown)`));
  }
  return el("div", {}, head, json(c));
}

// A tool result: its content blocks, structuredContent and the check of it.
export function renderToolResult(answer) {
  const r = answer.result || {};
  const parts = [];
  if (r.isError === true) parts.push(el("p", { class: "bad", role: "alert" }, "The tool reported an error."));
  for (const block of Array.isArray(r.content) ? r.content : []) parts.push(renderContentBlock(block));
  if (r.structuredContent !== undefined) {
    parts.push(el("h4", {}, "structuredContent"), json(r.structuredContent, { class: "json structured" }));
  }
  const check = answer.outputCheck;
  if (check && check.verdict !== "none") {
    const ok = check.verdict === "valid";
    parts.push(el("p", { class: `verdict ${ok ? "ok" : "bad"}`, "data-verdict": check.verdict },
      ok ? "structuredContent matches the outputSchema" : `outputSchema check: ${check.verdict}`,
      check.detail ? ` — ${check.detail}` : ""));
  }
  parts.push(el("details", {}, el("summary", {}, "Raw result"), json(r)));
  return parts;
}

// The HTML of a text/html resource (text, or base64 UTF-8), else null.
function htmlOf(c) {
  if (typeof c.mimeType !== "string" || !/^text\/html\s*(;|$)/i.test(c.mimeType)) return null;
  if (typeof c.text === "string") return c.text;
  if (typeof c.blob !== "string") return null;
  try {
    const bytes = Uint8Array.from(atob(c.blob.replace(/\s/g, "")), (ch) => ch.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
