#!/usr/bin/env bash
# What a refused oversize JSON-RPC batch costs the server in memory, side by side for several
# tessera binaries in one run.
#
#   bench/batch_memory.sh [--calls N] [--parallel P] NAME=BINARY [NAME=BINARY ...]
#
# For each binary: starts `BINARY serve --http 127.0.0.1:PORT` (the reference server, in-memory
# store) on a free loopback port, opens a 2025-03-26 session (the version with batches), then
#   1. posts one batch of N `tools/call echo` requests (default 34,000, about 4 MB), far over the
#      server's --max-batch (100), and
#   2. posts P such batches at once (default 6),
# and prints the server's RSS (VmRSS) before, after each step, and its peak (VmHWM), in MB. Every
# batch must be refused (HTTP 400); the script checks it. Loopback only; bounded (each request
# has a 120 s timeout); stops the servers it started.
set -euo pipefail

CALLS=34000
PARALLEL=6
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) CALLS="$2"; shift ;;
    --parallel) PARALLEL="$2"; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *=*) TARGETS+=("$1") ;;
    *) echo "batch_memory.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ ${#TARGETS[@]} -gt 0 ] || { echo "batch_memory.sh: name at least one NAME=BINARY" >&2; exit 2; }

printf '| binary | RSS before | after 1 batch | after %s at once | peak (VmHWM) | refused |\n' "$PARALLEL"
printf '|---|---:|---:|---:|---:|---|\n'
for target in "${TARGETS[@]}"; do
  name="${target%%=*}"
  bin="${target#*=}"
  [ -x "$bin" ] || { echo "batch_memory.sh: $bin is not an executable" >&2; exit 2; }
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  "$bin" serve --http "127.0.0.1:$port" >/dev/null 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  python3 - "$name" "$pid" "$port" "$CALLS" "$PARALLEL" <<'PY'
import http.client, json, sys, threading, time

name, pid, port, calls, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

def rss(field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")

deadline = time.time() + 20
while True:
    try:
        http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
        break
    except OSError:
        if time.time() > deadline:
            sys.exit(f"{name}: the server did not listen within 20 s")
        time.sleep(0.05)

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

def post(body, sid=None, version=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    h = dict(HEADERS)
    if sid:
        h["mcp-session-id"] = sid
    if version:
        h["mcp-protocol-version"] = version
    try:
        c.request("POST", "/mcp", body=body, headers=h)
        r = c.getresponse()
        data = r.read()
    except OSError as e:
        return f"connection error: {e}", None, b""
    return r.status, r.getheader("mcp-session-id"), data

init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
status, sid, _ = post(json.dumps(init))
assert status == 200 and sid, f"{name}: initialize got {status}"
post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), sid, "2025-03-26")
text = "x" * 20
batch = json.dumps([{"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": text}}} for i in range(calls)],
                   separators=(",", ":"))
if len(batch) > 4 * 1024 * 1024:
    sys.exit(f"{name}: the batch is {len(batch)} bytes, over the server's 4 MiB body limit; use fewer --calls")
time.sleep(0.5)
before = rss()
statuses = []
statuses.append(post(batch, sid, "2025-03-26")[0])
time.sleep(0.5)
after_one = rss()
threads = [threading.Thread(target=lambda: statuses.append(post(batch, sid, "2025-03-26")[0]))
           for _ in range(parallel)]
for t in threads:
    t.start()
for t in threads:
    t.join()
time.sleep(0.5)
after_many = rss()
peak = rss("VmHWM")
refused = all(s == 400 for s in statuses)
print(f"| {name} ({len(batch) / 1e6:.1f} MB batch) | {before:.1f} | {after_one:.1f} (+{after_one - before:.1f}) "
      f"| {after_many:.1f} (+{after_many - before:.1f}) | {peak:.1f} (+{peak - before:.1f}) "
      f"| {'all 400' if refused else statuses} |")
PY
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  trap - EXIT
done
