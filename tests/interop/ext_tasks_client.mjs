// The official Tasks requester (@modelcontextprotocol/ext-tasks 0.2.2, on
// @modelcontextprotocol/client 2.x) against `tessera serve --http`, protocol
// 2025-11-25: a `sleep` call driven as a task to completion, and another one
// to cancellation. Prints PASS lines; exits 1 with a FAIL line on any error.
//
//   node ext_tasks_client.mjs --url http://127.0.0.1:PORT/mcp
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

const client = new Client({ name: "ext-tasks-interop", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(url));
const caps = client.getServerCapabilities() ?? {};
if (!caps.tasks?.requests?.tools?.call) fail(`no tasks.requests.tools.call in ${JSON.stringify(caps)}`);

const { tools } = await client.listTools();
const sleep = tools.find((t) => t.name === "sleep");
if (!sleep) fail("the server lists no sleep tool");
const declaration = toolDeclarationFromMcpTool(sleep);
if (declaration.taskSupport !== "optional") fail(`sleep taskSupport is ${declaration.taskSupport}`);
const options = { declaration, task: { preference: "require" } };

const session = createTaskSessionFromClient(client, { endpointId: "tessera-interop" });
try {
  // To completion.
  const done = await session.callTool("sleep", { ms: 300 }, options);
  if (done.kind !== "task") fail(`sleep 300 ran as ${done.kind}, not as a task`);
  const { outcome } = await done.settle();
  if (outcome.status !== "completed") fail(`sleep 300 ended ${outcome.status}`);
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
