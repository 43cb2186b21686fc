#!/usr/bin/env bash
# Run the official MCP conformance suite's CLIENT scenarios against an MCP client.
#
#   conformance/run-client.sh VERSION [OPTIONS] "CLIENT-COMMAND" [-- EXTRA-CLI-ARGS...]
#
# VERSION   0.1   @modelcontextprotocol/conformance 0.1.16
#           next  @modelcontextprotocol/conformance 0.2.0-alpha.12 (adds 2026-07-28)
# CLIENT-COMMAND
#           For every scenario the suite starts a mock server and runs
#           `CLIENT-COMMAND <server-url>` through sh, with MCP_CONFORMANCE_SCENARIO
#           (and, for next, MCP_CONFORMANCE_PROTOCOL_VERSION; for some auth scenarios
#           MCP_CONFORMANCE_CONTEXT) in the environment. The suite splits the command
#           on single spaces, so use a plain path plus simple arguments or a wrapper script.
# OPTIONS
#   --suite S             all | core | auth | metadata | backcompat | extensions | draft | sep-835
#                         (default: all)
#   --scenario NAME       run only this scenario (repeatable)
#   --sequential          one scenario at a time (the suite runs a --suite in parallel,
#                         which on 2 cores can time out slow clients and skews sse-retry)
#   --spec-version V      scenarios of spec version V (next: also the wire they run at)
#   --requirements REV    next only: the frozen requirement set of REV; scenarios it
#                         runs but does not score are shown as SKIP
#   --timeout MS          per-scenario timeout (default 60000)
#   --out DIR             where the suite writes checks.json (default: a new temp folder)
# Anything after `--` goes to the suite's CLI unchanged.
#
# Verdicts: PASS = at least one SUCCESS check and no FAILURE or WARNING.
# A scenario whose checks are all SKIPPED is a SKIP for an extension scenario and
# a FAIL otherwise (the client never exercised it). Last line:
# `conformance-VERSION: N passed, M failed`. Exit 0 only when M = 0.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage 0 ;; esac
VERSION="$1"; shift
resolve_suite "$VERSION" || exit 2

SUITE="all"; SCENARIOS=(); SEQUENTIAL=0; SPEC=""; REQS=""; TIMEOUT_MS="60000"; OUT=""; CLIENT=""; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) SUITE="${2:?--suite needs a value}"; shift ;;
    --scenario) SCENARIOS+=("${2:?--scenario needs a value}"); shift ;;
    --sequential) SEQUENTIAL=1 ;;
    --spec-version) SPEC="${2:?--spec-version needs a value}"; shift ;;
    --requirements) REQS="${2:?--requirements needs a value}"; shift ;;
    --timeout) TIMEOUT_MS="${2:?--timeout needs a value}"; shift ;;
    --out) OUT="${2:?--out needs a value}"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) usage 0 ;;
    -*) echo "run-client.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$CLIENT" ] || { echo "run-client.sh: more than one client command (quote it)" >&2; usage; }; CLIENT="$1" ;;
  esac
  shift
done
[ -n "$CLIENT" ] || { echo "run-client.sh: the client command is required" >&2; usage; }
if [ "$VERSION" = "0.1" ] && [ -n "$REQS" ]; then
  echo "run-client.sh: --requirements needs suite version next" >&2; exit 2
fi

ensure_installed || exit 1
OUT="$(make_out_dir "$OUT" client)" || exit 2
CLI_LOG="$OUT/suite-output.txt"
: >"$CLI_LOG"
mkdir -p "$OUT/results"

ARGS=(client --command "$CLIENT" -o "$OUT/results" --timeout "$TIMEOUT_MS")
echo "suite: $SUITE_NAME $SUITE_VERSION, client: $CLIENT"

# The scenario list for one-at-a-time runs.
if [ "$SEQUENTIAL" = 1 ] && [ ${#SCENARIOS[@]} -eq 0 ]; then
  if [ -n "$REQS" ]; then
    mapfile -t SCENARIOS < <(required "$REQS" client; not_scored "$REQS" client)
  elif [ "$SUITE" = "all" ]; then
    mapfile -t SCENARIOS < <(list_scenarios client ${SPEC:+--spec-version "$SPEC"})
  else
    echo "run-client.sh: --sequential works with --suite all, --spec-version or --requirements" >&2; exit 2
  fi
  [ ${#SCENARIOS[@]} -gt 0 ] || { echo "run-client.sh: could not list the scenarios" >&2; exit 1; }
fi

status=0
if [ ${#SCENARIOS[@]} -gt 0 ]; then
  WIRE=()
  [ -n "$SPEC" ] && WIRE=(--spec-version "$SPEC")
  [ -n "$REQS" ] && WIRE=(--spec-version "$REQS")
  for s in "${SCENARIOS[@]}"; do
    run_suite "$CLI_LOG" "${ARGS[@]}" --scenario "$s" "${WIRE[@]}" "${EXTRA[@]}" || status=$?
  done
elif [ -n "$REQS" ]; then
  run_suite "$CLI_LOG" "${ARGS[@]}" --requirements "$REQS" "${EXTRA[@]}" || status=$?
else
  run_suite "$CLI_LOG" "${ARGS[@]}" --suite "$SUITE" ${SPEC:+--spec-version "$SPEC"} "${EXTRA[@]}" || status=$?
fi
echo "suite exit status: $status (verdicts below are read from checks.json)"
echo

SUMMARY_ARGS=(--kind client --results "$OUT/results" --label "conformance-$VERSION" --cli-log "$CLI_LOG")
for s in "${SCENARIOS[@]}"; do SUMMARY_ARGS+=(--expect "$s"); done
while read -r s; do SUMMARY_ARGS+=(--extension "$s"); done < <(extension_scenarios client)
if [ -n "$REQS" ]; then
  while read -r s; do SUMMARY_ARGS+=(--not-scored "$s"); done < <(not_scored "$REQS" client)
  if [ ${#SCENARIOS[@]} -eq 0 ]; then
    while read -r s; do SUMMARY_ARGS+=(--expect "$s"); done < <(required "$REQS" client)
  fi
fi
"$NODE" "$HERE/lib/summarize.mjs" "${SUMMARY_ARGS[@]}"
