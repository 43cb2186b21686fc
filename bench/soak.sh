#!/usr/bin/env bash
# Soak: `tessera serve --http` under a steady mix for N minutes (default 10):
# 1,000 legacy sessions over 50 keep-alive connections, 10 2026-07-28 clients,
# tools/call, tools/list and notifications, and legacy GET streams and
# subscriptions/listen streams opened and dropped. The server's RSS and open
# file descriptors are sampled every 10 s. Pass: 0 errors, and the last
# minute's mean RSS and descriptor count within 5% of the first minute after
# the warm-up, which ends once every legacy session has done 64 actions (and
# not before 60 s). Not a CI stage (too long). Called by `bench/run.sh --soak`.
#
#   bench/soak.sh [--minutes N] [--skip-build] [any other `mcp-bench soak` option]
#
# Environment: TESSERA_BIN (a tessera binary instead of building one),
# TESSERA_TARGET_DIR (default bench/target/tessera), BENCH_TARGET_DIR
# (default bench/target). Writes bench/results/soak-<date>.md and prints it.
# Exit status: 0 pass, 1 fail, 2 something needed is missing.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
TESSERA_TARGET_DIR="${TESSERA_TARGET_DIR:-$BENCH/target/tessera}"

SKIP_BUILD=0
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-build) SKIP_BUILD=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) PASS+=("$1") ;;
  esac
  shift
done

say() { printf 'soak: %s\n' "$*" >&2; }
die() { printf 'soak: ERROR: %s\n' "$*" >&2; exit 2; }

if [ "$SKIP_BUILD" = 0 ]; then
  say "building the harness (mcp-bench) into $BENCH_TARGET_DIR"
  (cd "$BENCH" && CARGO_TARGET_DIR="$BENCH_TARGET_DIR" cargo build --release --locked -p mcp-bench) \
    || die "building bench/ failed"
fi
[ -x "$BENCH_TARGET_DIR/release/mcp-bench" ] || die "$BENCH_TARGET_DIR/release/mcp-bench is missing"

if [ -z "${TESSERA_BIN:-}" ]; then
  TESSERA_BIN="$TESSERA_TARGET_DIR/release/tessera"
  if [ "$SKIP_BUILD" = 0 ]; then
    say "building tessera (cargo build --release -p tessera-cli) into $TESSERA_TARGET_DIR"
    (cd "$ROOT" && CARGO_TARGET_DIR="$TESSERA_TARGET_DIR" cargo build --release -p tessera-cli) \
      || die "building tessera failed"
  fi
fi
[ -x "$TESSERA_BIN" ] || die "$TESSERA_BIN is missing"

exec "$BENCH_TARGET_DIR/release/mcp-bench" soak --bench-dir "$BENCH" --tessera "$TESSERA_BIN" "${PASS[@]}"
