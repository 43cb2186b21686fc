#!/usr/bin/env bash
# Run the official MCP conformance suite's SERVER scenarios against an MCP server.
#
#   conformance/run-server.sh VERSION [OPTIONS] URL           [-- EXTRA-CLI-ARGS...]
#   conformance/run-server.sh VERSION [OPTIONS] --stdio "CMD" [-- EXTRA-CLI-ARGS...]
#
# VERSION   0.1   @modelcontextprotocol/conformance 0.1.16 (spec 2025-06-18 / 2025-11-25)
#           next  @modelcontextprotocol/conformance 0.2.0-alpha.12 (adds 2026-07-28)
# URL       a running Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp
# --stdio   a stdio server command (one string). It is put behind
#           `supergateway --outputTransport streamableHttp --stateful` on a free
#           loopback port; scenarios that would test the bridge rather than the
#           server are reported as SKIP.
# OPTIONS
#   --suite S             active | all | pending | draft(next)    (default: all)
#   --scenario NAME       run only this scenario (repeatable)
#   --spec-version V      run the scenarios of spec version V (next: also selects the wire)
#   --requirements REV    next only: the frozen requirement set of REV (2025-11-25 | 2026-07-28);
#                         scenarios it runs but does not score are shown as SKIP
#   --timeout MS          next only: per-scenario timeout
#   --out DIR             where the suite writes checks.json (default: a new temp folder)
# Anything after `--` goes to the suite's CLI unchanged (e.g. --expected-failures FILE).
#
# Output: one line per scenario, PASS / FAIL / SKIP (with the failing checks
# indented below), then `conformance-VERSION: N passed, M failed` (scenario
# counts, SKIPs left out). Exit 0 only when M = 0.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage 0 ;; esac
VERSION="$1"; shift
resolve_suite "$VERSION" || exit 2

SUITE="all"; SCENARIOS=(); SPEC=""; REQS=""; TIMEOUT_MS=""; OUT=""; URL=""; STDIO_CMD=""; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) SUITE="${2:?--suite needs a value}"; shift ;;
    --scenario) SCENARIOS+=("${2:?--scenario needs a value}"); shift ;;
    --spec-version) SPEC="${2:?--spec-version needs a value}"; shift ;;
    --requirements) REQS="${2:?--requirements needs a value}"; shift ;;
    --timeout) TIMEOUT_MS="${2:?--timeout needs a value}"; shift ;;
    --out) OUT="${2:?--out needs a value}"; shift ;;
    --stdio) STDIO_CMD="${2:?--stdio needs a command}"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) usage 0 ;;
    -*) echo "run-server.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$URL" ] || { echo "run-server.sh: more than one URL" >&2; usage; }; URL="$1" ;;
  esac
  shift
done
if [ -n "$URL" ] && [ -n "$STDIO_CMD" ]; then echo "run-server.sh: give a URL or --stdio, not both" >&2; usage; fi
if [ -z "$URL" ] && [ -z "$STDIO_CMD" ]; then echo "run-server.sh: a URL or --stdio CMD is required" >&2; usage; fi
if [ "$VERSION" = "0.1" ] && { [ -n "$REQS" ] || [ -n "$TIMEOUT_MS" ]; }; then
  echo "run-server.sh: --requirements and --timeout need suite version next" >&2; exit 2
fi

ensure_installed || exit 1
OUT="$(make_out_dir "$OUT" server)" || exit 2
CLI_LOG="$OUT/suite-output.txt"
: >"$CLI_LOG"

# Scenarios that exercise the HTTP transport itself. Behind the stdio bridge they
# would grade supergateway, not the server under test.
BRIDGE_SCENARIOS=(
  dns-rebinding-protection server-sse-polling server-sse-multiple-streams
  server-session-lifecycle server-stateless http-header-validation
  http-custom-header-server-validation tasks-request-headers
)

BRIDGE_PGID=""
cleanup() {
  if [ -n "$BRIDGE_PGID" ]; then
    kill -TERM -- "-$BRIDGE_PGID" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 -- "-$BRIDGE_PGID" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$BRIDGE_PGID" 2>/dev/null
    BRIDGE_PGID=""
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "$STDIO_CMD" ]; then
  if [ "$SPEC" = "2026-07-28" ] || [ "$REQS" = "2026-07-28" ]; then
    echo "warning: the stdio bridge only speaks the session (initialize) wire; 2026-07-28 scenarios will fail through it" >&2
  fi
  PORT="$(free_port)" || { echo "run-server.sh: no free port" >&2; exit 1; }
  BRIDGE_LOG="$OUT/bridge.log"
  echo "bridge: supergateway on 127.0.0.1:$PORT -> $STDIO_CMD (log: $BRIDGE_LOG)"
  set +m
  # setsid: the bridge and every server it spawns share one process group, killed on exit.
  setsid "$NODE" "$SUPERGATEWAY" --stdio "$STDIO_CMD" --outputTransport streamableHttp --stateful \
    --port "$PORT" --streamableHttpPath /mcp --logLevel info </dev/null >"$BRIDGE_LOG" 2>&1 &
  BRIDGE_PGID=$!
  if ! wait_for_port "$PORT" 30 "$BRIDGE_PGID"; then
    echo "run-server.sh: the bridge did not start listening on port $PORT" >&2
    tail -n 20 "$BRIDGE_LOG" >&2
    exit 1
  fi
  URL="http://127.0.0.1:$PORT/mcp"
fi

ARGS=(server --url "$URL" -o "$OUT/results")
[ -n "$SPEC" ] && ARGS+=(--spec-version "$SPEC")
[ -n "$TIMEOUT_MS" ] && ARGS+=(--timeout "$TIMEOUT_MS")
mkdir -p "$OUT/results"

echo "suite: $SUITE_NAME $SUITE_VERSION against $URL"
status=0
if [ ${#SCENARIOS[@]} -gt 0 ]; then
  for s in "${SCENARIOS[@]}"; do
    run_suite "$CLI_LOG" "${ARGS[@]}" --scenario "$s" ${REQS:+--requirements "$REQS"} "${EXTRA[@]}" || status=$?
  done
elif [ -n "$REQS" ]; then
  run_suite "$CLI_LOG" "${ARGS[@]}" --requirements "$REQS" "${EXTRA[@]}" || status=$?
else
  run_suite "$CLI_LOG" "${ARGS[@]}" --suite "$SUITE" "${EXTRA[@]}" || status=$?
fi
echo "suite exit status: $status (verdicts below are read from checks.json)"
echo

SUMMARY_ARGS=(--kind server --results "$OUT/results" --label "conformance-$VERSION" --cli-log "$CLI_LOG")
for s in "${SCENARIOS[@]}"; do SUMMARY_ARGS+=(--expect "$s"); done
if [ -n "$STDIO_CMD" ]; then
  for s in "${BRIDGE_SCENARIOS[@]}"; do SUMMARY_ARGS+=(--skip "$s=tests the stdio bridge, not the server"); done
fi
if [ -n "$REQS" ]; then
  while read -r s; do SUMMARY_ARGS+=(--not-scored "$s"); done < <(not_scored "$REQS" server)
  if [ ${#SCENARIOS[@]} -eq 0 ]; then
    while read -r s; do SUMMARY_ARGS+=(--expect "$s"); done < <(required "$REQS" server)
  fi
fi
"$NODE" "$HERE/lib/summarize.mjs" "${SUMMARY_ARGS[@]}"
