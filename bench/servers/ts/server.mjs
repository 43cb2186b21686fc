// The benchmark's `echo` server on the official MCP TypeScript SDK, written the
// way the SDK documents it (McpServer + StreamableHTTPServerTransport on
// node:http, no framework in between).
//
//   node server.mjs --stdio
//   node server.mjs --port PORT --stateful    one transport + McpServer per session, SSE responses
//   node server.mjs --port PORT --stateless   a fresh transport + McpServer per request (the SDK
//                                             requires that without sessions), JSON responses
//
// Listens on 127.0.0.1, endpoint /mcp.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function makeServer() {
  const server = new McpServer({ name: 'ts-echo', version: '0.0.0' });
  server.registerTool(
    'echo',
    { description: 'Sends the text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

function usage() {
  console.error('usage: node server.mjs --stdio | --port PORT --stateful|--stateless');
  process.exit(2);
}

const argv = process.argv.slice(2);
let port = null;
let stateful = true;
let stdio = false;
for (let i = 0; i < argv.length; i++) {
  switch (argv[i]) {
    case '--stdio': stdio = true; break;
    case '--port': port = Number(argv[++i]); break;
    case '--stateful': stateful = true; break;
    case '--stateless': stateful = false; break;
    default: usage();
  }
}

if (stdio) {
  await makeServer().connect(new StdioServerTransport());
} else {
  if (!Number.isInteger(port)) usage();
  const transports = new Map();

  function reply(res, status, message) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  }

  async function readJson(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (chunks.length === 0) return undefined;
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  }

  async function handleStateful(req, res) {
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (sid !== undefined) {
      const transport = transports.get(sid);
      if (!transport) return reply(res, 404, 'Session not found');
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(res, 400, 'Bad Request: no session');
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { transports.set(id, transport); },
    });
    transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
    await makeServer().connect(transport);
    return transport.handleRequest(req, res, body);
  }

  async function handleStateless(req, res) {
    if (req.method !== 'POST') return reply(res, 405, 'Method not allowed');
    const body = await readJson(req);
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }

  const handler = stateful ? handleStateful : handleStateless;
  const httpServer = http.createServer((req, res) => {
    if (!req.url.startsWith('/mcp')) return reply(res, 404, 'Not found');
    handler(req, res).catch((e) => {
      if (!res.headersSent) reply(res, 500, String(e));
      else res.end();
    });
  });
  httpServer.keepAliveTimeout = 120_000;
  httpServer.listen(port, '127.0.0.1', () => {
    console.error(`ts-echo: listening on http://127.0.0.1:${port}/mcp (${stateful ? 'stateful, SSE' : 'stateless, JSON'})`);
  });
  const stop = () => httpServer.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
