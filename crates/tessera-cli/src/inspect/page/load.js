// The load panel of a tool: run `tessera bench` on it from the page (its
// own connection, so the protocol log stays readable) and plot the rate and
// the latency of each half second as it goes.
import { el, fill, field, json } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

// A small line chart of [t, value] points, with its label and latest value.
function chart(label, unit, points) {
  const w = 420;
  const h = 120;
  const max = Math.max(1e-9, ...points.map(([, v]) => v));
  const tmax = Math.max(1, ...points.map(([t]) => t));
  const line = svg("polyline", {
    fill: "none", stroke: "currentColor", "stroke-width": 2,
    points: points.map(([t, v]) => `${(t / tmax) * (w - 10) + 5},${h - 5 - (v / max) * (h - 20)}`).join(" "),
  });
  const chartNode = svg("svg", { viewBox: `0 0 ${w} ${h}`, width: w, height: h, role: "img",
    "aria-label": `${label}: latest ${points.length ? points[points.length - 1][1].toFixed(1) : "none"} ${unit}` });
  chartNode.append(svg("rect", { x: 0, y: 0, width: w, height: h, fill: "none", stroke: "#d5d8de" }), line);
  const last = points.length ? points[points.length - 1][1] : null;
  return el("figure", { class: "chart" }, chartNode,
    el("figcaption", {}, `${label}: ${last === null ? "–" : last.toFixed(1)} ${unit} (max ${max.toFixed(1)})`));
}

// The panel shown (one at a time: the selected tool's).
let active = null;

// Hands the load events to the panel shown; called once.
export function initLoad(ctx) {
  ctx.on("event:load", (e) => {
    if (active && e.run === active.run()) active.onTick(e);
  });
  ctx.on("event:loadDone", (e) => {
    if (active && e.run === active.run()) active.onDone(e);
  });
}

export function loadPanel(ctx, tool, readArgs) {
  let run = null;
  let points = [];
  const concurrency = el("input", { type: "number", id: "load-concurrency", min: 1, max: 32, value: 4 });
  const seconds = el("input", { type: "number", id: "load-seconds", min: 0.5, max: 60, step: "any", value: 5 });
  const start = el("button", { type: "button", id: "load-start" }, "Start");
  const stop = el("button", { type: "button", id: "load-stop", disabled: true }, "Stop");
  const charts = el("div", { id: "load-charts", class: "row" });
  const summary = el("div", { id: "load-summary", "aria-live": "polite" });
  const draw = () => fill(charts,
    chart("Requests per second", "req/s", points.map((p) => [p.t, p.reqPerSec])),
    chart("p95 latency", "ms", points.map((p) => [p.t, p.p95Ms ?? 0])));

  start.addEventListener("click", async () => {
    const c = ctx.conn();
    if (!c) return;
    let args;
    try {
      args = readArgs();
    } catch (e) {
      fill(summary, el("p", { class: "bad", role: "alert" }, e.message));
      return;
    }
    points = [];
    draw();
    fill(summary, el("p", { class: "meta" }, "Running…"));
    try {
      const answer = await ctx.api("POST", `connections/${c.id}/load`, {
        name: tool.name, arguments: args, concurrency: Number(concurrency.value), seconds: Number(seconds.value),
      });
      run = answer.run;
      start.disabled = true;
      stop.disabled = false;
    } catch (e) {
      fill(summary, el("p", { class: "bad", role: "alert" }, e.message));
    }
  });
  stop.addEventListener("click", async () => {
    if (run === null) return;
    try {
      await ctx.api("POST", `load/${run}/stop`);
    } catch (e) {
      ctx.status(e.message, "bad");
    }
  });
  active = {
    run: () => run,
    onTick(e) {
      points.push(e);
      if (points.length > 240) points.shift();
      draw();
    },
    onDone(e) {
      run = null;
      start.disabled = false;
      stop.disabled = true;
      if (e.error) {
        fill(summary, el("p", { class: e.error === "stopped" ? "notice" : "bad" }, `Load run: ${e.error}`));
        return;
      }
      const s = e.summary;
      const l = s.latencyMs || {};
      fill(summary, el("p", { id: "load-done" },
        `${s.requests} requests in ${s.durationSecs.toFixed(1)} s: ${s.reqPerSec.toFixed(1)} req/s, `
        + `${s.ok} ok; latency p50 ${l.p50 ?? "–"} ms, p99 ${l.p99 ?? "–"} ms, max ${l.max ?? "–"} ms`),
      Object.keys(s.errors || {}).length ? json(s.errors) : null);
    },
  };
  return el("details", { class: "load" }, el("summary", {}, "Load test (tessera bench)"),
    el("div", { class: "row" }, field("Concurrent calls", concurrency), field("Seconds", seconds), start, stop),
    charts, summary);
}
