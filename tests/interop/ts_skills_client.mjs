// The TypeScript SDK's skills client against a server URL: list, get, and
// read (verified) every file of every skill. Prints one line per check; exit 1 on failure.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const url = process.argv[2];
const client = new Client({ name: "ts-skills-interop", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
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
console.log(`ok: ${listing.skills.length} skills, ${files} files verified`);
await client.close();
