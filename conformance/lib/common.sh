# Shared helpers for run-server.sh and run-client.sh (sourced, not run).
# Expects HERE to be the conformance/ folder.

NODE="$HERE/node_modules/.bin/node"
SUPERGATEWAY="$HERE/node_modules/supergateway/dist/index.js"

# resolve_suite VERSION: sets SUITE_DIR, SUITE_JS, SUITE_NAME, SUITE_LABEL.
resolve_suite() {
  case "$1" in
    0.1) SUITE_DIR="$HERE/node_modules/conformance-0.1" ;;
    next) SUITE_DIR="$HERE/node_modules/conformance-next" ;;
    *) echo "unknown suite version '$1' (use 0.1 or next)" >&2; return 1 ;;
  esac
  SUITE_JS="$SUITE_DIR/dist/index.js"
  SUITE_NAME="@modelcontextprotocol/conformance"
}

# ensure_installed: npm ci when node_modules is missing or older than the lockfile,
# and make sure the pinned Node 22 binary is in place. Sets SUITE_VERSION.
ensure_installed() {
  local stamp="$HERE/node_modules/.tessera-lock.sha256" want
  want="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -f "$SUITE_JS" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "conformance: npm is needed to install the suite (npm ci in $HERE)" >&2; return 1
    fi
    echo "setup: npm ci in conformance/"
    if ! (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2; then
      echo "conformance: npm ci failed" >&2; return 1
    fi
    echo "$want" >"$stamp"
  fi
  # The `node` package puts its binary in place from a preinstall script; if
  # install scripts were skipped, `npm rebuild node` runs it.
  if ! "$NODE" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; then
    echo "setup: npm rebuild node (the Node 22 binary is missing)"
    (cd "$HERE" && npm rebuild node --loglevel=error) >&2 || true
    if ! "$NODE" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; then
      echo "conformance: $NODE is not Node >= 22; the suite cannot load on older Node" >&2; return 1
    fi
  fi
  # Anything the suite starts through the shell (client commands) sees Node 22 first.
  export PATH="$HERE/node_modules/.bin:$PATH"
  SUITE_VERSION="$("$NODE" -p "require('$SUITE_DIR/package.json').version")"
}

# make_out_dir DIR KIND: prints a fresh, empty results folder.
make_out_dir() {
  local dir="$1" kind="$2"
  if [ -z "$dir" ]; then
    mktemp -d "${TMPDIR:-/tmp}/tessera-conformance-$kind.XXXXXX"
    return
  fi
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "--out $dir is not empty" >&2; return 1
  fi
  mkdir -p "$dir" && (cd "$dir" && pwd)
}

# free_port: a TCP port that is free on 127.0.0.1 right now.
free_port() {
  "$NODE" -e '
    const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
  '
}

# wait_for_port PORT SECONDS PID: waits until 127.0.0.1:PORT accepts connections
# (fails early if PID dies).
wait_for_port() {
  local port="$1" secs="$2" pid="$3" i
  for ((i = 0; i < secs * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  return 1
}

# run_suite LOG ARGS...: runs the suite CLI, showing its output and appending it to LOG.
run_suite() {
  local log="$1"; shift
  echo "\$ conformance $*" | tee -a "$log"
  "$NODE" "$SUITE_JS" "$@" </dev/null 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

# list_requirements REV: the suite's `list --requirements REV` output.
list_requirements() { "$NODE" "$SUITE_JS" list --requirements "$1" 2>/dev/null; }

# required REV KIND(server|client): scenario names the requirement set scores.
required() {
  local header
  [ "$2" = server ] && header="Server scenarios" || header="Client scenarios"
  list_requirements "$1" | awk -v h="$header" '
    index($0, h) == 1 { on = 1; next }
    /^[A-Z]/ { on = 0 }
    on && $1 == "-" { print $2 }
  '
}

# not_scored REV KIND: scenario names that REV runs and reports but never scores.
not_scored() {
  list_requirements "$1" | awk -v k="[$2]" '
    /never scored/ { on = 1; next }
    on && $1 == "-" && $3 == k { print $2 }
  '
}

# list_scenarios KIND [--spec-version V]: every scenario name of that kind.
list_scenarios() {
  local kind="$1"; shift
  "$NODE" "$SUITE_JS" list "--$kind" "$@" 2>/dev/null | awk '$1 == "-" { print $2 }'
}

# extension_scenarios KIND: scenarios tagged [extension] (or ext:...).
extension_scenarios() {
  "$NODE" "$SUITE_JS" list "--$1" 2>/dev/null | awk '$1 == "-" && $0 ~ /\[(extension|ext:)/ { print $2 }'
}
