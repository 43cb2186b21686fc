#!/usr/bin/env bash
# The whole Tessera test suite.
#
#   scripts/test-all.sh [--nextest] [--skip STAGE]...
#
# Stages, run in this order; a failing stage does not stop the ones after it:
#   cargo      cargo test --workspace --no-fail-fast (unit, integration and doc tests)
#              with --nextest: cargo nextest run --workspace --no-fail-fast, then cargo test --workspace --doc
#   examples   scripts/examples.sh (builds examples/ and runs each one briefly)
#   interop    tests/interop/run.sh (official TypeScript/Python SDKs and server-everything)
#   conformance the official conformance suite (0.1.16 and 0.2.0-alpha.12) against
#              `tessera serve --http`, through the stdio bridge `tessera serve --stdio`,
#              and through `tessera proxy --http` fronting `tessera serve --stdio`
#   tasks      the tasks-* scenarios of 0.2.0-alpha.12 against `tessera serve --http
#              --task-store sqlite:FILE`
#   cluster    the conformance suite (0.1.16, both wires of 0.2.0-alpha.12, tasks,
#              skills) and the interop cases of the official SDK clients
#              (tests/interop/run.sh --url) through HAProxy in front of three
#              `tessera serve --http --redis` instances (scripts/cluster.sh)
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
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# --------------------------------------------------------------- stage: examples
if ! stage_skipped examples; then
  banner "scripts/examples.sh"
  log="$LOGS/examples.log"; : >"$log"
  start=$SECONDS
  run_logged "$log" bash scripts/examples.sh; st=$?
  line="$(grep -E '^examples: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)"
  p="$(sed -E 's/^examples: ([0-9]+) passed.*/\1/' <<<"$line")"
  f="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")"
  record examples "$st" "${p:-0}" "${f:-0}" "" $((SECONDS - start))
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
# The official conformance suite (conformance/, both pinned versions) against
# `tessera serve --http` on a free loopback port, and against
# `tessera serve --stdio` behind the stdio->HTTP bridge.
conformance_run() { # NAME LOG CMD... : run one suite, record its closing line
  local name="$1" log="$2"; shift 2
  local start=$SECONDS st line p f
  banner "conformance: $name"
  : >"$log"
  run_logged "$log" "$@"; st=$?
  line="$(grep -E '^conformance-[a-z0-9.]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)"
  p="$(sed -E 's/^[^:]+: ([0-9]+) passed.*/\1/' <<<"$line")"
  f="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")"
  record "conformance $name" "$st" "${p:-0}" "${f:-0}" "scenarios" $((SECONDS - start))
}

if ! stage_skipped conformance; then
  TESSERA_BIN="${TESSERA_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/tessera}"
  cargo build -q -p tessera-cli </dev/null || echo "test-all.sh: building tessera-cli failed" >&2
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  # With the skills fixtures the Skills scenarios (sep-2640-*) expect.
  "$TESSERA_BIN" serve --http "127.0.0.1:$PORT" --skills conformance/fixtures/skills \
    >"$LOGS/http-server.log" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$PORT/mcp"
  # Wait (bounded) for the listener.
  for _ in $(seq 1 100); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$PORT" 2>/dev/null && break
    sleep 0.1
  done
  conformance_run "0.1.16 http" "$LOGS/conf-01.log" bash conformance/run-server.sh 0.1 "$URL"
  conformance_run "0.2.0-alpha.12 http 2025-11-25" "$LOGS/conf-next-1125.log" \
    bash conformance/run-server.sh next --spec-version 2025-11-25 "$URL"
  conformance_run "0.2.0-alpha.12 http 2026-07-28" "$LOGS/conf-next-0728.log" \
    bash conformance/run-server.sh next --spec-version 2026-07-28 "$URL"
  # The Skills extension scenarios belong to no spec version: named one by
  # one, run at the suite's default version.
  conformance_run "0.2.0-alpha.12 http skills" "$LOGS/conf-next-skills.log" \
    bash conformance/run-server.sh next --scenario sep-2640-skills-enumeration \
      --scenario sep-2640-skills-manifest --scenario sep-2640-skills-directory "$URL"
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
  conformance_run "0.1.16 stdio bridge" "$LOGS/conf-01-stdio.log" \
    bash conformance/run-server.sh 0.1 --stdio "$TESSERA_BIN serve --stdio"
  # The same three server suites through `tessera proxy --http` fronting
  # `tessera serve --stdio`: the counts must equal the server's own.
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  "$TESSERA_BIN" proxy --http "127.0.0.1:$PORT" -- "$TESSERA_BIN" serve --stdio >"$LOGS/proxy.log" 2>&1 &
  PROXY_PID=$!
  for _ in $(seq 1 100); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$PORT" 2>/dev/null && break
    sleep 0.1
  done
  URL="http://127.0.0.1:$PORT/mcp"
  conformance_run "0.1.16 proxy" "$LOGS/conf-01-proxy.log" bash conformance/run-server.sh 0.1 "$URL"
  conformance_run "0.2.0-alpha.12 proxy 2025-11-25" "$LOGS/conf-next-1125-proxy.log" \
    bash conformance/run-server.sh next --spec-version 2025-11-25 "$URL"
  conformance_run "0.2.0-alpha.12 proxy 2026-07-28" "$LOGS/conf-next-0728-proxy.log" \
    bash conformance/run-server.sh next --spec-version 2026-07-28 "$URL"
  kill "$PROXY_PID" 2>/dev/null; wait "$PROXY_PID" 2>/dev/null
  # The client scenarios that need no authorization, one at a time (the
  # sse-retry timing check is tight on two cores).
  CLIENT_BIN="$(dirname "$TESSERA_BIN")/conformance-client"
  conformance_run "0.1.16 client" "$LOGS/conf-01-client.log" \
    bash conformance/run-client.sh 0.1 --scenario initialize --scenario tools_call \
      --scenario elicitation-sep1034-client-defaults --scenario sse-retry "$CLIENT_BIN"
  # Suite 0.2.0-alpha.12: every client scenario of each wire that needs no
  # authorization (the 4 sep-2640-* skills scenarios are an extension and
  # belong to no version). Named one by one, so a scenario the suite drops or
  # renames shows up as a failure here instead of silently not running.
  conformance_run "0.2.0-alpha.12 client 2025-11-25" "$LOGS/conf-next-client-1125.log" \
    bash conformance/run-client.sh next --spec-version 2025-11-25 \
      --scenario initialize --scenario tools_call \
      --scenario elicitation-sep1034-client-defaults --scenario sse-retry \
      --scenario json-schema-2020-12-preservation "$CLIENT_BIN"
  conformance_run "0.2.0-alpha.12 client 2026-07-28" "$LOGS/conf-next-client-0728.log" \
    bash conformance/run-client.sh next --spec-version 2026-07-28 \
      --scenario tools_call --scenario request-metadata \
      --scenario sep-2322-client-request-state --scenario http-standard-headers \
      --scenario http-custom-headers --scenario http-invalid-tool-headers \
      --scenario json-schema-ref-no-deref --scenario json-schema-2020-12-preservation \
      "$CLIENT_BIN"
  # The Skills extension's client scenarios (no spec version: an extension).
  conformance_run "0.2.0-alpha.12 client skills" "$LOGS/conf-next-client-skills.log" \
    bash conformance/run-client.sh next --scenario sep-2640-client-no-prefetch \
      --scenario sep-2640-client-verify-digest --scenario sep-2640-client-verify-size \
      --scenario sep-2640-client-verify-frontmatter "$CLIENT_BIN"
  # The OAuth client scenarios (every auth/* scenario of each suite: 22 in
  # 0.1.16 = suites auth, backcompat, draft, extensions; 33 in 0.2.0-alpha.12),
  # one at a time: each starts mock authorization servers.
  auth_client_stage() { # NAME VERSION LOG
    local args=() s
    while read -r s; do args+=(--scenario "$s"); done < <(
      HERE="$ROOT/conformance" bash -c '. "$HERE/lib/common.sh"; resolve_suite "$1" &&
        ensure_installed >&2 && list_scenarios client' _ "$2" | grep '^auth/')
    if [ ${#args[@]} -eq 0 ]; then
      record "conformance $1" 1 0 0 "could not list the scenarios" 0; return
    fi
    conformance_run "$1" "$3" bash conformance/run-client.sh "$2" "${args[@]}" "$CLIENT_BIN"
  }
  auth_client_stage "0.1.16 client auth" 0.1 "$LOGS/conf-01-client-auth.log"
  auth_client_stage "0.2.0-alpha.12 client auth" next "$LOGS/conf-next-client-auth.log"
fi

# ------------------------------------------------------------------ stage: tasks
# The ten tasks-* server scenarios of 0.2.0-alpha.12 (SEP-2663, the Tasks
# extension) against `tessera serve --http` with its tasks in an SQLite file,
# named one by one (tasks-status-notifications is always skipped by this suite
# version).
if ! stage_skipped tasks; then
  TESSERA_BIN="${TESSERA_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/tessera}"
  cargo build -q -p tessera-cli </dev/null || echo "test-all.sh: building tessera-cli failed" >&2
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  rm -f "$LOGS/tasks.db"
  "$TESSERA_BIN" serve --http "127.0.0.1:$PORT" --task-store "sqlite:$LOGS/tasks.db" \
    >"$LOGS/tasks-server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$PORT" 2>/dev/null && break
    sleep 0.1
  done
  conformance_run "0.2.0-alpha.12 tasks (sqlite store)" "$LOGS/conf-tasks.log" \
    bash conformance/run-server.sh next \
      --scenario tasks-lifecycle --scenario tasks-capability-negotiation \
      --scenario tasks-wire-fields --scenario tasks-request-state-removal \
      --scenario tasks-mrtr-input --scenario tasks-request-headers \
      --scenario tasks-dispatch-and-envelope --scenario tasks-status-notifications \
      --scenario tasks-required-task-error --scenario tasks-mrtr-composition \
      "http://127.0.0.1:$PORT/mcp"
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
fi

# ---------------------------------------------------------------- stage: cluster
# The official conformance suite through HAProxy (round-robin per request, no
# stickiness) in front of three `tessera serve --http --redis` instances sharing
# a private redis-server: scripts/cluster.sh up|down. Each request may land on
# another instance, so the counts prove that any instance serves any request.
if ! stage_skipped cluster; then
  TESSERA_BIN="${TESSERA_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/tessera}"
  cargo build -q -p tessera-cli </dev/null || echo "test-all.sh: building tessera-cli failed" >&2
  export TESSERA_BIN
  CLUSTER_DIR="$LOGS/cluster"
  if URL="$(TESSERA_CLUSTER_DIR="$CLUSTER_DIR" bash scripts/cluster.sh up \
      -- --skills conformance/fixtures/skills 2>"$LOGS/cluster-up.log")"; then
    conformance_run "0.1.16 cluster" "$LOGS/conf-01-cluster.log" \
      bash conformance/run-server.sh 0.1 --suite all "$URL"
    conformance_run "0.2.0-alpha.12 cluster 2025-11-25" "$LOGS/conf-next-1125-cluster.log" \
      bash conformance/run-server.sh next --spec-version 2025-11-25 "$URL"
    conformance_run "0.2.0-alpha.12 cluster 2026-07-28" "$LOGS/conf-next-0728-cluster.log" \
      bash conformance/run-server.sh next --spec-version 2026-07-28 "$URL"
    conformance_run "0.2.0-alpha.12 cluster tasks" "$LOGS/conf-tasks-cluster.log" \
      bash conformance/run-server.sh next \
        --scenario tasks-lifecycle --scenario tasks-capability-negotiation \
        --scenario tasks-wire-fields --scenario tasks-request-state-removal \
        --scenario tasks-mrtr-input --scenario tasks-request-headers \
        --scenario tasks-dispatch-and-envelope --scenario tasks-status-notifications \
        --scenario tasks-required-task-error --scenario tasks-mrtr-composition "$URL"
    conformance_run "0.2.0-alpha.12 cluster skills" "$LOGS/conf-next-skills-cluster.log" \
      bash conformance/run-server.sh next --scenario sep-2640-skills-enumeration \
        --scenario sep-2640-skills-manifest --scenario sep-2640-skills-directory "$URL"
    # The official SDK clients' cases against `tessera serve --http`, through the balancer.
    banner "tests/interop/run.sh --url (cluster)"
    log="$LOGS/interop-cluster.log"; : >"$log"
    start=$SECONDS
    run_logged "$log" bash tests/interop/run.sh --url "$URL"; st=$?
    line="$(grep -E '^interop: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)"
    p="$(sed -E 's/^interop: ([0-9]+) passed.*/\1/' <<<"$line")"
    f="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$line")"
    record "interop cluster" "$st" "${p:-0}" "${f:-0}" "" $((SECONDS - start))
    TESSERA_CLUSTER_DIR="$CLUSTER_DIR" bash scripts/cluster.sh down 2>>"$LOGS/cluster-up.log"
  else
    cat "$LOGS/cluster-up.log" >&2
    record cluster 1 0 0 "the cluster did not start" 0
  fi
fi
# ---------------------------------------------------------------------- summary
banner "summary"
for s in "${SUMMARY[@]}"; do echo "$s"; done
echo "logs: $LOGS"
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ "$ANY_STAGE_FAILED" = 0 ] && [ "$TOTAL_FAILED" = 0 ]
