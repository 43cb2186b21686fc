#!/usr/bin/env bash
# Regenerates crates/tessera-cli/link/start-up.order, the list of functions that
# crates/tessera-cli/build.rs hands to LLD (`--symbol-ordering-file`) so that the release
# `tessera` keeps the code its start-up runs together at the front of `.text` (issue 27: the
# kernel maps text around each page fault, so start-up code spread over the whole binary made
# most of a stdio server's RSS).
#
#   bench/start_order.sh [--check] [--no-http] [--calls N]
#
# 1. Builds the release `tessera` with its symbol table kept:
#      cargo rustc --release -p tessera-cli --bin tessera -- -C strip=none
#    The release profile itself, so the same code and the same symbol names as `cargo build
#    --release`. (Not the `profiling` profile: cargo's `-C metadata` hashes the profile's debuginfo
#    and strip settings, and that hash is part of every Rust symbol name, so a `profiling` build
#    names its functions differently.) The binary is copied to $OUT_DIR/tessera-symbols.
# 2. Prints how many names of the checked-in order file that build still has (staleness).
#    With --check, stops here.
# 3. Runs, under valgrind --tool=callgrind (--dump-every-bb, which gives the first-use order to
#    within a few thousand basic blocks): `tessera serve --stdio` from exec to the answers of
#    `initialize`, `tools/list` and N (default 3) `tools/call echo`, then stdin closes; and,
#    unless --no-http, `tessera serve --http` for one legacy session (`initialize`, `initialized`,
#    one `tools/call echo`) and SIGTERM. Writes the order file: the stdio functions in first-use
#    order, then the functions only the HTTP run added.
#
# The names carry hashes that change when the code, a dependency or the compiler changes, so
# the file goes stale; LLD skips names it does not find (`--no-warn-symbol-ordering`). A stale
# name costs RSS (its function is placed wherever LLD would put it anyway), never correctness:
# rerun this after a toolchain or dependency update, or when the staleness report drops.
#
# Environment: TESSERA_TARGET_DIR (default bench/target/tessera), OUT_DIR (default
# $TESSERA_TARGET_DIR/start-order), TESSERA_BIN (an unstripped release `tessera` to use instead
# of building one), ORDER_FILE (default the checked-in file). Needs valgrind (not for --check),
# python3, nm.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
TESSERA_TARGET_DIR="${TESSERA_TARGET_DIR:-$BENCH/target/tessera}"
OUT_DIR="${OUT_DIR:-$TESSERA_TARGET_DIR/start-order}"
ORDER="${ORDER_FILE:-$ROOT/crates/tessera-cli/link/start-up.order}"
CHECK=0
HTTP=1
CALLS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --check) CHECK=1 ;;
    --no-http) HTTP=0 ;;
    --calls) CALLS="$2"; shift ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "start_order.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

die() { printf 'start order: ERROR: %s\n' "$*" >&2; exit 2; }
say() { printf 'start order: %s\n' "$*" >&2; }
command -v python3 >/dev/null || die "python3 is missing"
command -v nm >/dev/null || die "nm (binutils) is missing"
if [ "$CHECK" = 0 ]; then
  command -v valgrind >/dev/null || die "valgrind is not installed (or pass --check)"
fi
mkdir -p "$OUT_DIR"

BIN="$OUT_DIR/tessera-symbols"
if [ -n "${TESSERA_BIN:-}" ]; then
  cp "$TESSERA_BIN" "$BIN"
else
  say "building the release tessera with symbols into $TESSERA_TARGET_DIR (fat LTO: long)"
  (cd "$ROOT" && CARGO_TARGET_DIR="$TESSERA_TARGET_DIR" \
    cargo rustc -q --release -p tessera-cli --bin tessera -- -C strip=none) \
    || die "building tessera failed"
  cp "$TESSERA_TARGET_DIR/release/tessera" "$BIN"
fi
nm --defined-only "$BIN" 2>/dev/null | awk '{print $3}' | sort -u >"$OUT_DIR/symbols.txt"
[ -s "$OUT_DIR/symbols.txt" ] || die "$BIN has no symbol table (stripped?)"

# staleness FILE: how many of FILE's names the build has.
staleness() {
  local listed found
  listed=$(grep -v '^#' "$1" | grep -c . || true)
  found=$(grep -v '^#' "$1" | sort -u | comm -12 - "$OUT_DIR/symbols.txt" | wc -l)
  say "$(basename "$1"): $found of $listed listed names are in this build ($((listed - found)) stale)"
}
if [ -f "$ORDER" ]; then staleness "$ORDER"; else say "no $ORDER yet"; fi
[ "$CHECK" = 1 ] && exit 0

CG=(valgrind --tool=callgrind --demangle=no --compress-strings=no --dump-every-bb=5000
  --trace-children=no)

say "callgrind: serve --stdio, initialize + tools/list + $CALLS tools/call echo"
rm -f "$OUT_DIR"/stdio.cg*
python3 - "$CALLS" "${CG[@]}" --callgrind-out-file="$OUT_DIR/stdio.cg" "$BIN" serve --stdio \
  2>"$OUT_DIR/stdio.log" <<'PY' || die "the stdio run failed (see $OUT_DIR/stdio.log)"
import json, subprocess, sys

calls, cmd = int(sys.argv[1]), sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()

def request(i, method, params):
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    for line in p.stdout:
        v = json.loads(line)
        if v.get("id") == i:
            if "result" not in v:
                sys.exit(f"{method} failed: {line}")
            return v["result"]
    sys.exit(f"no answer to {method}")

request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "start-order", "version": "0"}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
request(2, "tools/list", {})
for i in range(calls):
    request(3 + i, "tools/call", {"name": "echo", "arguments": {"text": f"hello {i}"}})
p.stdin.close()
sys.exit(p.wait())
PY

if [ "$HTTP" = 1 ]; then
  say "callgrind: serve --http, one session: initialize + initialized + tools/call echo"
  rm -f "$OUT_DIR"/http.cg*
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 - "$port" "${CG[@]}" --callgrind-out-file="$OUT_DIR/http.cg" "$BIN" serve \
    --http "127.0.0.1:$port" 2>"$OUT_DIR/http.log" <<'PY' || die "the HTTP run failed (see $OUT_DIR/http.log)"
import json, signal, socket, subprocess, sys, time, urllib.request

port, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}/mcp"
deadline = time.time() + 120
while True:
    try:
        socket.create_connection(("127.0.0.1", int(port)), 0.5).close()
        break
    except OSError:
        if time.time() > deadline or p.poll() is not None:
            p.kill()
            sys.exit("the server did not start listening")
        time.sleep(0.1)

session = None
def post(msg):
    global session
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-11-25"
    req = urllib.request.Request(url, json.dumps(msg).encode(), headers)
    with urllib.request.urlopen(req, timeout=120) as r:
        session = session or r.headers.get("Mcp-Session-Id")
        return r.status, r.read()

try:
    post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "start-order", "version": "0"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    status, body = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": "hello"}}})
    if b"hello" not in body:
        sys.exit(f"tools/call failed: {status} {body[:200]!r}")
finally:
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
PY
fi

# The functions of the binary in each dump (parts in time order, the final dump last), first
# use first; names as the symbol table has them (callgrind adds 'N to recursive calls).
mkdir -p "$(dirname "$ORDER")"
python3 - "$BIN" "$ORDER" "$CALLS" "$OUT_DIR" "$HTTP" <<'PY'
import glob, os, re, sys

binary, order, calls, out, http = sys.argv[1:6]
symbols = set(open(os.path.join(out, "symbols.txt")).read().split())

def part(path):
    m = re.search(r"\.cg\.(\d+)$", path)
    return int(m.group(1)) if m else 1 << 30

def first_use(prefix):
    names = []
    seen = set()
    for path in sorted(glob.glob(os.path.join(out, prefix + ".cg*")), key=part):
        ob = None
        for line in open(path, errors="replace"):
            if line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("fn=") and ob and os.path.basename(ob) == os.path.basename(binary):
                name = re.sub(r"'\d+$", "", line[3:].strip())
                if name in symbols and name not in seen:
                    seen.add(name)
                    names.append(name)
    return names

stdio = first_use("stdio")
http_only = []
if http == "1":
    s = set(stdio)
    http_only = [n for n in first_use("http") if n not in s]
with open(order, "w") as f:
    f.write("# Functions `tessera serve --stdio` runs from exec to the answers of `initialize`,\n")
    f.write(f"# `tools/list` and {calls} `tools/call echo`, in first-use order; then those one\n")
    f.write("# `tessera serve --http` session adds. Generated by bench/start_order.sh from the\n")
    f.write("# release build; LLD places them first in `.text` (crates/tessera-cli/build.rs).\n")
    f.write("# Stale names (changed hashes) are skipped by the linker: they cost RSS, not\n")
    f.write("# correctness. Do not edit by hand.\n")
    for n in stdio + http_only:
        f.write(n + "\n")
print(f"start order: wrote {order}: {len(stdio)} stdio functions, {len(http_only)} more for HTTP",
      file=sys.stderr)
PY
staleness "$ORDER"
