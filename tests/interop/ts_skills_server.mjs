// The TypeScript SDK's skills server on stdio, serving the skills under argv[2].
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node";

const mcp = new McpServer({ name: "ts-skills-interop", version: "1.0.0" });
const skills = await loadSkills(process.argv[2]);
skills.attach(mcp);
await mcp.connect(new StdioServerTransport());
