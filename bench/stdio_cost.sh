#!/usr/bin/env bash
# Stdio servers side by side: sequential `tools/call echo` round trips, RSS after a run, cold
# start (spawn -> `initialize` answer, and -> first `tools/list` answer) in wall-clock time, and
# the same work counted in CPU instructions (valgrind --tool=callgrind, every thread of the
# server), which machine load does not disturb.
#
#   bench/stdio_cost.sh [--rounds R] [--duration S] [--cold-starts K] [--requests N] [--no-callgrind]
#                       NAME=COMMAND... [NAME=COMMAND...]
#
#   e.g. bench/stdio_cost.sh before="/tmp/tessera-before serve --stdio" \
#          after="target/profiling/tessera serve --stdio" rmcp="bench/target/release/rmcp-echo --stdio"
#
# Wall clock: R rounds (default 5); each round runs every server once, in the order given on odd
# rounds and reversed on even ones: K cold starts (default 5), then round trips for S seconds
# (default 3) after a 0.3 s warm-up. Servers are pinned to core 0 and the harness to core 1 when
# the machine has two CPUs or more. Medians over rounds (cold starts: over all starts).
#
# Instructions: each server under callgrind twice from a fresh start, with the handshake alone
# (`initialize` + `initialized`, then stdin closes: exec to exit) and with N (default 2000)
# round trips after it; instructions per round trip = (long - short) / N.
#
# Prints a Markdown table with the ratio of every server to the last one named (put the
# reference, e.g. rmcp, last). Files (JSON of every run, callgrind profiles): $OUT_DIR
# (default $BENCH_TARGET_DIR/stdio-cost). Environment: BENCH_TARGET_DIR (default bench/target;
# needs mcp-bench built there) or LOAD (the mcp-bench binary).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
LOAD="${LOAD:-$BENCH_TARGET_DIR/release/mcp-bench}"
OUT_DIR="${OUT_DIR:-$BENCH_TARGET_DIR/stdio-cost}"
ROUNDS=5
DURATION=3
COLD=5
REQUESTS=2000
CALLGRIND=1
SERVERS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --cold-starts) COLD="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    --no-callgrind) CALLGRIND=0 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *=*) SERVERS+=("$1") ;;
    *) echo "stdio_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

die() { printf 'stdio cost: ERROR: %s\n' "$*" >&2; exit 2; }
say() { printf 'stdio cost: %s\n' "$*" >&2; }
[ "${#SERVERS[@]}" -gt 0 ] || die "name at least one server: NAME=COMMAND"
[ -x "$LOAD" ] || die "$LOAD is missing: build bench/ first (bench/run.sh does)"
if [ "$CALLGRIND" = 1 ]; then
  command -v valgrind >/dev/null || die "valgrind is not installed (or pass --no-callgrind)"
fi
mkdir -p "$OUT_DIR"

SERVER_PIN=()
CLIENT_PIN=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  SERVER_PIN=(taskset -c 0)
  CLIENT_PIN=(taskset -c 1)
fi

names=()
for s in "${SERVERS[@]}"; do names+=("${s%%=*}"); done

# run_server NAME CMD OUT: one wall-clock run (cold starts, then round trips).
run_server() {
  local name="$1" cmd="$2" out="$3"
  # shellcheck disable=SC2086 # the command is split into words on purpose
  "${CLIENT_PIN[@]}" "$LOAD" stdio --duration "$DURATION" --cold-starts "$COLD" \
    -- "${SERVER_PIN[@]}" $cmd >"$out" || die "$name failed (see $out)"
}

say "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
  order=("${SERVERS[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[$i]}"); done
  fi
  for s in "${order[@]}"; do
    name="${s%%=*}"
    say "round $r/$ROUNDS: $name"
    run_server "$name" "${s#*=}" "$OUT_DIR/$name-r$r.json"
  done
done

if [ "$CALLGRIND" = 1 ]; then
  for s in "${SERVERS[@]}"; do
    name="${s%%=*}"
    cmd="${s#*=}"
    for n in 0 "$REQUESTS"; do
      say "callgrind: $name, $n round trips"
      rm -f "$OUT_DIR/$name-cg-$n.out"
      # shellcheck disable=SC2086
      "$LOAD" stdio --cold-starts 0 --requests "$n" -- \
        valgrind --tool=callgrind --trace-children=no \
        --callgrind-out-file="$OUT_DIR/$name-cg-$n.out" $cmd \
        >"$OUT_DIR/$name-cg-$n.json" 2>"$OUT_DIR/$name-cg-$n.log" \
        || die "callgrind run of $name failed (see $OUT_DIR/$name-cg-$n.log)"
    done
  done
fi
say "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT_DIR" "$ROUNDS" "$REQUESTS" "$CALLGRIND" "${names[@]}" <<'PY'
import json, re, statistics, sys

out, rounds, requests, callgrind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
names = sys.argv[5:]

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def instructions(path):
    # The totals line of a callgrind profile: "totals: <Ir>" (or "summary:").
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:totals|summary):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return None

rows = {}
for n in names:
    runs = [json.load(open(f"{out}/{n}-r{r}.json")) for r in range(1, rounds + 1)]
    rt = [x["round_trips"] for x in runs]
    cold = [c for x in runs for c in x.get("cold_starts", [])]
    row = {
        "round trips/s ↑": med(r["rps"] for r in rt),
        "p50 µs ↓": med(r["p50_us"] for r in rt),
        "p99 µs ↓": med(r["p99_us"] for r in rt),
        "server CPU µs/round trip ↓": med(r["cpu_us_per_req"] for r in rt),
        "RSS after run KiB ↓": med(r["rss_kb"] for r in rt),
        "cold start → initialize ms ↓": med(c["initialize_ms"] for c in cold),
        "cold start → tools/list ms ↓": med(c["tools_list_ms"] for c in cold),
        "RSS at cold start KiB ↓": med(c["rss_kb"] for c in cold),
        "threads at cold start": med(c["threads"] for c in cold),
    }
    if callgrind:
        short = instructions(f"{out}/{n}-cg-0.out")
        long = instructions(f"{out}/{n}-cg-{requests}.out")
        row["instructions, exec → handshake → exit ↓"] = short
        row["instructions per round trip ↓"] = (
            (long - short) / requests if short is not None and long is not None else None
        )
    rows[n] = row

ref = names[-1]
metrics = list(rows[ref].keys())
others = names[:-1]

def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float) and v != int(v):
        return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"
    return f"{int(v):,}"

head = "| metric | " + " | ".join(names) + " | " + " | ".join(f"{o}/{ref}" for o in others) + " |"
print(head)
print("|" + "---|" * (1 + len(names) + len(others)))
for m in metrics:
    cells = [fmt(rows[n][m]) for n in names]
    ratios = []
    for o in others:
        a, b = rows[o][m], rows[ref][m]
        ratios.append(f"{a / b:.2f}×" if a is not None and b else "—")
    print(f"| {m} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
PY
