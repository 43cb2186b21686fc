#!/usr/bin/env bash
# Profile one server under a bounded tools/call load and print its top symbols.
#
#   bench/profile.sh [--server tessera|rmcp|floor|custom] [--mode legacy-sse|legacy-json|modern]
#                    [--requests N] [--concurrency C] [--tool auto|perf|callgrind] [--redis]
#
# --redis (tessera only): the server keeps its state in a private redis-server (persistence off,
# loopback, not pinned) started and stopped by this script; the Redis commands of the measured
# calls are printed from `INFO commandstats`.
#
# Uses perf when `perf stat -e instructions true` works on this machine (hardware counters),
# else valgrind --tool=callgrind (instruction counts, exact but ~50x slower: keep N small).
# The server is pinned to core 0, the load generator (bench's mcp-bench) to core 1. A warm-up
# of N/10 calls runs before collection starts, so start-up and the handshakes are not counted.
# Output: bench/target/profile/<server>-<mode>.* and the top symbols (self and inclusive) on
# stdout. Needs bench/run.sh's build of bench/ (run it once, or build bench/).
#
# --server custom runs SERVER_CMD (words; {ADDR} is replaced by the listening address) as the
# server: a program built on the library, such as bench/telemetry_cost.sh's.
#
# Environment: TESSERA_BIN (--server tessera only; default: bench/target/tessera/profiling/tessera,
#              built with `cargo build --profile profiling` when missing),
#              BENCH_TARGET_DIR (default: bench/target).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
SERVER=tessera
MODE=legacy-json
REQUESTS=10000
CONC=16
TOOL=auto
REDIS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --server) SERVER="$2"; shift ;;
    --mode) MODE="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    --tool) TOOL="$2"; shift ;;
    --redis) REDIS=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "profile.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

die() { printf 'profile: ERROR: %s\n' "$*" >&2; exit 2; }
TESSERA_BIN="${TESSERA_BIN:-}"
# Only a tessera server needs the binary: profiling the floor, rmcp or a custom
# server builds nothing.
if [ -z "$TESSERA_BIN" ] && [ "$SERVER" = tessera ]; then
  # The profiling profile: the release build with line tables and symbols (the
  # release profile has no debug info), built here when missing.
  TESSERA_BIN="$BENCH/target/tessera/profiling/tessera"
  if [ ! -x "$TESSERA_BIN" ]; then
    echo "building tessera (cargo build --profile profiling -p tessera-cli) into $BENCH/target/tessera" >&2
    (cd "$BENCH/.." && CARGO_TARGET_DIR="$BENCH/target/tessera" cargo build --profile profiling -p tessera-cli) \
      || { echo "building tessera failed" >&2; exit 2; }
  fi
fi
LOAD="$BENCH_TARGET_DIR/release/mcp-bench"
[ -x "$LOAD" ] || die "$LOAD missing: run bench/run.sh once (or cargo build --release in bench/)"

if [ "$TOOL" = auto ]; then
  if perf stat -e instructions true 2>&1 | grep -q 'instructions' && ! perf stat -e instructions true 2>&1 | grep -q 'not supported'; then
    TOOL=perf
  else
    TOOL=callgrind
  fi
fi

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
ADDR="127.0.0.1:$PORT"
REDIS_ARGS=()
REDIS_PID=""
if [ "$REDIS" = 1 ]; then
  [ "$SERVER" = tessera ] || die "--redis needs --server tessera"
  command -v redis-server >/dev/null || die "redis-server is not installed (apt-get install redis-server)"
  REDIS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  REDIS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tessera-profile-redis.XXXXXX")"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" </dev/null >/dev/null 2>&1 &
  REDIS_PID=$!
  for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  REDIS_ARGS=(--redis "redis://127.0.0.1:$REDIS_PORT/0")
fi
case "$SERVER/$MODE" in
  custom/*) read -r -a CMD <<<"${SERVER_CMD:?--server custom needs SERVER_CMD}"; CMD=("${CMD[@]//\{ADDR\}/$ADDR}") ;;
  tessera/legacy-sse) CMD=("$TESSERA_BIN" serve --http "$ADDR" --sse-response "${REDIS_ARGS[@]}") ;;
  tessera/*) CMD=("$TESSERA_BIN" serve --http "$ADDR" --stateless --json-response "${REDIS_ARGS[@]}") ;;
  rmcp/legacy-sse) CMD=("$BENCH_TARGET_DIR/release/rmcp-echo" --http "$ADDR" --stateful) ;;
  rmcp/*) CMD=("$BENCH_TARGET_DIR/release/rmcp-echo" --http "$ADDR" --stateless) ;;
  floor/legacy-sse) CMD=("$BENCH_TARGET_DIR/release/floor" --http "$ADDR" --sse --sessions) ;;
  floor/*) CMD=("$BENCH_TARGET_DIR/release/floor" --http "$ADDR") ;;
  *) die "unknown server/mode $SERVER/$MODE" ;;
esac
[ -x "${CMD[0]}" ] || die "${CMD[0]} is not built"
ERA=legacy
[ "$MODE" = modern ] && ERA=modern

OUT="$BENCH_TARGET_DIR/profile"
mkdir -p "$OUT"
STEM="$OUT/$SERVER-$MODE"
[ "$REDIS" = 1 ] && STEM="$STEM-redis"
URL="http://$ADDR/mcp"

# callgrind_annotate prints "COUNT (PCT)  FILE:FUNCTION [OBJECT]": keep COUNT (PCT)  FUNCTION.
short() { sed -E 's/\)  ([^ ]+\.(rs|c|S|h)|\?\?\?):/)  /; s/ \[[^]]*\]$//' | cut -c1-200; }

wait_port() {
  for _ in $(seq 1 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
    sleep 0.1
  done
  die "the server did not listen on $ADDR"
}
load() {
  taskset -c 1 "$LOAD" load --url "$URL" --era "$ERA" --concurrency "$CONC" --requests "$1" >"$2"
}

SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
  if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; fi
  true
}
trap cleanup EXIT

if [ "$TOOL" = callgrind ]; then
  command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
  rm -f "$STEM".callgrind*
  taskset -c 0 valgrind --tool=callgrind --instr-atstart=no --dump-instr=no \
    --callgrind-out-file="$STEM.callgrind" "${CMD[@]}" 2>"$STEM.valgrind.log" &
  SERVER_PID=$!
  wait_port
  callgrind_control -i on "$SERVER_PID" >/dev/null 2>&1
  load $((REQUESTS / 10 + 1)) "$STEM.warmup.json"
  callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
  [ -n "$REDIS_PID" ] && redis-cli -p "$REDIS_PORT" CONFIG RESETSTAT >/dev/null
  load "$REQUESTS" "$STEM.load.json"
  callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
  if [ -n "$REDIS_PID" ]; then
    echo "== Redis commands during the measured calls (INFO commandstats)"
    redis-cli -p "$REDIS_PORT" INFO commandstats | grep -E '^cmdstat_' | grep -vE 'cmdstat_(info|config)' \
      | sed -E 's/^cmdstat_([^:]+):calls=([0-9]+).*/\1 \2/' \
      | awk -v n="$REQUESTS" '{ printf "   %-12s %8d  (%.3f per call)\n", $1, $2, $2 / n }'
  fi
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
  FILE="$(ls -t "$STEM".callgrind.* 2>/dev/null | head -1)"
  [ -n "$FILE" ] || die "callgrind wrote no dump (see $STEM.valgrind.log)"
  TOTAL="$(awk '/^(summary|totals):/ {print $2; exit}' "$FILE")"
  echo "== $SERVER $MODE: callgrind, $REQUESTS tools/call at concurrency $CONC (after $((REQUESTS / 10 + 1)) warm-up calls)"
  echo "== instructions per request (server, all threads): $(( TOTAL / REQUESTS ))"
  echo "== top symbols, self cost"
  { callgrind_annotate --inclusive=no "$FILE" 2>/dev/null || true; } | sed -n '/^Ir/,$p' | sed -n '1,45p' | short
  echo "== top symbols, inclusive"
  { callgrind_annotate --inclusive=yes "$FILE" 2>/dev/null || true; } | sed -n '/^Ir/,$p' | sed -n '1,60p' | short
else
  taskset -c 0 "${CMD[@]}" 2>"$STEM.server.log" &
  SERVER_PID=$!
  wait_port
  load $((REQUESTS / 10 + 1)) "$STEM.warmup.json"
  perf record -q -F 4999 -g -o "$STEM.perf.data" -p "$SERVER_PID" &
  PERF_PID=$!
  load "$REQUESTS" "$STEM.load.json"
  kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true
  echo "== $SERVER $MODE: perf, $REQUESTS tools/call at concurrency $CONC"
  { perf report -i "$STEM.perf.data" --no-children --sort symbol --stdio 2>/dev/null || true; } | grep -v '^#' | grep '%' | sed -n '1,40p' 
fi
echo "== files: $STEM.*"
