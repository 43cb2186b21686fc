// The TypeScript SDK's skills client against a server URL: list, get, and
// read (verified) every file of every skill, and read every skill's root
// directory. Prints one line per check; exit 1 on failure.
//
//   node ts_skills_client.mjs URL [legacy|auto|2026-07-28]
// The second argument is the client's version negotiation: `legacy`
// (initialize, the default), `auto` (probe server/discover) or a version
// to pin (modern era, no fallback).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const url = process.argv[2];
const wanted = process.argv[3] ?? "legacy";
const mode = wanted === "legacy" || wanted === "auto" ? wanted : { pin: wanted };
const client = new Client(
  { name: "ts-skills-interop", version: "1.0.0" },
  { versionNegotiation: { mode } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const version = client.getNegotiatedProtocolVersion();
const modern = version === "2026-07-28";
if (wanted !== "legacy" && !modern) throw new Error(`negotiated ${version}, not 2026-07-28`);
const skills = new SkillsClient(client);
const listing = await skills.list();
if (listing.invalid.length > 0) throw new Error(`invalid entries: ${JSON.stringify(listing.invalid)}`);
if (listing.skills.length === 0) throw new Error("no skills listed");
let files = 0;
for (const s of listing.skills) {
  const { skill } = await skills.get(s.uri);
  if (JSON.stringify(skill) !== JSON.stringify(s)) throw new Error(`skills/get differs for ${s.uri}`);
  for (const r of s.resources) {
    const f = await skills.read(s, r.uri);
    if (!f.verified) throw new Error(`${r.uri} not verified`);
    files++;
  }
}
// Every skill's root directory: the client requires ttlMs/cacheScope on
// a 2026-07-28 page.
let dirs = 0;
if (!skills.directoryRead) throw new Error("the server did not declare directoryRead");
for (const s of listing.skills) {
  const root = s.uri.replace(/\/SKILL\.md$/, "");
  const dir = await skills.readDirectory(root);
  if (!dir.resources.some((r) => r.uri === s.uri)) throw new Error(`${root} lacks ${s.uri}`);
  if (modern && (typeof dir.ttlMs !== "number" || typeof dir.cacheScope !== "string")) {
    throw new Error(`${root}: no ttlMs/cacheScope on 2026-07-28: ${JSON.stringify(dir)}`);
  }
  dirs++;
}
console.log(`ok: ${listing.skills.length} skills, ${files} files verified, ${dirs} directories (${version})`);
await client.close();
