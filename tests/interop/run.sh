#!/usr/bin/env bash
# Interop checks for the tessera binary against the official MCP SDKs and servers.
#
#   tests/interop/run.sh [--list] [--no-controls] [--keep] [--url URL] [FILTER...]
#   tests/interop/run.sh --setup      only install node_modules and .venv, then exit
#
# FILTER: shell glob(s) matched against case names (e.g. 'py-sdk/*' or '*everything*').
# --url URL: run only the cases whose server is `tessera serve --http` (Streamable HTTP),
#   against the endpoint URL instead of a server started here: e.g. the balancer of
#   scripts/cluster.sh (started with `-- --skills conformance/fixtures/skills` for the
#   skills case).
# Environment:
#   TESSERA_BIN         tessera binary to test (default: build with `cargo build -p tessera-cli`
#                       and use $CARGO_TARGET_DIR/debug/tessera, i.e. target/debug/tessera)
#   INTEROP_TIMEOUT     seconds per case (default 60)
#   INTEROP_CONTROLS=0  skip the control cases (official clients against official servers,
#                       which prove the harness itself works)
#   INTEROP_OUT         folder for per-case logs (default: a new folder under $TMPDIR)
#   PYTHON              interpreter used to create .venv (default: python3.11, else python3)
#
# Installs what is missing: node_modules (npm ci from package-lock.json) and .venv
# (pip install -r requirements.txt). Prints PASS/FAIL per case and, last,
# `interop: N passed, M failed`. Exits 0 only when M = 0.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TIMEOUT="${INTEROP_TIMEOUT:-60}"
CONTROLS="${INTEROP_CONTROLS:-1}"
LIST_ONLY=0
SETUP_ONLY=0
KEEP=0
FILTERS=()
SERVER_URL=""

while [ $# -gt 0 ]; do
  case "$1" in
    --list) LIST_ONLY=1 ;;
    --setup) SETUP_ONLY=1 ;;
    --no-controls) CONTROLS=0 ;;
    --keep) KEEP=1 ;;
    --url) SERVER_URL="${2:?--url needs a URL}"; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) FILTERS+=("$1") ;;
  esac
  shift
done

PASSED=0
FAILED=0
EVERYTHING_JS="$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
VENV_PY="$HERE/.venv/bin/python"
REFERENCE_PY="$HERE/fixtures/reference_server.py"

# ---------------------------------------------------------------- case table
# name | needs (node, py, tessera; comma separated) | function
CASES=(
  "ts-sdk/legacy|node,tessera|case_ts_sdk"
  "py-sdk/legacy|py,tessera|case_py_legacy"
  "py-sdk/2026-07-28-discover|py,tessera|case_py_discover"
  "py-sdk/2026-07-28-pinned|py,tessera|case_py_pinned"
  "cli/list-tools-everything|node,tessera|case_cli_list_everything"
  "cli/list-tools-json-everything|node,tessera|case_cli_list_json_everything"
  "cli/call-echo-everything|node,tessera|case_cli_call_echo_everything"
  "cli/call-echo-json-everything|node,tessera|case_cli_call_echo_json_everything"
  "cli/call-get-sum-everything|node,tessera|case_cli_call_sum_everything"
  "cli/call-unknown-tool-exit-5|node,tessera|case_cli_unknown_tool"
  "cli/verbs-everything|node,tessera|case_cli_verbs_everything"
  "cli/verbs-http-everything|node,tessera|case_cli_verbs_http_everything"
  "cli/verbs-py-reference-legacy|py,tessera|case_cli_verbs_py_legacy"
  "cli/verbs-py-reference-2026-07-28|py,tessera|case_cli_verbs_py_modern"
  "cli/verbs-http-py-reference|py,tessera|case_cli_verbs_http_py"
  "cli/call-bad-json-exit-2|node,tessera|case_cli_bad_json"
  "ts-sdk/streamable-http|node,tessera|case_ts_sdk_http"
  "ts-sdk/legacy-http-sse|node,tessera|case_ts_sdk_sse"
  "ext-tasks/http-task-lifecycle|node,tessera|case_ext_tasks_http"
  "ext-tasks/http-2026-07-28-task-lifecycle|node,tessera|case_ext_tasks_http_modern"
  "ext-skills/ts-client-tessera-server|node,tessera|case_skills_ts_client"
  "ext-skills/ts-client-2026-07-28-auto|node,tessera|case_skills_ts_client_auto"
  "ext-skills/ts-client-2026-07-28-pinned|node,tessera|case_skills_ts_client_pinned"
  "ext-skills/tessera-verify-ts-server|node,tessera|case_skills_ts_server"
  "cli/http-call-echo-everything|node,tessera|case_cli_http_everything"
  "cli/http-list-tools-everything|node,tessera|case_cli_http_list_everything"
  "cli/sse-list-tools-everything|node,tessera|case_cli_sse_list_everything"
  "cli/sse-call-echo-everything|node,tessera|case_cli_sse_call_everything"
  "py-sdk/http-legacy|py,tessera|case_py_http_legacy"
  "py-sdk/http-2026-07-28-discover|py,tessera|case_py_http_discover"
  "py-sdk/http-2026-07-28-pinned|py,tessera|case_py_http_pinned"
  "cli/http-list-and-call-tessera|tessera|case_cli_http_tessera"
  "proxy/ts-sdk-http-everything|node,tessera|case_proxy_ts_http_everything"
  "proxy/ts-sdk-sse-everything|node,tessera|case_proxy_ts_sse_everything"
  "proxy/tessera-2026-07-28-everything|node,tessera|case_proxy_modern_everything"
  "proxy/tessera-2025-11-25-everything|node,tessera|case_proxy_legacy_everything"
  "proxy/sse-upstream-everything|node,tessera|case_proxy_sse_upstream_everything"
  "proxy/gateway-everything-stdio-and-py-http|node,py,tessera|case_proxy_gateway_everything_py"
  "cli/list-tools-py-reference|py,tessera|case_cli_list_reference"
  "cli/call-echo-py-reference|py,tessera|case_cli_call_reference"
  "control/ts-sdk-everything|node|case_control_ts_everything"
  "control/ts-sdk-py-reference|node,py|case_control_ts_reference"
  "control/py-sdk-py-reference-legacy|py|case_control_py_reference_legacy"
  "control/py-sdk-py-reference-discover|py|case_control_py_reference_discover"
)

# The cases whose server is `tessera serve --http`: with --url they use that endpoint.
URL_CASES=" ts-sdk/streamable-http ext-tasks/http-task-lifecycle ext-tasks/http-2026-07-28-task-lifecycle
  ext-skills/ts-client-tessera-server ext-skills/ts-client-2026-07-28-auto ext-skills/ts-client-2026-07-28-pinned
  py-sdk/http-legacy py-sdk/http-2026-07-28-discover py-sdk/http-2026-07-28-pinned
  cli/http-list-and-call-tessera "

selected() { # NAME -> 0 if the case is to run
  local name="$1" f
  if [ "$CONTROLS" = "0" ] && [[ "$name" == control/* ]]; then return 1; fi
  if [ -n "$SERVER_URL" ] && [[ "$URL_CASES" != *[[:space:]]"$name"[[:space:]]* ]]; then return 1; fi
  [ ${#FILTERS[@]} -eq 0 ] && return 0
  for f in "${FILTERS[@]}"; do
    # shellcheck disable=SC2053
    [[ "$name" == $f ]] && return 0
  done
  return 1
}

if [ "$LIST_ONLY" = 1 ]; then
  for c in "${CASES[@]}"; do
    name="${c%%|*}"
    selected "$name" && echo "$name"
  done
  exit 0
fi

if [ -n "${INTEROP_OUT:-}" ]; then
  OUT="$INTEROP_OUT"
  mkdir -p "$OUT"
else
  OUT="$(mktemp -d "${TMPDIR:-/tmp}/tessera-interop.XXXXXX")"
fi

say() { printf '%s\n' "$*"; }
indent() { sed 's/^/    | /'; }

# --------------------------------------------------------------------- setup
# Each setup step sets READY_<x>=1 or records why it is not ready.
READY_node=0; WHY_node=""
READY_py=0; WHY_py=""
READY_tessera=0; WHY_tessera=""

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

setup_node() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    WHY_node="node/npm not installed"; return
  fi
  local stamp="$HERE/node_modules/.tessera-lock.sha256" want
  want="$(sha_of "$HERE/package-lock.json")"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -f "$EVERYTHING_JS" ]; then
    say "setup: npm ci in tests/interop"
    if ! (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >"$OUT/setup-npm.log" 2>&1; then
      WHY_node="npm ci failed (see $OUT/setup-npm.log)"
      tail -n 20 "$OUT/setup-npm.log" | indent
      return
    fi
    echo "$want" >"$stamp"
  fi
  READY_node=1
}

pick_python() {
  local cand
  for cand in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$cand" ] || continue
    command -v "$cand" >/dev/null 2>&1 || continue
    if "$cand" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1; then
      echo "$cand"; return 0
    fi
  done
  return 1
}

setup_py() {
  local stamp="$HERE/.venv/.tessera-requirements.sha256" want py
  want="$(sha_of "$HERE/requirements.txt")"
  if [ -x "$VENV_PY" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    READY_py=1; return
  fi
  if ! py="$(pick_python)"; then
    WHY_py="no Python >= 3.10 with the venv module found"; return
  fi
  say "setup: creating tests/interop/.venv with $py and installing requirements.txt"
  rm -rf "$HERE/.venv"
  if ! { "$py" -m venv "$HERE/.venv" && "$VENV_PY" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt"; } \
      >"$OUT/setup-venv.log" 2>&1; then
    WHY_py="venv/pip install failed (see $OUT/setup-venv.log)"
    tail -n 20 "$OUT/setup-venv.log" | indent
    return
  fi
  echo "$want" >"$stamp"
  READY_py=1
}

setup_tessera() {
  if [ -n "${TESSERA_BIN:-}" ]; then
    TESSERA="$TESSERA_BIN"
  else
    local target="${CARGO_TARGET_DIR:-$ROOT/target}"
    case "$target" in /*) ;; *) target="$ROOT/$target" ;; esac
    TESSERA="$target/debug/tessera"
    # Always ask cargo: a no-op when the binary is fresh, and never tests a stale one.
    say "setup: cargo build -p tessera-cli -p tessera-examples --bin tessera --example client_call"
    if ! (cd "$ROOT" && cargo build -q -p tessera-cli -p tessera-examples --bin tessera --example client_call) >"$OUT/setup-cargo.log" 2>&1; then
      tail -n 30 "$OUT/setup-cargo.log" | indent
      if [ -x "$TESSERA" ]; then
        say "setup: build failed; testing the existing $TESSERA"
      else
        WHY_tessera="cargo build -p tessera-cli failed (see $OUT/setup-cargo.log)"; return
      fi
    fi
  fi
  if [ ! -x "$TESSERA" ]; then
    WHY_tessera="tessera binary not found at $TESSERA"; return
  fi
  CLIENT_CALL="${CLIENT_CALL_BIN:-$(dirname "$TESSERA")/examples/client_call}"

  READY_tessera=1
}

needs_of() { # union of needs over the selected cases
  local c name needs
  for c in "${CASES[@]}"; do
    name="${c%%|*}"; needs="${c#*|}"; needs="${needs%%|*}"
    selected "$name" && echo "$needs" | tr ',' '\n'
  done | sort -u
}
if [ "$SETUP_ONLY" = 1 ]; then
  setup_node; setup_py
  [ "$READY_node" = 1 ] || say "setup: node: $WHY_node"
  [ "$READY_py" = 1 ] || say "setup: python: $WHY_py"
  if [ "$READY_node" = 1 ] && [ "$READY_py" = 1 ]; then
    rm -rf "$OUT"; say "setup: node_modules and .venv are ready"
  fi
  exit $(( READY_node == 1 && READY_py == 1 ? 0 : 1 ))
fi
NEEDS="$(needs_of)"
grep -qx node <<<"$NEEDS" && setup_node
grep -qx py <<<"$NEEDS" && setup_py
grep -qx tessera <<<"$NEEDS" && setup_tessera

# ------------------------------------------------------------------- helpers
# run_cmd LABEL CMD... : runs CMD with the per-case timeout and no stdin.
# Sets RC, and STDOUT/STDERR to the files holding its output.
run_cmd() {
  local label="$1"; shift
  STDOUT="$CASE_DIR/$label.out"; STDERR="$CASE_DIR/$label.err"
  {
    printf '$'; printf ' %q' "$@"; printf '\n'
  } >>"$CASE_LOG"
  timeout -k 5 "$TIMEOUT" "$@" </dev/null >"$STDOUT" 2>"$STDERR"
  RC=$?
  {
    echo "[exit $RC]"
    echo "--- stdout"; cat "$STDOUT"
    echo "--- stderr"; cat "$STDERR"
  } >>"$CASE_LOG"
  if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
    REASON="timed out after ${TIMEOUT}s: $(printf '%q ' "$@")"
    return 1
  fi
  return 0
}

# Reason from a client's own "FAIL ..." line (first line of it), else a generic one.
client_reason() {
  local line
  line="$(grep -h -m1 '^FAIL ' "$STDERR" "$STDOUT" 2>/dev/null | head -n1)"
  if [ -n "$line" ]; then REASON="${line#FAIL }"; else REASON="exit $RC, $(tail -n1 "$STDERR" | cut -c1-200)"; fi
}

# run_client CMD... : a client script that exits 0 on success and prints FAIL on error.
run_client() {
  run_cmd client "$@" || return 1
  if [ "$RC" != 0 ]; then client_reason; return 1; fi
  return 0
}

# JSON query with node: jq_node FILE 'JS-EXPRESSION over v' -> prints result, fails on exception.
json_eval() {
  node -e '
    const fs = require("fs");
    let v;
    try { v = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); }
    catch (e) { console.error("not JSON: " + e.message); process.exit(3); }
    const r = (new Function("v", "return (" + process.argv[2] + ");"))(v);
    if (r === false || r === undefined || r === null) process.exit(1);
    if (r !== true) console.log(typeof r === "string" ? r : JSON.stringify(r));
  ' "$1" "$2"
}

first_line() { head -c 300 "$1" | head -n1; }

# -------------------------------------------------------------------- cases
everything_cmd=(node "$EVERYTHING_JS" stdio)
reference_cmd=("$VENV_PY" "$REFERENCE_PY")

case_ts_sdk() { run_client node "$HERE/ts_client.mjs" -- "$TESSERA" serve --stdio; }
case_py_legacy() { run_client "$VENV_PY" "$HERE/py_client.py" --mode legacy -- "$TESSERA" serve --stdio; }
case_py_discover() { run_client "$VENV_PY" "$HERE/py_client.py" --mode discover -- "$TESSERA" serve --stdio; }
case_py_pinned() { run_client "$VENV_PY" "$HERE/py_client.py" --mode pinned -- "$TESSERA" serve --stdio; }

case_control_ts_everything() { run_client node "$HERE/ts_client.mjs" --profile everything -- "${everything_cmd[@]}"; }
case_control_ts_reference() { run_client node "$HERE/ts_client.mjs" -- "${reference_cmd[@]}"; }
case_control_py_reference_legacy() { run_client "$VENV_PY" "$HERE/py_client.py" --mode legacy -- "${reference_cmd[@]}"; }
case_control_py_reference_discover() { run_client "$VENV_PY" "$HERE/py_client.py" --mode discover -- "${reference_cmd[@]}"; }

# expect_exit WANT : checks RC of the last run_cmd.
expect_exit() {
  if [ "$RC" != "$1" ]; then
    REASON="exit $RC, expected $1; stderr: $(first_line "$STDERR")"
    return 1
  fi
}

# expect_stdout_has TEXT
expect_stdout_has() {
  if ! grep -qF -- "$1" "$STDOUT"; then
    REASON="stdout lacks $(printf '%q' "$1"); stdout starts: $(first_line "$STDOUT")"
    return 1
  fi
}

list_tools_human() { # SERVER-CMD... ; expects tool names $WANT_TOOLS in the listing
  run_cmd list "$TESSERA" list tools -- "$@" || return 1
  expect_exit 0 || return 1
  local t
  for t in $WANT_TOOLS; do
    if ! grep -qE "(^|[^A-Za-z0-9_-])$t([^A-Za-z0-9_-]|$)" "$STDOUT"; then
      REASON="tool $t not in the listing; stdout starts: $(first_line "$STDOUT")"
      return 1
    fi
  done
}

case_cli_list_everything() { WANT_TOOLS="echo get-sum" list_tools_human "${everything_cmd[@]}"; }
case_cli_list_reference() { WANT_TOOLS="echo add" list_tools_human "${reference_cmd[@]}"; }

case_cli_list_json_everything() {
  run_cmd list "$TESSERA" list tools --json -- "${everything_cmd[@]}" || return 1
  expect_exit 0 || return 1
  local r
  r="$(json_eval "$STDOUT" 'Array.isArray(v.tools) && (v.tools.find(t => t.name === "echo") || {}).inputSchema ? true : "tools[] has no echo tool with an inputSchema"' 2>&1)"
  if [ $? != 0 ] || [ -n "$r" ]; then REASON="--json output: ${r:-unexpected shape}; stdout starts: $(first_line "$STDOUT")"; return 1; fi
}

case_cli_call_echo_everything() {
  run_cmd call "$TESSERA" call echo '{"message":"hi"}' -- "${everything_cmd[@]}" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "Echo: hi"
}

case_cli_call_echo_json_everything() {
  run_cmd call "$TESSERA" call echo '{"message":"hi"}' --json -- "${everything_cmd[@]}" || return 1
  expect_exit 0 || return 1
  local r
  r="$(json_eval "$STDOUT" 'Array.isArray(v.content) && v.content[0] && v.content[0].type === "text" && v.content[0].text === "Echo: hi" ? true : "content[0] is not the text \"Echo: hi\""' 2>&1)"
  if [ $? != 0 ] || [ -n "$r" ]; then REASON="--json output: ${r:-unexpected shape}; stdout starts: $(first_line "$STDOUT")"; return 1; fi
}

case_cli_call_sum_everything() {
  run_cmd call "$TESSERA" call get-sum '{"a":2,"b":3}' -- "${everything_cmd[@]}" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "5"
}

case_cli_call_reference() {
  run_cmd call "$TESSERA" call echo '{"text":"hi from tessera"}' -- "${reference_cmd[@]}" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "hi from tessera"
}

# A server on a free loopback port for the HTTP cases; HTTP_PID and HTTP_URL are set.
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
start_http() { # PORT-ENV(yes|no|proxy) PATH CMD...   (proxy: `tessera proxy --http ADDR -- CMD...`)
  local use_env="$1" path="$2"; shift 2
  local port; port="$(free_port)"
  if [ "$use_env" = yes ]; then
    PORT="$port" "$@" >"$OUT/http-server-$port.log" 2>&1 &
  elif [ "$use_env" = proxy ]; then
    "$TESSERA" proxy --http "127.0.0.1:$port" -- "$@" >"$OUT/http-server-$port.log" 2>&1 &
  else
    "$@" "127.0.0.1:$port" >"$OUT/http-server-$port.log" 2>&1 &
  fi
  HTTP_PID=$!
  HTTP_URL="http://127.0.0.1:$port$path"
  local i
  for i in $(seq 1 100); do
    node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$port" && return 0
    sleep 0.1
  done
  REASON="the HTTP server did not start (see $OUT/http-server-$port.log)"
  return 1
}
stop_http() {
  [ -n "$HTTP_PID" ] || return 0
  kill "$HTTP_PID" 2>/dev/null; wait "$HTTP_PID" 2>/dev/null
}
# `tessera serve [ARGS...] --http` for a case: the endpoint given with --url, else one
# started here on a free port. HTTP_URL is set.
start_tessera() { # ARGS...
  if [ -n "$SERVER_URL" ]; then HTTP_PID=""; HTTP_URL="$SERVER_URL"; return 0; fi
  start_http no /mcp "$TESSERA" serve "$@" --http
}

# `tessera call` over Streamable HTTP against the official server-everything
# (a legacy server: the client falls back from server/discover to initialize).
case_cli_http_everything() {
  start_http yes /mcp node "$EVERYTHING_JS" streamableHttp || { stop_http; return 1; }
  run_cmd call "$TESSERA" call echo '{"message":"hi over http"}' "$HTTP_URL"; local st=$?
  stop_http
  [ "$st" = 0 ] || return 1
  expect_exit 0 || return 1
  expect_stdout_has "Echo: hi over http"
}

# `tessera list tools` over Streamable HTTP against server-everything.
case_cli_http_list_everything() {
  start_http yes /mcp node "$EVERYTHING_JS" streamableHttp || { stop_http; return 1; }
  WANT_TOOLS="echo get-sum" list_tools_url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}

# The same two verbs against server-everything in its `sse` mode: the legacy
# 2024-11-05 HTTP+SSE transport (GET /sse, POST /message). The URL is the SSE
# one; the client's POST to it is refused and it falls back to HTTP+SSE.
case_cli_sse_list_everything() {
  start_http yes /sse node "$EVERYTHING_JS" sse || { stop_http; return 1; }
  WANT_TOOLS="echo get-sum" list_tools_url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
case_cli_sse_call_everything() {
  start_http yes /sse node "$EVERYTHING_JS" sse || { stop_http; return 1; }
  run_cmd call "$TESSERA" call echo '{"message":"hi over sse"}' "$HTTP_URL"; local st=$?
  stop_http
  [ "$st" = 0 ] || return 1
  expect_exit 0 || return 1
  expect_stdout_has "Echo: hi over sse"
}

list_tools_url() { # URL ; expects tool names $WANT_TOOLS in the listing
  run_cmd list "$TESSERA" list tools "$1" || return 1
  expect_exit 0 || return 1
  local t
  for t in $WANT_TOOLS; do
    if ! grep -qE "(^|[^A-Za-z0-9_-])$t([^A-Za-z0-9_-]|$)" "$STDOUT"; then
      REASON="tool $t not in the listing; stdout starts: $(first_line "$STDOUT")"
      return 1
    fi
  done
}

# The official Python SDK client against `tessera serve --http` over
# Streamable HTTP, in each of its modes (see py_client.py).
py_http() { # MODE
  start_tessera || { stop_http; return 1; }
  run_client "$VENV_PY" "$HERE/py_client.py" --mode "$1" --url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
case_py_http_legacy() { py_http legacy; }
case_py_http_discover() { py_http discover; }
case_py_http_pinned() { py_http pinned; }

# The official TypeScript SDK client against `tessera serve --http`: Streamable
# HTTP, and the 2024-11-05 HTTP+SSE pair.
case_ts_sdk_http() {
  start_tessera || { stop_http; return 1; }
  run_client node "$HERE/ts_client.mjs" --url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
# The official Tasks requester (@modelcontextprotocol/ext-tasks) drives a
# `sleep` task to completion and another to cancellation (2025-11-25 tasks).
case_ext_tasks_http() {
  start_tessera || { stop_http; return 1; }
  run_client node "$HERE/ext_tasks_client.mjs" --url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
# The same requester pinned to 2026-07-28 (the Tasks extension: tasks/get
# carries the finished result inline), with its default result codec, which
# requires `resultType` on that result.
case_ext_tasks_http_modern() {
  start_tessera || { stop_http; return 1; }
  run_client node "$HERE/ext_tasks_client.mjs" --url "$HTTP_URL" --pin 2026-07-28; local st=$?
  stop_http
  return $st
}
# Skills: the TypeScript SDK 2.4 skills client lists, gets and verifies every
# file served by `tessera serve --http --skills`; `tessera skills list --verify`
# checks every file served by the TypeScript SDK 2.4 skills server.
# In every era: legacy (initialize), auto (probes server/discover) and pinned
# to 2026-07-28, where every listing and directory page must carry
# ttlMs/cacheScope.
skills_ts_client() { # MODE WANT_VERSION
  start_tessera --skills "$ROOT/conformance/fixtures/skills" || { stop_http; return 1; }
  run_client node "$HERE/ts_skills_client.mjs" "$HTTP_URL" "$1"; local st=$?
  stop_http
  [ $st = 0 ] && grep -q "^ok: 4 skills, 11 files verified, 4 directories ($2)\$" "$STDOUT"
}
case_skills_ts_client() { skills_ts_client legacy 2025-11-25; }
case_skills_ts_client_auto() { skills_ts_client auto 2026-07-28; }
case_skills_ts_client_pinned() { skills_ts_client 2026-07-28 2026-07-28; }
case_skills_ts_server() {
  run_cmd verify "$TESSERA" skills list --verify -- \
    node "$HERE/ts_skills_server.mjs" "$ROOT/conformance/fixtures/skills" || return 1
  [ "$RC" = 0 ] && [ "$(grep -c '^ok ' "$STDERR")" = 4 ]
}
case_ts_sdk_sse() {
  start_http no /sse "$TESSERA" serve --http || { stop_http; return 1; }
  run_client node "$HERE/ts_client.mjs" --sse-url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}

# `tessera list` and `tessera call` against `tessera serve --http` (2026-07-28).
case_cli_http_tessera() {
  start_tessera || { stop_http; return 1; }
  run_cmd list "$TESSERA" list tools "$HTTP_URL" || { stop_http; return 1; }
  if [ "$RC" != 0 ] || ! grep -q '^echo ' "$STDOUT"; then
    stop_http; REASON="list over http: exit $RC, stdout starts: $(first_line "$STDOUT")"; return 1
  fi
  run_cmd call "$TESSERA" call add '{"a":2,"b":40}' "$HTTP_URL"; local st=$?
  stop_http
  [ "$st" = 0 ] || return 1
  expect_exit 0 || return 1
  expect_stdout_has "42"
}

# Era bridging through `tessera proxy --http` in front of server-everything
# (stdio, legacy only). The TypeScript SDK client speaks the legacy era over
# Streamable HTTP and over the 2024-11-05 HTTP+SSE pair; the Tessera client
# (examples/client_call --version V) is pinned to one version with no fallback, so the
# 2026-07-28 case passes only if the proxy translates.
case_proxy_ts_http_everything() {
  start_http proxy /mcp "${everything_cmd[@]}" || { stop_http; return 1; }
  run_client node "$HERE/ts_client.mjs" --profile everything --url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
case_proxy_ts_sse_everything() {
  start_http proxy /sse "${everything_cmd[@]}" || { stop_http; return 1; }
  run_client node "$HERE/ts_client.mjs" --profile everything --sse-url "$HTTP_URL"; local st=$?
  stop_http
  return $st
}
pinned_everything() { # VERSION
  if [ ! -x "$CLIENT_CALL" ]; then REASON="examples/client_call not built: $CLIENT_CALL"; return 1; fi
  start_http proxy /mcp "${everything_cmd[@]}" || { stop_http; return 1; }
  run_cmd echo "$CLIENT_CALL" --version "$1" echo '{"message":"bridged"}' "$HTTP_URL"
  local st=$? out1; out1="$STDOUT"
  [ "$st" = 0 ] && run_cmd sum "$CLIENT_CALL" --version "$1" get-sum '{"a":2,"b":3}' "$HTTP_URL"; st=$?
  stop_http
  [ "$st" = 0 ] || return 1
  expect_exit 0 || return 1
  if [[ "$(head -n1 "$out1")" != *", protocol version $1" ]]; then
    REASON="expected '..., protocol version $1', got: $(first_line "$out1")"; return 1
  fi
  grep -qx "Echo: bridged" "$out1" || { REASON="echo: $(tail -n1 "$out1")"; return 1; }
  grep -qE '(^|[^0-9])5([^0-9]|$)' "$STDOUT" || { REASON="get-sum: $(tail -n1 "$STDOUT")"; return 1; }
}
case_proxy_modern_everything() { pinned_everything 2026-07-28; }
case_proxy_legacy_everything() { pinned_everything 2025-11-25; }

# server-everything in its `sse` mode (HTTP+SSE only, a legacy server) as the
# upstream of `tessera proxy --http URL`: tessera called through the proxy,
# pinned to 2025-11-25 and to 2026-07-28.
case_proxy_sse_upstream_everything() {
  start_http yes /sse node "$EVERYTHING_JS" sse || { stop_http; return 1; }
  local up_pid="$HTTP_PID" up_url="$HTTP_URL" st=0 v
  if ! start_http no /mcp "$TESSERA" proxy "$up_url" --http; then
    stop_http; kill "$up_pid" 2>/dev/null; wait "$up_pid" 2>/dev/null; return 1
  fi
  for v in 2025-11-25 2026-07-28; do
    run_cmd "call-$v" "$TESSERA" call --protocol-version "$v" echo "{\"message\":\"sse via $v\"}" "$HTTP_URL" || { st=1; break; }
    expect_exit 0 || { st=1; break; }
    expect_stdout_has "Echo: sse via $v" || { st=1; break; }
  done
  stop_http
  kill "$up_pid" 2>/dev/null; wait "$up_pid" 2>/dev/null
  return $st
}

# The two exit-code cases first make a good call, so that a binary that always
# exits 1 (or 2) cannot pass them.
good_call_first() {
  run_cmd good-call "$TESSERA" call echo '{"message":"hi"}' -- "${everything_cmd[@]}" || return 1
  if [ "$RC" != 0 ] || ! grep -qF "Echo: hi" "$STDOUT"; then
    REASON="the good call (echo {\"message\":\"hi\"}) already failed: exit $RC, stdout starts: $(first_line "$STDOUT"), stderr: $(first_line "$STDERR")"
    return 1
  fi
}

# server-everything answers an unknown tool with a result {isError: true}; the CLI
# must report that as a tool error (exit 5; a JSON-RPC error would be exit 1).
case_cli_unknown_tool() {
  good_call_first || return 1
  run_cmd call "$TESSERA" call no-such-tool '{}' -- "${everything_cmd[@]}" || return 1
  expect_exit 5
}

# expect_json LABEL 'JS-EXPRESSION over v' : the last run_cmd exited 0 and its
# stdout is one JSON document for which the expression holds.
expect_json() {
  expect_exit 0 || { REASON="$1: $REASON"; return 1; }
  local r
  r="$(json_eval "$STDOUT" "$2" 2>&1)"
  if [ $? != 0 ] || [ -n "$r" ]; then
    REASON="$1 --json: ${r:-check failed: $2}; stdout starts: $(first_line "$STDOUT")"
    return 1
  fi
}

# The JSON of v without the members a 2026-07-28 result adds (_meta,
# resultType, ttlMs, cacheScope), for exact comparisons in both eras.
STRIP='(({_meta, resultType, ttlMs, cacheScope, ...rest}) => JSON.stringify(rest))(v)'

# tessera's verbs (list, read, get, complete, discover, ping, log-level) against
# a server given as TARGET words; checks the --json documents exactly.
verbs_everything() { # TARGET...
  run_cmd list-prompts "$TESSERA" list prompts --json "$@" || return 1
  expect_json "list prompts" 'v.prompts.some(p => p.name === "simple-prompt") && v.prompts.some(p => p.name === "args-prompt")' || return 1
  run_cmd list-templates "$TESSERA" list templates --json "$@" || return 1
  expect_json "list templates" 'v.resourceTemplates.some(t => t.uriTemplate === "demo://resource/dynamic/text/{resourceId}")' || return 1
  run_cmd read "$TESSERA" read demo://resource/dynamic/text/3 --json "$@" || return 1
  expect_json read 'v.contents.length === 1 && v.contents[0].uri === "demo://resource/dynamic/text/3" && v.contents[0].mimeType === "text/plain" && v.contents[0].text.startsWith("Resource 3: ")' || return 1
  run_cmd get "$TESSERA" get simple-prompt --json "$@" || return 1
  expect_json get "$STRIP"' === JSON.stringify({messages: [{content: {text: "This is a simple prompt without arguments.", type: "text"}, role: "user"}]})' || return 1
  run_cmd get-args "$TESSERA" get args-prompt '{"city":"Paris"}' "$@" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "Paris" || return 1
  run_cmd complete "$TESSERA" complete prompt completable-prompt department E --json "$@" || return 1
  expect_json complete "$STRIP"' === JSON.stringify({completion: {hasMore: false, total: 1, values: ["Engineering"]}})' || return 1
  run_cmd discover "$TESSERA" discover --json "$@" || return 1
  expect_json discover 'v.serverInfo.name === "mcp-servers/everything" && v.protocolVersion === "2025-11-25" && typeof v.capabilities.tools === "object"' || return 1
  run_cmd ping "$TESSERA" ping --json "$@" || return 1
  expect_json ping 'JSON.stringify(v) === "{}"' || return 1
  run_cmd log-level "$TESSERA" log-level debug --for 0.5 --json "$@" || return 1
  expect_json log-level 'JSON.stringify(v) === "{}"' || return 1
  run_cmd read-missing "$TESSERA" read demo://no/such/resource "$@" || return 1
  expect_exit 1
}
case_cli_verbs_everything() { verbs_everything -- "${everything_cmd[@]}"; }
case_cli_verbs_http_everything() {
  start_http yes /mcp node "$EVERYTHING_JS" streamableHttp || { stop_http; return 1; }
  verbs_everything "$HTTP_URL"; local st=$?
  stop_http
  return $st
}

# The same verbs against the Python SDK server (fixtures/reference_server.py).
verbs_py() { # ERA TARGET...
  local era="$1"; shift
  run_cmd list-resources "$TESSERA" list resources --era "$era" --json "$@" || return 1
  expect_json "list resources" 'v.resources.some(r => r.uri === "interop://greeting")' || return 1
  run_cmd list-prompts "$TESSERA" list prompts --era "$era" "$@" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "greet" || return 1
  run_cmd read "$TESSERA" read interop://greeting --era "$era" --json "$@" || return 1
  expect_json read "$STRIP"' === JSON.stringify({contents: [{mimeType: "text/plain", text: "Hello from the Python SDK", uri: "interop://greeting"}]})' || return 1
  run_cmd get "$TESSERA" get greet '{"name":"Ada"}' --era "$era" --json "$@" || return 1
  expect_json get "$STRIP"' === JSON.stringify({description: "Greets someone by name.", messages: [{content: {text: "Please greet Ada.", type: "text"}, role: "user"}]})' || return 1
  run_cmd complete "$TESSERA" complete prompt greet name a --era "$era" --json "$@" || return 1
  expect_json complete "$STRIP"' === JSON.stringify({completion: {values: ["ada", "alan"]}})' || return 1
  run_cmd discover "$TESSERA" discover --era "$era" "$@" || return 1
  expect_exit 0 || return 1
  expect_stdout_has "server:       interop-reference 0.0.0" || return 1
  run_cmd ping "$TESSERA" ping --era "$era" "$@" || return 1
  expect_exit 0 || return 1
  run_cmd call-missing "$TESSERA" call no_such_tool --era "$era" "$@" || return 1
  [ "$RC" = 1 ] || [ "$RC" = 5 ] || { REASON="unknown tool: exit $RC, expected 1 or 5"; return 1; }
}
case_cli_verbs_py_legacy() { verbs_py legacy -- "${reference_cmd[@]}"; }
case_cli_verbs_py_modern() { verbs_py modern -- "${reference_cmd[@]}"; }
case_cli_verbs_http_py() {
  local port; port="$(free_port)"
  "$VENV_PY" "$REFERENCE_PY" --http "$port" >"$OUT/py-http-$port.log" 2>&1 &
  HTTP_PID=$!
  local i
  for i in $(seq 1 100); do
    node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$port" && break
    sleep 0.1
  done
  verbs_py legacy "http://127.0.0.1:$port/mcp"; local st=$?
  [ "$st" = 0 ] && { verbs_py modern "http://127.0.0.1:$port/mcp"; st=$?; }
  stop_http
  return $st
}

# `tessera proxy --config` aggregating the official server-everything over stdio and the
# Python SDK's MCPServer (the FastMCP server) over Streamable HTTP: both upstreams' tools
# are listed through the gateway, prefixed, and a call of each goes through.
case_proxy_gateway_everything_py() {
  local py_port; py_port="$(free_port)"
  "$VENV_PY" "$REFERENCE_PY" --http "$py_port" >"$OUT/py-http-$py_port.log" 2>&1 &
  local py_pid=$!
  local cfg="$CASE_DIR/gateway.json"
  node -e 'console.log(JSON.stringify({mcpServers: {
      everything: {command: "node", args: [process.argv[1], "stdio"]},
      py: {url: "http://127.0.0.1:" + process.argv[2] + "/mcp"}}}))' \
    "$EVERYTHING_JS" "$py_port" >"$cfg"
  if ! start_http no /mcp "$TESSERA" proxy --config "$cfg" --http; then
    stop_http; kill "$py_pid" 2>/dev/null; return 1
  fi
  # The upstreams connect in the background: list (bounded) until both are in.
  local i st=1
  for i in $(seq 1 100); do
    WANT_TOOLS="everything__echo everything__get-sum py__echo py__add" list_tools_url "$HTTP_URL" && { st=0; break; }
    sleep 0.2
  done
  if [ "$st" = 0 ]; then
    run_cmd call-everything "$TESSERA" call everything__echo '{"message":"through the gateway"}' "$HTTP_URL"
    expect_exit 0 && expect_stdout_has "Echo: through the gateway"; st=$?
  fi
  if [ "$st" = 0 ]; then
    run_cmd call-py "$TESSERA" call py__add '{"a":20,"b":22}' "$HTTP_URL"
    expect_exit 0 && expect_stdout_has "42"; st=$?
  fi
  stop_http
  kill "$py_pid" 2>/dev/null; wait "$py_pid" 2>/dev/null
  return $st
}

# Arguments that are not JSON are a usage error (exit 2).
case_cli_bad_json() {
  good_call_first || return 1
  run_cmd call "$TESSERA" call echo '{"message":' -- "${everything_cmd[@]}" || return 1
  expect_exit 2
}

# ---------------------------------------------------------------------- run
say "interop: tessera=${TESSERA:-n/a} logs=$OUT timeout=${TIMEOUT}s${SERVER_URL:+ server=$SERVER_URL}"
for c in "${CASES[@]}"; do
  name="${c%%|*}"; rest="${c#*|}"; needs="${rest%%|*}"; fn="${rest#*|}"
  selected "$name" || continue
  REASON=""
  missing=""
  for n in ${needs//,/ }; do
    ready_var="READY_$n"; why_var="WHY_$n"
    if [ "${!ready_var}" != 1 ]; then missing="${!why_var}"; break; fi
  done
  if [ -n "$missing" ]; then
    FAILED=$((FAILED + 1)); say "FAIL $name (setup: $missing)"; continue
  fi
  CASE_DIR="$OUT/${name//\//__}"
  mkdir -p "$CASE_DIR"
  CASE_LOG="$CASE_DIR/log.txt"
  : >"$CASE_LOG"
  if "$fn"; then
    PASSED=$((PASSED + 1)); say "PASS $name"
  else
    FAILED=$((FAILED + 1))
    say "FAIL $name (${REASON:-failed})"
    # Show the full exchange the case recorded, trimmed, to make the failure actionable.
    tail -n 40 "$CASE_LOG" | cut -c1-400 | indent
  fi
done

if [ "$KEEP" = 0 ] && [ -z "${INTEROP_OUT:-}" ] && [ "$FAILED" = 0 ]; then
  rm -rf "$OUT"
fi
say "interop: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
