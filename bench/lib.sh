# Shared by the bench scripts (sourced, not run). Expects BENCH, ROOT, BENCH_TARGET_DIR,
# TESSERA_TARGET_DIR and SKIP_BUILD to be set, and `say`/`die` to be defined.

# free_port: a free loopback port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# wait_port PORT [SECONDS]: bounded wait (default 20 s) until something listens on 127.0.0.1:PORT.
wait_port() {
  python3 - "$1" "${2:-20}" <<'PY'
import socket, sys, time
deadline = time.time() + float(sys.argv[2])
while time.time() < deadline:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
PY
}

# stop_all: stops every pid in PIDS (started by the script) and waits for them.
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}

# prepare_binaries: builds (unless SKIP_BUILD=1) the load generator (cargo profile BENCH_PROFILE,
# default release) and, without TESSERA_BIN,
# a release tessera; sets LOAD and TESSERA_BIN, and SERVER/CLIENT (taskset pinning to cores
# 0 and 1, nothing on a one-CPU machine).
prepare_binaries() {
  if [ "$SKIP_BUILD" = 0 ]; then
    say "building mcp-bench (profile ${BENCH_PROFILE:-release}) into $BENCH_TARGET_DIR"
    (cd "$BENCH" && CARGO_TARGET_DIR="$BENCH_TARGET_DIR" cargo build -q --profile "${BENCH_PROFILE:-release}" --locked -p mcp-bench) \
      || die "building the load generator failed"
  fi
  LOAD="$BENCH_TARGET_DIR/${BENCH_PROFILE:-release}/mcp-bench"
  [ -x "$LOAD" ] || die "$LOAD is missing (run without --skip-build)"
  if [ -z "${TESSERA_BIN:-}" ]; then
    TESSERA_BIN="$TESSERA_TARGET_DIR/release/tessera"
    if [ "$SKIP_BUILD" = 0 ]; then
      say "building tessera into $TESSERA_TARGET_DIR"
      (cd "$ROOT" && CARGO_TARGET_DIR="$TESSERA_TARGET_DIR" cargo build -q --release -p tessera-cli) \
        || die "building tessera failed"
    fi
  fi
  [ -x "$TESSERA_BIN" ] || die "$TESSERA_BIN is missing"
  SERVER=(taskset -c 0)
  CLIENT=(taskset -c 1)
  if [ "$(nproc)" -lt 2 ]; then SERVER=(); CLIENT=(); say "one CPU: not pinning"; fi
}
