#!/usr/bin/env bash
# What `tessera proxy` costs per request, independent of machine load: CPU instructions
# (valgrind --tool=callgrind, every thread of every process) per `tools/call echo` of the
# reference server direct (`tessera serve --http`) and behind `tessera proxy --http` in front of
# `tessera serve --stdio` (config `proxy`) or of `tessera serve --http` (config `proxy-http`; the
# upstream server runs under callgrind too): the proxy's instructions and its upstream's, counted
# apart.
#
#   bench/proxy_cost.sh [--modes "legacy-sse modern"] [--configs "direct proxy proxy-http"]
#                       [--requests N] [--concurrency C] [--top K]
#
# Each configuration runs twice from a fresh start, with N/4 and with N calls (fresh sessions
# each time); instructions per request = (total of the long run - total of the short one) /
# (3N/4), so start-up, handshakes and child processes' start cancel out. Slow (~50x under
# valgrind): keep N small (default 2000). Legacy sessions (which set no log level) share the
# proxy's one upstream connection with 2026-07-28 requests, so the upstream is counted in both
# modes. Prints a Markdown table
# and the proxy's top symbols (self cost) of the long run of each mode. Files:
# $BENCH_TARGET_DIR/proxy-cost/. The proxy waits up to 120 s for its upstream's answer to the
# era probe: under valgrind the upstream takes longer than the default 5 s to start, and a proxy
# that gave up would speak to it as a legacy server.
#
# Environment: TESSERA_BIN (default bench/target/tessera/profiling/tessera, built
# with `cargo build --profile profiling` when missing), BENCH_TARGET_DIR
# (default bench/target; needs mcp-bench built there, as bench/run.sh builds it).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
TESSERA_BIN="${TESSERA_BIN:-}"
if [ -z "$TESSERA_BIN" ]; then
  # The profiling profile: the release build with line tables and symbols (the
  # release profile has no debug info), built here when missing.
  TESSERA_BIN="$BENCH/target/tessera/profiling/tessera"
  if [ ! -x "$TESSERA_BIN" ]; then
    echo "building tessera (cargo build --profile profiling -p tessera-cli) into $BENCH/target/tessera" >&2
    (cd "$BENCH/.." && CARGO_TARGET_DIR="$BENCH/target/tessera" cargo build --profile profiling -p tessera-cli) \
      || { echo "building tessera failed" >&2; exit 2; }
  fi
fi
MODES="legacy-sse modern"
CONFIGS="direct proxy proxy-http"
REQUESTS=2000
CONC=16
TOP=25
while [ $# -gt 0 ]; do
  case "$1" in
    --modes) MODES="$2"; shift ;;
    --configs) CONFIGS="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    --top) TOP="$2"; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "proxy_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

die() { printf 'proxy cost: ERROR: %s\n' "$*" >&2; exit 2; }
say() { printf 'proxy cost: %s\n' "$*" >&2; }
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
LOAD="$BENCH_TARGET_DIR/release/mcp-bench"
[ -x "$LOAD" ] || die "$LOAD is missing: build bench/ first (bench/run.sh does)"
[ -x "$TESSERA_BIN" ] || die "$TESSERA_BIN is missing"
OUT="$BENCH_TARGET_DIR/proxy-cost"
mkdir -p "$OUT"

# shellcheck source=bench/lib.sh
. "$BENCH/lib.sh"

PID=""
UP=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  [ -n "$UP" ] && kill "$UP" 2>/dev/null
  true
}
trap cleanup EXIT

# run CONFIG MODE CALLS STEM: one fresh run under callgrind; callgrind files are STEM.<pid>
# (an HTTP upstream's too: every file but the proxy's counts as its upstream).
run() {
  local config="$1" mode="$2" calls="$3" stem="$4" era=legacy sse=()
  [ "$mode" = modern ] && era=modern
  [ "$mode" = legacy-sse ] && sse=(--sse-response)
  rm -f "$stem".*
  local port; port="$(free_port)"
  local vg=(valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$stem.%p")
  case "$config" in
    direct) taskset -c 0 "${vg[@]}" "$TESSERA_BIN" serve --http "127.0.0.1:$port" "${sse[@]}" 2>"$stem.log" & ;;
    proxy) taskset -c 0 "${vg[@]}" --trace-children=yes "$TESSERA_BIN" proxy --http "127.0.0.1:$port" \
             --probe-timeout 120 -- "$TESSERA_BIN" serve --stdio 2>"$stem.log" & ;;
    proxy-http)
      local up; up="$(free_port)"
      taskset -c 0 "${vg[@]}" "$TESSERA_BIN" serve --http "127.0.0.1:$up" "${sse[@]}" 2>"$stem.up.log" &
      UP=$!
      wait_port "$up" 120 || die "no upstream listener on $up (see $stem.up.log)"
      taskset -c 0 "${vg[@]}" "$TESSERA_BIN" proxy --http "127.0.0.1:$port" \
        --probe-timeout 120 "http://127.0.0.1:$up/mcp" 2>"$stem.log" & ;;
    *) die "unknown config $config (direct, proxy, proxy-http)" ;;
  esac
  PID=$!
  wait_port "$port" 120 || die "no listener on $port (see $stem.log)"
  taskset -c 1 "$LOAD" load --url "http://127.0.0.1:$port/mcp" --era "$era" --concurrency "$CONC" \
    --requests "$calls" >"$stem.json" 2>"$stem.load.log" || die "load failed (see $stem.load.log)"
  python3 - "$stem.json" "$calls" <<'PY' || die "the load had errors (see $1.json)"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["errors"] == 0 and r["requests"] >= int(sys.argv[2]) else 1)
PY
  kill -INT "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  MAIN="$PID"
  PID=""
  if [ -n "$UP" ]; then
    kill -INT "$UP" 2>/dev/null || true
    wait "$UP" 2>/dev/null || true
    UP=""
  fi
  local i
  for i in $(seq 1 300); do # children write their files as they exit
    pgrep -f -- "--callgrind-out-file=$stem" >/dev/null || break
    sleep 0.1
  done
}

# totals STEM PID: "main_ir children_ir children" (PID: the process started; the rest: children)
totals() {
  python3 - "$1" "$2" <<'PY'
import glob, re, sys
main_pid = int(sys.argv[2])
files = []
for f in glob.glob(sys.argv[1] + ".*"):
    m = re.search(r"\.(\d+)$", f)
    if not m:
        continue
    total = 0
    for line in open(f, errors="replace"):
        if line.startswith(("summary:", "totals:")):
            total = int(line.split()[1]); break
    files.append((int(m.group(1)), total))
first = sum(t for p, t in files if p == main_pid)
rest = [t for p, t in files if p != main_pid]
print(first, sum(rest), len(rest))
PY
}

short() { sed -E 's/\)  ([^ ]+\.(rs|c|S|h)|\?\?\?):/)  /; s/ \[[^]]*\]$//' | cut -c1-180; }

SHORT=$((REQUESTS / 4))
DELTA=$((REQUESTS - SHORT))
ROWS="$OUT/rows"
: >"$ROWS"
for mode in $MODES; do
  for config in $CONFIGS; do
    say "$config $mode: $SHORT then $REQUESTS calls at concurrency $CONC"
    run "$config" "$mode" "$SHORT" "$OUT/$config-$mode-short"
    read -r a1 c1 n1 < <(totals "$OUT/$config-$mode-short" "$MAIN")
    run "$config" "$mode" "$REQUESTS" "$OUT/$config-$mode-long"
    read -r a2 c2 n2 < <(totals "$OUT/$config-$mode-long" "$MAIN")
    echo "$MAIN" >"$OUT/$config-$mode-long.main"
    echo "$mode $config $(( (a2 - a1) / DELTA )) $(( (c2 - c1) / DELTA )) $n2" >>"$ROWS"
  done
done

echo "# Instructions per tools/call echo (callgrind), concurrency $CONC, ($REQUESTS - $SHORT) calls"
echo
echo "| mode | upstream | direct server | proxy process | proxy / direct | upstream server(s) | proxied total | proxied total / direct |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
python3 - "$ROWS" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    mode, config, main, children, n = line.split()
    rows[(mode, config)] = (int(main), int(children), int(n))
labels = {"proxy": "`tessera serve --stdio`", "proxy-http": "`tessera serve --http`"}
for mode in dict.fromkeys(m for m, _ in rows):
    d = rows.get((mode, "direct"), (0, 0, 0))[0]
    ds = f"{d:,}" if d else "—"
    for config, label in labels.items():
        if (mode, config) not in rows:
            continue
        p, c, n = rows[(mode, config)]
        alone = f"{p / d:.2f}×" if d else "—"
        if n == 0:
            print(f"| {mode} | {label} | {ds} | {p:,} | {alone} | not counted | — | — |")
            continue
        total = f"{(p + c) / d:.2f}×" if d else "—"
        print(f"| {mode} | {label} | {ds} | {p:,} | {alone} | {c:,} ({n} process{'es' if n != 1 else ''}) | {p + c:,} | {total} |")
PY
for mode in $MODES; do for config in proxy proxy-http; do
  f="$OUT/$config-$mode-long.$(cat "$OUT/$config-$mode-long.main" 2>/dev/null)"
  [ -f "$f" ] || continue
  echo
  echo "## proxy process ($config), $mode: top $TOP symbols (self)"
  echo
  echo '```'
  { callgrind_annotate --inclusive=no "$f" 2>/dev/null || true; } | sed -n '/^Ir/,$p' | sed -n "1,$((TOP + 2))p" | short
  echo '```'
done; done
