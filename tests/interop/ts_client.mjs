#!/usr/bin/env node
// Interop client built on the official TypeScript MCP SDK.
//
// It spawns an MCP server over stdio, performs the initialize handshake,
// lists the tools and calls two of them, checking every answer. Any mismatch
// ends the process with exit code 1 and a message that names the request and
// shows what came back on the wire.
//
// Usage:
//   node ts_client.mjs [--profile tessera|everything] [--timeout-ms N] -- CMD [ARGS...]
//   node ts_client.mjs [--profile ...] --url http://HOST:PORT/mcp       (Streamable HTTP)
//   node ts_client.mjs [--profile ...] --sse-url http://HOST:PORT/sse   (legacy HTTP+SSE)
//
// Profiles describe what the server under test is expected to offer:
//   tessera     tools `echo` {text} -> same text, `add` {a,b} -> "5"   (default)
//   everything  @modelcontextprotocol/server-everything: `echo` {message} -> "Echo: ...",
//               `get-sum` {a,b} -> a sentence containing 5. Used as a control
//               to prove the harness itself works.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

// Protocol versions that tessera implements with the initialize handshake.
const TESSERA_HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const PROFILES = {
  tessera: {
    versions: TESSERA_HANDSHAKE_VERSIONS,
    echo: { tool: "echo", args: { text: "hello from ts" }, expect: (t) => t === "hello from ts", want: '"hello from ts"' },
    sum: { tool: "add", args: { a: 2, b: 3 }, expect: (t) => t === "5", want: '"5"' },
  },
  everything: {
    versions: TESSERA_HANDSHAKE_VERSIONS,
    echo: {
      tool: "echo",
      args: { message: "hello from ts" },
      expect: (t) => t === "Echo: hello from ts",
      want: '"Echo: hello from ts"',
    },
    sum: { tool: "get-sum", args: { a: 2, b: 3 }, expect: (t) => /\b5\b/.test(t), want: "a text containing 5" },
  },
};

function usage(msg) {
  if (msg) console.error(`ts_client: ${msg}`);
  console.error("usage: node ts_client.mjs [--profile tessera|everything] [--timeout-ms N] -- CMD [ARGS...]");
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { profile: "tessera", timeoutMs: 15000, command: null };
  let i = 0;
  while (i < argv.length) {
    const a = argv[i];
    if (a === "--") {
      opts.command = argv.slice(i + 1);
      break;
    } else if (a === "--url") {
      opts.url = argv[++i];
    } else if (a === "--sse-url") {
      opts.sseUrl = argv[++i];
    } else if (a === "--profile") {
      opts.profile = argv[++i];
    } else if (a === "--timeout-ms") {
      opts.timeoutMs = Number(argv[++i]);
    } else {
      usage(`unknown argument ${JSON.stringify(a)}`);
    }
    i++;
  }
  if (!opts.url && !opts.sseUrl && (!opts.command || opts.command.length === 0)) {
    usage("missing server command after -- (or --url URL for Streamable HTTP, --sse-url URL for HTTP+SSE)");
  }
  if (!PROFILES[opts.profile]) usage(`unknown profile ${JSON.stringify(opts.profile)}`);
  if (!(opts.timeoutMs > 0)) usage("--timeout-ms must be a positive number");
  return opts;
}

// Wraps a transport and remembers every JSON-RPC message in both directions,
// so a failure can show exactly what was sent and what came back.
class RecordingTransport {
  constructor(inner) {
    this.inner = inner;
    this.log = [];
    this.onmessage = undefined;
    this.onclose = undefined;
    this.onerror = undefined;
    inner.onmessage = (msg, extra) => {
      this.log.push({ dir: "<-", msg });
      this.onmessage?.(msg, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (err) => this.onerror?.(err);
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  async start() {
    return this.inner.start();
  }
  async send(msg, options) {
    this.log.push({ dir: "->", msg });
    return this.inner.send(msg, options);
  }
  async close() {
    return this.inner.close();
  }
  // Response received for the request with the given id, if any.
  responseTo(id) {
    const hit = this.log.find((e) => e.dir === "<-" && e.msg.id === id && ("result" in e.msg || "error" in e.msg));
    return hit ? hit.msg : undefined;
  }
  // The last request sent with the given method, if any.
  lastRequest(method) {
    const hits = this.log.filter((e) => e.dir === "->" && e.msg.method === method && e.msg.id !== undefined);
    return hits.length ? hits[hits.length - 1].msg : undefined;
  }
}

class CheckFailure extends Error {}

function clip(value, max = 2000) {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  if (s === undefined) return String(value);
  return s.length > max ? `${s.slice(0, max)}... (${s.length} chars)` : s;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const profile = PROFILES[opts.profile];
  const [command, ...args] = opts.command || [];

  const stdio = opts.url
    ? new StreamableHTTPClientTransport(new URL(opts.url))
    : opts.sseUrl
      ? new SSEClientTransport(new URL(opts.sseUrl))
      : new StdioClientTransport({ command, args, stderr: "pipe", env: { ...process.env } });
  let serverStderr = "";
  stdio.stderr?.on("data", (chunk) => {
    serverStderr += chunk.toString();
    if (serverStderr.length > 20000) serverStderr = serverStderr.slice(-20000);
  });
  const transport = new RecordingTransport(stdio);
  const client = new Client({ name: "tessera-interop-ts", version: "0.0.0" }, { capabilities: {} });
  const reqOpts = { timeout: opts.timeoutMs };

  // Describes the wire exchange of `method` for a failure message.
  const wire = (method) => {
    const req = transport.lastRequest(method);
    if (!req) return `  no ${method} request was sent`;
    const resp = transport.responseTo(req.id);
    return `  sent:     ${clip(req)}\n  received: ${resp ? clip(resp) : "(no response)"}`;
  };
  const fail = (step, method, why) => {
    throw new CheckFailure(`${step}: ${why}\n${wire(method)}`);
  };
  const textOf = (result) => {
    const content = Array.isArray(result?.content) ? result.content : [];
    const texts = content.filter((c) => c && c.type === "text").map((c) => c.text);
    return texts.length === 1 ? texts[0] : null;
  };

  let step = "initialize";
  try {
    try {
      await client.connect(transport, reqOpts);
    } catch (err) {
      fail(step, "initialize", `handshake failed: ${err?.message ?? err}`);
    }
    const initResp = transport.responseTo(transport.lastRequest("initialize")?.id);
    const negotiated = initResp?.result?.protocolVersion;
    if (!profile.versions.includes(negotiated)) {
      fail(step, "initialize", `negotiated protocolVersion ${JSON.stringify(negotiated)} is not one of ${profile.versions.join(", ")}`);
    }
    const info = client.getServerVersion();
    console.log(`ok   initialize: protocolVersion ${negotiated}, server ${info?.name ?? "?"} ${info?.version ?? "?"}`);

    step = "tools/list";
    let tools;
    try {
      tools = (await client.listTools({}, reqOpts)).tools;
    } catch (err) {
      fail(step, "tools/list", `request failed: ${err?.message ?? err}`);
    }
    for (const name of [profile.echo.tool, profile.sum.tool]) {
      const tool = tools.find((t) => t.name === name);
      if (!tool) fail(step, "tools/list", `tool ${JSON.stringify(name)} is missing (got: ${tools.map((t) => t.name).join(", ")})`);
      const schema = tool.inputSchema;
      if (!schema || typeof schema !== "object" || schema.type !== "object") {
        fail(step, "tools/list", `tool ${JSON.stringify(name)} has no object inputSchema (got ${clip(schema)})`);
      }
    }
    console.log(`ok   tools/list: ${tools.length} tools, ${profile.echo.tool} and ${profile.sum.tool} have an inputSchema`);

    for (const check of [profile.echo, profile.sum]) {
      step = `tools/call ${check.tool}`;
      let result;
      try {
        result = await client.callTool({ name: check.tool, arguments: check.args }, undefined, reqOpts);
      } catch (err) {
        fail(step, "tools/call", `request failed: ${err?.message ?? err}`);
      }
      if (result.isError) fail(step, "tools/call", "result has isError: true");
      const text = textOf(result);
      if (text === null) fail(step, "tools/call", "expected exactly one text content block");
      if (!check.expect(text)) fail(step, "tools/call", `expected text ${check.want}, got ${JSON.stringify(text)}`);
      console.log(`ok   ${step} ${JSON.stringify(check.args)} -> ${JSON.stringify(text)}`);
    }
  } catch (err) {
    const msg = err instanceof CheckFailure ? err.message : `${step}: unexpected error: ${err?.stack ?? err}`;
    console.error(`FAIL ${msg}`);
    if (serverStderr.trim()) console.error(`--- server stderr (tail) ---\n${serverStderr.trim().split("\n").slice(-15).join("\n")}`);
    await client.close().catch(() => {});
    process.exit(1);
  }
  await client.close();
  console.log("all checks passed");
}

main().catch((err) => {
  console.error(`FAIL internal error: ${err?.stack ?? err}`);
  process.exit(1);
});
