// The official Tasks requester (@modelcontextprotocol/ext-tasks 0.2.2, on
// @modelcontextprotocol/client 2.x) against `tessera serve --http`, protocol
// 2025-11-25 (or the version given with --pin, e.g. 2026-07-28, with the
// requester's default result codec): a `sleep` call driven as a task to
// completion, and another one to cancellation. Prints PASS lines; exits 1
// with a FAIL line on any error.
//
//   node ext_tasks_client.mjs --url http://127.0.0.1:PORT/mcp [--pin 2026-07-28]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from "@modelcontextprotocol/ext-tasks/client";

function fail(msg) {
  console.error(`FAIL ${msg}`);
  process.exit(1);
}

const i = process.argv.indexOf("--url");
if (i < 0 || !process.argv[i + 1]) fail("usage: ext_tasks_client.mjs --url URL");
const url = new URL(process.argv[i + 1]);

const p = process.argv.indexOf("--pin");
const pin = p < 0 ? undefined : process.argv[p + 1];
const capabilities = pin ? { extensions: { "io.modelcontextprotocol/tasks": {} } } : {};
const client = new Client(
  { name: "ext-tasks-interop", version: "1.0.0" },
  pin ? { capabilities, versionNegotiation: { mode: { pin } } } : { capabilities },
);
await client.connect(new StreamableHTTPClientTransport(url));
const negotiated = client.getNegotiatedProtocolVersion();
if (pin && negotiated !== pin) fail(`negotiated ${negotiated}, not ${pin}`);
const caps = client.getServerCapabilities() ?? {};
// 2025-11-25 declares tasks.requests.tools.call; 2026-07-28 the extension.
const declared = pin
  ? caps.extensions?.["io.modelcontextprotocol/tasks"]
  : caps.tasks?.requests?.tools?.call;
if (!declared) fail(`no tasks support declared in ${JSON.stringify(caps)}`);

const { tools } = await client.listTools();
const sleep = tools.find((t) => t.name === "sleep");
if (!sleep) fail("the server lists no sleep tool");
// 2025-11-25 tools declare execution.taskSupport and the client asks for a
// task; at 2026-07-28 tools declare nothing and the server decides.
let options = {};
if (!pin) {
  const declaration = toolDeclarationFromMcpTool(sleep);
  if (declaration.taskSupport !== "optional") fail(`sleep taskSupport is ${declaration.taskSupport}`);
  options = { declaration, task: { preference: "require" } };
}

// At 2026-07-28 the requester sends tools/call and tasks/* itself (the SDK
// Client's codecs do not carry task shapes): `rawDispatch` POSTs one framed
// request to the endpoint with the Streamable HTTP headers of 2026-07-28 and
// returns the JSON-RPC response (a JSON body or the matching SSE event).
let nextId = 1_000_000;
async function rawDispatch(request, options = {}) {
  const body = { jsonrpc: "2.0", ...request, id: request.id ?? nextId++ };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": pin,
    "mcp-method": body.method,
  };
  // Mcp-Name mirrors the tool name (tools/call) or the task id (tasks/*).
  const name = body.method === "tools/call" ? body.params?.name : body.params?.taskId;
  if (typeof name === "string") headers["mcp-name"] = name;
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: options.signal,
  });
  const text = await res.text();
  if (process.env.EXT_TASKS_TRACE) console.error(`>> ${JSON.stringify(body)}\n<< ${res.status} ${text}`);
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text);
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    if (!data) continue;
    const msg = JSON.parse(data);
    if (msg.id === body.id) return msg;
  }
  throw new Error(`no response to ${body.method} in the SSE stream`);
}
const v2 = pin
  ? {
      rawDispatch,
      v2RequestFraming: {
        protocolVersion: pin,
        clientInfo: { name: "ext-tasks-interop", version: "1.0.0" },
        clientCapabilities: capabilities,
      },
    }
  : {};
const session = createTaskSessionFromClient(client, { endpointId: "tessera-interop", ...v2 });
try {
  // To completion.
  const done = await session.callTool("sleep", { ms: 300 }, options);
  if (done.kind !== "task") fail(`sleep 300 ran as ${done.kind}, not as a task`);
  const { outcome } = await done.settle();
  if (outcome.status !== "completed") fail(`sleep 300 ended ${outcome.status}: ${JSON.stringify(outcome)}`);
  const result = resultFromTaskOutcome(outcome);
  const text = result?.content?.[0]?.text;
  if (text !== "slept 300 ms") fail(`unexpected result ${JSON.stringify(result)}`);
  console.log(`PASS completed task ${done.handle.taskId}: ${text}`);

  // To cancellation.
  const long = await session.callTool("sleep", { ms: 60000 }, options);
  if (long.kind !== "task") fail(`sleep 60000 ran as ${long.kind}, not as a task`);
  await long.cancel();
  const settled = await long.settle();
  if (settled.outcome.status !== "cancelled") fail(`cancelled task ended ${settled.outcome.status}`);
  console.log(`PASS cancelled task ${long.handle.taskId}`);
} finally {
  await session.close();
  await client.close();
}
