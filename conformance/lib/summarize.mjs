// Reads the checks.json files that `conformance server|client -o DIR` wrote and
// prints one verdict per scenario plus a closing `LABEL: N passed, M failed`.
// Used by run-server.sh and run-client.sh; exits 0 iff M = 0.
//
// node summarize.mjs --kind server|client --results DIR --label NAME
//                    [--cli-log FILE]...       suite output: which scenarios ran, which were n/a
//                    [--skip NAME=REASON]...   report as SKIP (not counted), e.g. bridge scenarios
//                    [--not-scored NAME]...    run and shown, never counted (--requirements)
//                    [--extension NAME]...     client: all-SKIPPED is a SKIP, not a FAIL
//                    [--expect NAME]...        must have produced a result (else FAIL)

import fs from "node:fs";
import path from "node:path";

const opts = { kind: null, results: null, label: null, cliLogs: [], skip: new Map(), notScored: new Set(), extension: new Set(), expect: new Set() };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => {
    if (i + 1 >= argv.length) throw new Error(`missing value for ${a}`);
    return argv[++i];
  };
  if (a === "--kind") opts.kind = v();
  else if (a === "--results") opts.results = v();
  else if (a === "--label") opts.label = v();
  else if (a === "--cli-log") opts.cliLogs.push(v());
  else if (a === "--skip") {
    const s = v();
    const eq = s.indexOf("=");
    opts.skip.set(eq < 0 ? s : s.slice(0, eq), eq < 0 ? "skipped" : s.slice(eq + 1));
  } else if (a === "--not-scored") opts.notScored.add(v());
  else if (a === "--extension") opts.extension.add(v());
  else if (a === "--expect") opts.expect.add(v());
  else throw new Error(`unknown argument ${a}`);
}
if (!["server", "client"].includes(opts.kind) || !opts.results || !opts.label) {
  console.error("usage: summarize.mjs --kind server|client --results DIR --label NAME [...]");
  process.exit(2);
}

// Folder names end in an ISO timestamp with ':' and '.' replaced: 2026-12-02T16-21-50-305Z.
const TS = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

// scenario name -> list of result folders (a scenario may run more than once)
const found = new Map();
function walk(dir, prefix) {
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const full = path.join(dir, e.name);
    if (TS.test(e.name)) {
      let name = prefix + e.name.replace(TS, "");
      if (opts.kind === "server") name = name.replace(/^server-/, "");
      if (!found.has(name)) found.set(name, []);
      found.get(name).push(full);
    } else {
      walk(full, `${prefix}${e.name}/`); // auth/<name>-<ts> for client scenarios
    }
  }
}
walk(opts.results, "");

// What the suite said it ran, and what it declared not applicable.
const started = [];
const notApplicable = new Set();
const crashed = new Map(); // scenario -> the suite's "Failed to run scenario" message
for (const file of opts.cliLogs) {
  let text = "";
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    continue;
  }
  for (const line of text.split("\n")) {
    let m = line.match(/^=== Running scenario: (\S+) ===/) || line.match(/^[✓✗] (\S+): \d+ passed, \d+ failed/);
    if (m && !started.includes(m[1])) started.push(m[1]);
    m = line.match(/SKIPPED: scenario '([^']+)' is not applicable/);
    if (m) notApplicable.add(m[1]);
    m = line.match(/^Failed to run scenario (\S+?): (.*)$/);
    if (m && !crashed.has(m[1])) crashed.set(m[1], m[2]);
  }
}

const names = [...new Set([...started, ...found.keys(), ...opts.expect])];

function loadChecks(dirs) {
  const checks = [];
  let missing = 0;
  for (const d of dirs) {
    const f = path.join(d, "checks.json");
    if (!fs.existsSync(f)) {
      missing++;
      continue;
    }
    const data = JSON.parse(fs.readFileSync(f, "utf8"));
    if (Array.isArray(data)) checks.push(...data);
  }
  return { checks, missing };
}

const oneLine = (s, max = 300) => {
  const t = String(s ?? "").replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
};

let passed = 0;
let failed = 0;
let skipped = 0;
const notScoredResults = [];

for (const name of names) {
  const dirs = found.get(name) ?? [];
  const { checks, missing } = loadChecks(dirs);
  const count = (st) => checks.filter((c) => c.status === st).length;
  const nSuccess = count("SUCCESS");
  const nFailure = count("FAILURE");
  const nWarning = count("WARNING");
  const nSkipped = count("SKIPPED");
  // Checks that say something about the implementation (the synthetic schema check does not on its own).
  const exercised = checks.filter((c) => ["SUCCESS", "FAILURE", "WARNING"].includes(c.status) && !String(c.id).startsWith("wire-schema"));
  const tally = `${nSuccess} ok, ${nFailure} failed, ${nWarning} warnings${nSkipped ? `, ${nSkipped} skipped` : ""}`;

  let verdict;
  let reason = "";
  if (opts.skip.has(name)) {
    verdict = "SKIP";
    reason = opts.skip.get(name);
  } else if (notApplicable.has(name) && checks.length === 0) {
    verdict = "SKIP";
    reason = "not applicable at this spec version";
  } else if (dirs.length === 0 || (checks.length === 0 && missing > 0)) {
    verdict = "FAIL";
    reason = dirs.length === 0 ? "no result folder (the scenario did not run or crashed)" : "no checks.json written";
    if (crashed.has(name)) reason = `the scenario aborted: ${oneLine(crashed.get(name), 200)}`;
  } else if (nFailure > 0 || (opts.kind === "client" && nWarning > 0)) {
    verdict = "FAIL";
  } else if (exercised.length === 0 && opts.kind === "server") {
    verdict = "SKIP";
    reason = "nothing exercised: every check SKIPPED/INFO (feature not offered)";
  } else if (opts.kind === "client" && nSuccess === 0) {
    if (opts.extension.has(name)) {
      verdict = "SKIP";
      reason = "extension not implemented: every check SKIPPED/INFO";
    } else {
      verdict = "FAIL";
      reason = "no check succeeded (the client never exercised the scenario)";
    }
  } else {
    verdict = "PASS";
  }

  if (opts.notScored.has(name) && verdict !== "SKIP") {
    notScoredResults.push(`${name}=${verdict === "PASS" ? "pass" : "fail"}`);
    reason = `not scored by the requirement set; it would ${verdict === "PASS" ? "pass" : "fail"}${reason ? `: ${reason}` : ""}`;
    verdict = "SKIP";
  }

  const shown = checks.length ? ` [${tally}]` : "";
  console.log(`${verdict} ${name}${reason ? ` (${reason})` : ""}${shown}`);
  for (const c of checks) {
    if (c.status === "FAILURE" || c.status === "WARNING") {
      console.log(`    ${c.status} ${c.id}: ${oneLine(c.errorMessage || c.description)}`);
    }
  }
  if (verdict === "PASS") passed++;
  else if (verdict === "FAIL") failed++;
  else skipped++;
}

if (names.length === 0) {
  console.log("FAIL suite (no scenario produced a result; see the suite output above)");
  failed++;
}
if (notScoredResults.length) console.log(`not scored (run, reported, never counted): ${notScoredResults.join(" ")}`);
console.log(`skipped scenarios: ${skipped}`);
console.log(`results: ${opts.results}`);
console.log(`${opts.label}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
