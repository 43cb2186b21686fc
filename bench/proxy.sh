#!/usr/bin/env bash
# What `tessera proxy` adds: `tools/call echo` at concurrency 16 on the reference server direct
# (`tessera serve --http`) and through `tessera proxy --http` in front of the same server, over
# stdio (`-- tessera serve --stdio`) and over HTTP (`http://…/mcp` of a `tessera serve --http`).
#
#   bench/proxy.sh [--smoke] [--rounds N] [--duration S] [--concurrency C] [--skip-build]
#                  [--modes legacy-sse,modern]
#
#   --smoke        1 round of 1 s per point (proves it works; the figures mean little)
#   --rounds N     rounds, each running every configuration once, alternating order (default 3)
#   --duration S   measured seconds per point (default 5; 1 s warm-up before each)
#   --modes M,...  which modes to measure (default legacy-sse,modern)
#
# Environment: TESSERA_BIN, TESSERA_TARGET_DIR, BENCH_TARGET_DIR as for bench/run.sh.
# Servers and the proxy run pinned to core 0 (`taskset -c 0`), the load generator to core 1.
# Prints a Markdown table (medians over rounds), then one line per configuration with issue 28's
# two numbers beside their targets: the p50 the proxy adds at concurrency 1 (≤ 30 µs through a
# stdio upstream, ≤ 60 µs through an HTTP one) and proxied ÷ direct req/s at concurrency 16
# (≥ 0.75× through stdio, ≥ 0.5× through HTTP); a run at another concurrency prints both numbers
# without a verdict. Writes it to bench/results/<UTC date>-proxy[-smoke].md.
# Exit status 0 when every point ran without errors.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
TESSERA_TARGET_DIR="${TESSERA_TARGET_DIR:-$BENCH/target/tessera}"
ROUNDS=3
DURATION=5
WARMUP=1
CONCURRENCY=16
SKIP_BUILD=0
SMOKE=0
MODES=(legacy-sse modern)
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1; ROUNDS=1; DURATION=1; WARMUP=0.3 ;;
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --concurrency) CONCURRENCY="$2"; shift ;;
    --modes) IFS=, read -r -a MODES <<<"$2"; shift ;;
    --skip-build) SKIP_BUILD=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "proxy.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

say() { printf 'bench proxy: %s\n' "$*" >&2; }
die() { printf 'bench proxy: ERROR: %s\n' "$*" >&2; exit 2; }
command -v taskset >/dev/null || die "taskset is required (apt-get install util-linux)"
command -v python3 >/dev/null || die "python3 is required"

# shellcheck source=bench/lib.sh
. "$BENCH/lib.sh"
prepare_binaries

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-proxy.XXXXXX")"
PIDS=()
trap stop_all EXIT


# start NAME CMD... : start a background process pinned to the server core; sets LAST_PID
start() {
  local name="$1"; shift
  "${SERVER[@]}" "$@" >"$LOGS/$name.log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# point CONFIG MODE : run one load point; appends "CONFIG MODE rps p50 p99 errors" to $LOGS/points
point() {
  local config="$1" mode="$2" era="legacy" sse=()
  [ "$mode" = modern ] && era=modern
  [ "$mode" = legacy-sse ] && sse=(--sse-response)
  local p1 p2 url
  if [ "$config" != proxy-stdio ]; then
    p1="$(free_port)"
    start "$config-$mode-server" "$TESSERA_BIN" serve --http "127.0.0.1:$p1" "${sse[@]}"
    wait_port "$p1" || die "tessera serve did not start (see $LOGS)"
  fi
  case "$config" in
    direct) url="http://127.0.0.1:$p1/mcp" ;;
    proxy-stdio)
      p2="$(free_port)"
      start "$config-$mode-proxy" "$TESSERA_BIN" proxy --http "127.0.0.1:$p2" -- "$TESSERA_BIN" serve --stdio
      wait_port "$p2" || die "tessera proxy did not start (see $LOGS)"
      url="http://127.0.0.1:$p2/mcp" ;;
    proxy-http)
      p2="$(free_port)"
      start "$config-$mode-proxy" "$TESSERA_BIN" proxy --http "127.0.0.1:$p2" "http://127.0.0.1:$p1/mcp"
      wait_port "$p2" || die "tessera proxy did not start (see $LOGS)"
      url="http://127.0.0.1:$p2/mcp" ;;
  esac
  local out="$LOGS/$config-$mode-$RANDOM.json"
  "${CLIENT[@]}" "$LOAD" load --url "$url" --era "$era" --concurrency "$CONCURRENCY" \
    --duration "$DURATION" --warmup "$WARMUP" >"$out" 2>"$out.err" || true
  stop_all
  python3 - "$out" "$config" "$mode" >>"$LOGS/points" <<'PY'
import json, sys
path, config, mode = sys.argv[1:4]
try:
    r = json.load(open(path))
    print(config, mode, r["rps"], r["p50_us"], r["p99_us"], r["errors"])
except Exception:
    print(config, mode, 0, 0, 0, -1)
PY
}

CONFIGS=(direct proxy-stdio proxy-http)
for mode in "${MODES[@]}"; do
  case "$mode" in legacy-sse|modern) ;; *) die "unknown mode $mode (legacy-sse, modern)" ;; esac
done
: >"$LOGS/points"
START_LOAD="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for round in $(seq 1 "$ROUNDS"); do
  order=("${CONFIGS[@]}")
  if [ $((round % 2)) = 0 ]; then order=(proxy-http proxy-stdio direct); fi
  for mode in "${MODES[@]}"; do
    for config in "${order[@]}"; do
      say "round $round: $config $mode (c=$CONCURRENCY, ${DURATION}s)"
      point "$config" "$mode"
    done
  done
done

mkdir -p "$BENCH/results"
STAMP="$(date -u +%Y-%m-%dT%H-%M-%SZ)"
SUFFIX=""; [ "$SMOKE" = 1 ] && SUFFIX="-smoke"
REPORT="$BENCH/results/$STAMP-proxy$SUFFIX.md"
LOAD_BEFORE="$START_LOAD"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
python3 - "$LOGS/points" "$CONCURRENCY" "$ROUNDS" "$DURATION" "$TESSERA_BIN" "$LOAD_BEFORE" "$LOAD_AFTER" "$(nproc)" >"$REPORT" <<'PY'
import statistics, sys
points, conc, rounds, duration, binary, load_before, load_after, cpus = sys.argv[1:9]
rows = {}
errors = 0
for line in open(points):
    config, mode, rps, p50, p99, err = line.split()
    if int(err) != 0:
        errors += 1
    rows.setdefault((config, mode), []).append((float(rps), float(p50), float(p99)))
def med(config, mode, i):
    v = [x[i] for x in rows.get((config, mode), [])]
    return statistics.median(v) if v else float("nan")
print(f"# `tessera proxy` overhead: tools/call echo, concurrency {conc}, medians of {rounds} round(s) of {duration} s\n")
print(f"Binary: `{binary}`. Servers and proxy on core 0, load generator on core 1.\n")
print(f"Machine load average (1, 5, 15 min) on {cpus} CPUs: {load_before} before, {load_after} after. "
      "Other work on the machine skews the figures; compare runs on an idle machine.\n")
print("| mode | upstream of the proxy | direct req/s | proxied req/s | ratio | direct p50 µs | proxied p50 µs | added p50 µs | proxied p99 µs |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
verdicts = []
# Issue 28's targets: added p50 (µs) at concurrency 1, req/s ratio at concurrency 16.
P50_TARGET = {"proxy-stdio": 30, "proxy-http": 60}
RPS_TARGET = {"proxy-stdio": 0.75, "proxy-http": 0.5}
def verdict(ok):
    return "met" if ok else "missed"
for mode in [m for m in ("legacy-sse", "modern") if ("direct", m) in rows]:
    d_rps, d_p50 = med("direct", mode, 0), med("direct", mode, 1)
    for config, label in (("proxy-stdio", "`tessera serve --stdio`"), ("proxy-http", "`tessera serve --http`")):
        rps, p50, p99 = med(config, mode, 0), med(config, mode, 1), med(config, mode, 2)
        ratio = rps / d_rps if d_rps else float("nan")
        added = p50 - d_p50
        print(f"| {mode} | {label} | {d_rps:,.0f} | {rps:,.0f} | {ratio:.2f}× | {d_p50:.0f} | {p50:.0f} | {added:+.0f} | {p99:.0f} |")
        p50_note = (f" (target ≤ {P50_TARGET[config]} at concurrency 1: {verdict(added <= P50_TARGET[config])})"
                    if conc == "1" else "")
        rps_note = (f" (target ≥ {RPS_TARGET[config]}× at concurrency 16: {verdict(ratio >= RPS_TARGET[config])})"
                    if conc == "16" else "")
        verdicts.append(f"- {mode}, upstream {label}: added p50 {added:+.0f} µs{p50_note}, "
                        f"req/s {ratio:.2f}× direct{rps_note}")
print(f"\nIssue 28's two numbers (added p50, proxied ÷ direct req/s) at concurrency {conc}:\n")
print("\n".join(verdicts))
if errors:
    print(f"\n{errors} point(s) had errors or did not run (see the logs).")
PY
cat "$REPORT"
# The issue's two numbers, one line per configuration, last on the terminal.
grep '^- .*added p50' "$REPORT" | sed 's/^- /bench proxy: /; s/`//g' >&2
say "report: $REPORT (logs: $LOGS)"
if grep -q "had errors" "$REPORT"; then exit 1; fi
