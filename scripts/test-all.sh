#!/usr/bin/env bash
# The whole Tessera test suite.
#
#   scripts/test-all.sh [--nextest] [--skip STAGE]...
#
# Stages, run in this order; a failing stage does not stop the ones after it:
#   cargo      cargo test --workspace --no-fail-fast (unit, integration and doc tests)
#              with --nextest: cargo nextest run --workspace --no-fail-fast, then cargo test --workspace --doc
#   interop    tests/interop/run.sh (official TypeScript/Python SDKs and server-everything)
#   (conformance: not wired in yet, see the placeholder below)
#
# Prints one summary line per stage and, last, the aggregate test count
# `N passed, M failed`. A stage that fails without reporting any test (a build
# error, a crash) counts as one failed test, so M > 0 whenever anything failed.
# Exit status: 0 when every stage passed and M = 0, else 1.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

USE_NEXTEST=0
SKIP=" "
while [ $# -gt 0 ]; do
  case "$1" in
    --nextest) USE_NEXTEST=1 ;;
    --skip) shift; SKIP+="${1:-} " ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-all.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/tessera-test-all.XXXXXX")"
TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=()
ANY_STAGE_FAILED=0

banner() { printf '\n===== %s =====\n' "$*"; }

# run_logged LOG CMD... : run CMD with output shown live and saved to LOG; returns CMD's status.
run_logged() {
  local log="$1"; shift
  "$@" </dev/null 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

# record STAGE STATUS PASSED FAILED EXTRA SECONDS
record() {
  local stage="$1" status="$2" passed="$3" failed="$4" extra="$5" secs="$6" verdict="ok"
  if [ "$status" != 0 ] || [ "$failed" -gt 0 ]; then
    verdict="FAILED (exit $status)"
    ANY_STAGE_FAILED=1
    # A failing stage that counted no failed test still has to show up in M.
    [ "$failed" -eq 0 ] && failed=1
  fi
  TOTAL_PASSED=$((TOTAL_PASSED + passed))
  TOTAL_FAILED=$((TOTAL_FAILED + failed))
  SUMMARY+=("stage $stage: $verdict, tests $passed passed / $failed failed${extra:+, $extra} (${secs}s)")
}

# Sum cargo's per-binary lines: "test result: ok. 12 passed; 0 failed; 1 ignored; ..."
cargo_counts() { # LOG -> "passed failed ignored"
  awk '
    /^test result: / {
      for (i = 1; i <= NF; i++) {
        if ($(i+1) ~ /^passed;?$/) p += $i
        if ($(i+1) ~ /^failed;?$/) f += $i
        if ($(i+1) ~ /^ignored;?$/) ig += $i
      }
    }
    END { printf "%d %d %d\n", p, f, ig }
  ' "$1"
}

# nextest's closing line: "Summary [ 1.2s] 40 tests run: 39 passed, 1 failed, 2 skipped"
nextest_counts() { # LOG -> "passed failed skipped"
  awk '
    /Summary \[/ && /tests? run:/ {
      p = 0; f = 0; s = 0
      for (i = 1; i <= NF; i++) {
        w = $(i+1); gsub(/[,]/, "", w)
        if (w == "passed" || w == "passed)") p = $i
        if (w == "failed") f = $i
        if (w == "skipped") s = $i
        if (w == "timed") f += $i
      }
    }
    END { printf "%d %d %d\n", p, f, s }
  ' "$1"
}

stage_skipped() { [[ "$SKIP" == *" $1 "* ]]; }

# ------------------------------------------------------------------ stage: cargo
if ! stage_skipped cargo; then
  log="$LOGS/cargo.log"; : >"$log"
  start=$SECONDS
  if [ "$USE_NEXTEST" = 1 ]; then
    banner "cargo nextest run --workspace"
    run_logged "$log" cargo nextest run --workspace --no-fail-fast; st=$?
    read -r p f s < <(nextest_counts "$log")
    banner "cargo test --workspace --doc"
    dlog="$LOGS/cargo-doc.log"; : >"$dlog"
    run_logged "$dlog" cargo test --workspace --doc --no-fail-fast; dst=$?
    read -r dp df di < <(cargo_counts "$dlog")
    [ "$st" = 0 ] && st=$dst
    record cargo "$st" $((p + dp)) $((f + df)) "$((s + di)) skipped/ignored" $((SECONDS - start))
  else
    banner "cargo test --workspace"
    run_logged "$log" cargo test --workspace --no-fail-fast; st=$?
    read -r p f ig < <(cargo_counts "$log")
    record cargo "$st" "$p" "$f" "$ig ignored" $((SECONDS - start))
  fi
fi

# ---------------------------------------------------------------- stage: interop
if ! stage_skipped interop; then
  banner "tests/interop/run.sh"
  log="$LOGS/interop.log"; : >"$log"
  start=$SECONDS
  run_logged "$log" bash tests/interop/run.sh; st=$?
  line="$(grep -E '^interop: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)"
  p="$(sed -E 's/^interop: ([0-9]+) passed.*/\1/' <<<"$line")"
  f="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")"
  record interop "$st" "${p:-0}" "${f:-0}" "" $((SECONDS - start))
fi

# ------------------------------------------------------------ stage: conformance
# PLACEHOLDER, not wired in yet. When the server and client can take the suite,
# add stages like these (each prints `conformance-<ver>: N passed, M failed`):
#
#   bash conformance/run-server.sh 0.1 --stdio "$TESSERA_BIN serve --stdio"
#   bash conformance/run-server.sh next --stdio "$TESSERA_BIN serve --stdio"
#   bash conformance/run-client.sh 0.1 "<tessera conformance client command>"
#
# and parse their last line the same way as the interop stage above.

# ---------------------------------------------------------------------- summary
banner "summary"
for s in "${SUMMARY[@]}"; do echo "$s"; done
echo "logs: $LOGS"
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ "$ANY_STAGE_FAILED" = 0 ] && [ "$TOTAL_FAILED" = 0 ]
