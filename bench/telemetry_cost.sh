#!/usr/bin/env bash
# What telemetry costs per `tools/call echo`, in callgrind instructions of the server process (all
# threads, after warm-up): examples/telemetry_http run three ways by bench/profile.sh.
#
#   bench/telemetry_cost.sh [--mode legacy-json|modern] [--requests N] [--concurrency C]
#
#   none   no telemetry layer (what a program without the `telemetry` feature runs: the only
#          telemetry code on the path is tessera-runtime's check for an outgoing observer)
#   layer  the layer with no tracer or meter provider installed (inactive: left out of the stack)
#   otlp   the layer exporting spans and metrics over OTLP/HTTP at 100% sampling to
#          bench/otlp_sink.py (a collector that takes everything and keeps nothing)
#   refused  the same, to a port nothing listens on (the collector is down)
#   hanging  the same, to bench/otlp_sink.py --hang (accepts and never answers)
#
# Environment: EXAMPLE_BIN (default: bench/target/tessera/profiling/examples/telemetry_http, built
# with `cargo build --profile profiling -p tessera-examples --example telemetry_http` when missing;
# the profile's LTO and codegen units follow CARGO_PROFILE_PROFILING_* as usual),
# BENCH_TARGET_DIR (as bench/profile.sh). Needs valgrind and bench/run.sh's build of bench/.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODE=legacy-json
REQUESTS=2000
CONC=16
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) MODE="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    --concurrency) CONC="$2"; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "telemetry_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
EXAMPLE_BIN="${EXAMPLE_BIN:-$BENCH/target/tessera/profiling/examples/telemetry_http}"
if [ ! -x "$EXAMPLE_BIN" ]; then
  echo "building examples/telemetry_http (profiling profile) into $BENCH/target/tessera" >&2
  (cd "$BENCH/.." && CARGO_TARGET_DIR="$BENCH/target/tessera" \
    cargo build --profile profiling -p tessera-examples --example telemetry_http) \
    || { echo "building the example failed" >&2; exit 2; }
fi

SINK_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
HANG_PORT="$(free_port)"
DOWN_PORT="$(free_port)"
python3 "$BENCH/otlp_sink.py" "$SINK_PORT" &
SINK_PID=$!
python3 "$BENCH/otlp_sink.py" "$HANG_PORT" --hang &
HANG_PID=$!
trap 'kill "$SINK_PID" "$HANG_PID" 2>/dev/null || true' EXIT

declare -A COST
MODES=(none layer otlp refused hanging)
for T in "${MODES[@]}"; do
  ENV=()
  case "$T" in
    otlp) PORT="$SINK_PORT" ;;
    refused) PORT="$DOWN_PORT" ;;
    hanging) PORT="$HANG_PORT" ;;
    *) PORT="" ;;
  esac
  AS="$T"
  if [ -n "$PORT" ]; then
    AS=otlp
    ENV=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT" OTEL_SERVICE_NAME=telemetry-cost
         OTEL_TRACES_SAMPLER=always_on OTEL_BSP_SCHEDULE_DELAY=200 OTEL_METRIC_EXPORT_INTERVAL=1000)
  fi
  OUT="$(env "${ENV[@]}" TESSERA_BIN="$EXAMPLE_BIN" SERVER_CMD="$EXAMPLE_BIN {ADDR} --telemetry $AS" \
    "$BENCH/profile.sh" --server custom --mode "$MODE" --requests "$REQUESTS" --concurrency "$CONC" \
    --tool callgrind)"
  COST[$T]="$(sed -n 's/^== instructions per request (server, all threads): //p' <<<"$OUT")"
  [ -n "${COST[$T]}" ] || { echo "$OUT" >&2; echo "no figure for --telemetry $T" >&2; exit 1; }
  echo "== --telemetry $T: ${COST[$T]} instructions per call" >&2
done
ratio() { python3 -c "print(f'{$1 / $2:.3f}')"; }
echo "| telemetry | instructions per call | ÷ none |"
echo "|---|---:|---:|"
for T in "${MODES[@]}"; do
  echo "| $T | ${COST[$T]} | $(ratio "${COST[$T]}" "${COST[none]}") |"
done
