#!/usr/bin/env bash
# Tessera benchmark: Tessera vs rmcp vs the official TypeScript and Python SDKs vs a bare
# hyper+serde_json floor. Streamable HTTP tools/call throughput and latency, server CPU per
# request, memory per session, stdio round trips, cold start. See bench/README.md.
#
#   bench/run.sh [--smoke] [--rounds N] [--duration S] [--nice N] [--skip-build] [--no-tessera]
#                [any other `mcp-bench run` option, e.g. --servers tessera,rmcp --modes modern]
#
#   --smoke        1 round, ~1 s per point, concurrency 1 and 4, 50 sessions (proves it works)
#   --nice N       run the harness and the servers at this niceness (e.g. -10 on a busy machine)
#   --skip-build   use what is already built
#   --no-tessera   measure only the others (Tessera's columns stay empty)
#   --no-proxy     skip the `tessera proxy` overhead comparison (bench/proxy.sh) run last
#   --no-redis     skip the Redis-backed column (bench/redis.sh: in-memory vs --redis, Redis
#                  commands per call; needs redis-server and redis-cli)
#   --soak         run the soak instead (bench/soak.sh; takes --minutes N, default 10)
#
# Environment:
#   TESSERA_BIN          use this tessera binary instead of building crates/tessera-cli
#   TESSERA_TARGET_DIR   cargo target dir for the Tessera build (default: bench/target/tessera)
#   BENCH_TARGET_DIR     cargo target dir for the bench workspace (default: bench/target)
#   BENCH_PROFILE        cargo profile for the bench workspace (default: release; with --smoke,
#                        smoke: an unoptimised build that only has to prove the benchmark runs)
#   PYTHON               interpreter for the venv (default: python3.11, else python3)
#   NODE                 node binary (default: node)
#
# Installs what it needs: bench/servers/ts/node_modules (npm ci, from package-lock.json) and
# bench/servers/py/.venv (pip, pinned requirements.txt). Writes bench/results/<date>.md and
# .json and prints the table. Exit status: 0 when everything ran without an error, 1 when a
# server or a load point failed (the report lists it), 2 when something needed is missing.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
TESSERA_TARGET_DIR="${TESSERA_TARGET_DIR:-$BENCH/target/tessera}"
NODE="${NODE:-node}"

for a in "$@"; do
  if [ "$a" = "--soak" ]; then
    SOAK_ARGS=()
    for b in "$@"; do [ "$b" = "--soak" ] || SOAK_ARGS+=("$b"); done
    exec bash "$(dirname "${BASH_SOURCE[0]}")/soak.sh" "${SOAK_ARGS[@]}"
  fi
done

SKIP_BUILD=0
NO_TESSERA=0
NO_PROXY=0
NO_REDIS=0
SMOKE=0
NICE=""
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-build) SKIP_BUILD=1 ;;
    --no-tessera) NO_TESSERA=1 ;;
    --no-proxy) NO_PROXY=1 ;;
    --no-redis) NO_REDIS=1 ;;
    --smoke) SMOKE=1; PASS+=("$1") ;;
    --nice) NICE="$2"; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) PASS+=("$1") ;;
  esac
  shift
done

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required but not found ($2)"; }

# ------------------------------------------------------------------ prerequisites
need cargo "install a Rust toolchain (rustup)"
need "$NODE" "install Node.js 20 or newer"
need npm "install npm (comes with Node.js)"
need taskset "install util-linux (apt-get install util-linux)"
NODE_MAJOR="$("$NODE" -p 'process.versions.node.split(".")[0]')"
[ "$NODE_MAJOR" -ge 20 ] || die "Node.js 20 or newer is required (found $("$NODE" --version))"
if [ -z "${PYTHON:-}" ]; then
  if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi
need "$PYTHON" "install Python 3.11 (python3 with the venv module)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "Python 3.10 or newer is required (found $("$PYTHON" --version 2>&1))"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null \
  || die "$PYTHON lacks the venv/ensurepip modules (Debian: apt-get install python3-venv)"

CPUS="$(nproc)"
PIN=(--server-core 0 --client-core 1)
CLIENT=(taskset -c 1)
if [ "$CPUS" -lt 2 ]; then
  say "only $CPUS CPU: not pinning (server and load generator share the CPU)"
  PIN=(--no-pin)
  CLIENT=()
fi
if [ -n "$NICE" ]; then
  CLIENT=(nice -n "$NICE" "${CLIENT[@]}")
fi

# ------------------------------------------------------------------ builds
if [ -z "${BENCH_PROFILE:-}" ]; then
  if [ "$SMOKE" = 1 ]; then BENCH_PROFILE=smoke; else BENCH_PROFILE=release; fi
fi
export BENCH_PROFILE
BENCH_BIN="$BENCH_TARGET_DIR/$BENCH_PROFILE"
if [ "$SKIP_BUILD" = 0 ]; then
  say "building the bench workspace (rmcp-echo, floor, mcp-bench; profile $BENCH_PROFILE) into $BENCH_TARGET_DIR"
  (cd "$BENCH" && CARGO_TARGET_DIR="$BENCH_TARGET_DIR" cargo build --profile "$BENCH_PROFILE" --locked) \
    || die "building bench/ failed"
fi
for b in mcp-bench rmcp-echo floor; do
  [ -x "$BENCH_BIN/$b" ] || die "$BENCH_BIN/$b is missing (run without --skip-build)"
done

TESSERA_ARGS=()
if [ "$NO_TESSERA" = 0 ]; then
  if [ -n "${TESSERA_BIN:-}" ]; then
    [ -x "$TESSERA_BIN" ] || die "TESSERA_BIN=$TESSERA_BIN is not an executable"
  else
    TESSERA_BIN="$TESSERA_TARGET_DIR/release/tessera"
    if [ "$SKIP_BUILD" = 0 ]; then
      say "building tessera (cargo build --release -p tessera-cli) into $TESSERA_TARGET_DIR"
      (cd "$ROOT" && CARGO_TARGET_DIR="$TESSERA_TARGET_DIR" cargo build --release -p tessera-cli) \
        || die "building tessera failed (use --no-tessera to measure the others only)"
    fi
    [ -x "$TESSERA_BIN" ] || die "$TESSERA_BIN is missing (run without --skip-build)"
  fi
  REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git -C "$ROOT" status --porcelain -- crates Cargo.toml Cargo.lock 2>/dev/null)" ]; then
    REV="$REV+uncommitted changes"
  fi
  TESSERA_ARGS=(--tessera "$TESSERA_BIN" --version-note "tessera git=$REV")
fi

# ------------------------------------------------------------------ TypeScript SDK
TS="$BENCH/servers/ts"
if [ ! -f "$TS/node_modules/.package-lock.json" ] || [ "$TS/package-lock.json" -nt "$TS/node_modules/.package-lock.json" ]; then
  say "installing the TypeScript SDK (npm ci in bench/servers/ts)"
  (cd "$TS" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null) || die "npm ci failed in $TS"
fi
[ -f "$TS/node_modules/@modelcontextprotocol/sdk/package.json" ] || die "the TypeScript SDK is not installed in $TS/node_modules"

# ------------------------------------------------------------------ Python SDK
PY="$BENCH/servers/py"
VENV_PY="$PY/.venv/bin/python"
STAMP="$PY/.venv/.bench-requirements"
if [ ! -x "$VENV_PY" ] || ! cmp -s "$PY/requirements.txt" "$STAMP"; then
  say "creating bench/servers/py/.venv with the pinned Python SDK"
  rm -rf "$PY/.venv"
  "$PYTHON" -m venv "$PY/.venv" || die "cannot create $PY/.venv"
  "$VENV_PY" -m pip install --quiet --disable-pip-version-check -r "$PY/requirements.txt" \
    || die "pip install -r $PY/requirements.txt failed"
  cp "$PY/requirements.txt" "$STAMP"
fi
"$VENV_PY" -c 'import mcp.server.mcpserver, uvicorn' 2>/dev/null || die "the Python SDK does not import in $PY/.venv"

# ------------------------------------------------------------------ run
say "running (harness on core 1, servers on core 0)"
set +e
"${CLIENT[@]}" "$BENCH_BIN/mcp-bench" run \
  --bench-dir "$BENCH" \
  --rmcp "$BENCH_BIN/rmcp-echo" \
  --floor "$BENCH_BIN/floor" \
  --node "$(command -v "$NODE")" \
  --python "$VENV_PY" \
  --log-dir "$BENCH_TARGET_DIR/logs" \
  "${PIN[@]}" "${TESSERA_ARGS[@]}" "${PASS[@]}"
STATUS=$?
if [ "$NO_TESSERA" = 0 ] && [ "$NO_PROXY" = 0 ]; then
  say "the overhead of tessera proxy (bench/proxy.sh)"
  PROXY_ARGS=(--skip-build)
  [ "$SMOKE" = 1 ] && PROXY_ARGS+=(--smoke)
  TESSERA_BIN="$TESSERA_BIN" BENCH_TARGET_DIR="$BENCH_TARGET_DIR" \
    bash "$BENCH/proxy.sh" "${PROXY_ARGS[@]}" || STATUS=1
fi
if [ "$NO_TESSERA" = 0 ] && [ "$NO_REDIS" = 0 ]; then
  say "the Redis-backed server beside the in-memory one (bench/redis.sh)"
  REDIS_ARGS=(--skip-build)
  [ "$SMOKE" = 1 ] && REDIS_ARGS+=(--smoke)
  TESSERA_BIN="$TESSERA_BIN" BENCH_TARGET_DIR="$BENCH_TARGET_DIR" \
    bash "$BENCH/redis.sh" "${REDIS_ARGS[@]}" || STATUS=1
fi
set -e
exit "$STATUS"
