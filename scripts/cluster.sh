#!/usr/bin/env bash
# A Tessera cluster on this machine: Redis, three `tessera serve --http --redis`
# instances and HAProxy in front of them (round-robin per request, no stickiness),
# each on a free loopback port.
#
#   scripts/cluster.sh up [--instances N] [-- SERVE-ARGS...]
#                                           start everything; the last line printed is
#                                           the balancer's MCP URL. SERVE-ARGS go to every
#                                           `tessera serve` (e.g. --skills DIR)
#   scripts/cluster.sh status               what is running
#   scripts/cluster.sh down                 stop exactly what `up` started (recorded pids)
#
# Needs redis-server and haproxy (Debian packages `redis-server` and `haproxy`).
# The tessera binary is $TESSERA_BIN, else a debug build made here
# (`cargo build -p tessera-cli`). State, logs and pids live in $TESSERA_CLUSTER_DIR
# (default: $TMPDIR/tessera-cluster). Redis runs with persistence off.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${TESSERA_CLUSTER_DIR:-${TMPDIR:-/tmp}/tessera-cluster}"
PIDS="$DIR/pids"
INSTANCES=3
SERVE_ARGS=()

say() { printf 'cluster: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
# A failure once something was started: stop it all first.
fail() { say "$*"; down; exit 1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (at most 30 s) until something listens on 127.0.0.1:$1; fails if pid $2 exits.
wait_listen() {
  local port="$1" pid="$2" i
  for i in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Whether pid $1 is alive and runs program $2 (so `down` never signals a reused pid).
is_ours() {
  local pid="$1" prog="$2"
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$prog"
}

record() { echo "$1 $2 $3" >>"$PIDS"; }   # name pid program

tessera_bin() {
  if [ -n "${TESSERA_BIN:-}" ]; then
    echo "$TESSERA_BIN"
    return
  fi
  say "building tessera (cargo build -p tessera-cli)"
  (cd "$ROOT" && cargo build -q -p tessera-cli </dev/null) >&2
  echo "${CARGO_TARGET_DIR:-$ROOT/target}/debug/tessera"
}

up() {
  command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"
  command -v haproxy >/dev/null || die "haproxy not found (apt-get install haproxy)"
  command -v python3 >/dev/null || die "python3 is needed to find free ports"
  if [ -f "$PIDS" ]; then
    while read -r name pid prog; do
      if is_ours "$pid" "$prog"; then
        die "already up ($name is pid $pid); run: $0 down"
      fi
    done <"$PIDS"
    rm -f "$PIDS"
  fi
  local bin
  bin="$(tessera_bin)"
  [ -x "$bin" ] || die "no tessera binary at $bin"
  mkdir -p "$DIR/redis"
  : >"$PIDS"
  trap 'fail "start failed"' ERR

  local redis_port
  redis_port="$(free_port)"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize no --dir "$DIR/redis" --logfile "$DIR/redis.log" </dev/null >/dev/null 2>&1 &
  record redis $! redis-server
  wait_listen "$redis_port" $! || fail "redis-server did not start (see $DIR/redis.log)"
  local redis_url="redis://127.0.0.1:$redis_port/0"
  say "redis      $redis_url (pid $(awk '$1=="redis"{print $2}' "$PIDS"))"

  local i port backends=()
  for i in $(seq 1 "$INSTANCES"); do
    port="$(free_port)"
    "$bin" serve --http "127.0.0.1:$port" --redis "$redis_url" \
      --allow-host 127.0.0.1 --allow-host localhost ${SERVE_ARGS[@]+"${SERVE_ARGS[@]}"} \
      </dev/null >"$DIR/instance-$i.log" 2>&1 &
    local pid=$!
    record "instance-$i" "$pid" "$bin"
    wait_listen "$port" "$pid" || fail "instance $i did not start (see $DIR/instance-$i.log)"
    backends+=("127.0.0.1:$port")
    say "instance-$i http://127.0.0.1:$port/mcp (pid $pid)"
  done

  local lb_port
  lb_port="$(free_port)"
  {
    printf 'global\n    maxconn 4096\n\n'
    printf 'defaults\n    mode http\n    timeout connect 2s\n    timeout client 120s\n'
    printf '    timeout server 120s\n    timeout tunnel 1h\n    retries 2\n    option redispatch\n\n'
    printf 'frontend mcp\n    bind 127.0.0.1:%s\n    default_backend tessera\n\n' "$lb_port"
    printf 'backend tessera\n    balance roundrobin\n'
    for i in "${!backends[@]}"; do
      printf '    server s%d %s check inter 500ms fall 2 rise 1\n' "$((i + 1))" "${backends[$i]}"
    done
  } >"$DIR/haproxy.cfg"
  haproxy -db -f "$DIR/haproxy.cfg" </dev/null >"$DIR/haproxy.log" 2>&1 &
  local hpid=$!
  record haproxy "$hpid" haproxy
  wait_listen "$lb_port" "$hpid" || fail "haproxy did not start (see $DIR/haproxy.log)"
  trap - ERR
  say "haproxy    round-robin over ${#backends[@]} instances (pid $hpid)"
  say "logs and pids in $DIR; stop with: $0 down"
  echo "http://127.0.0.1:$lb_port/mcp"
}

down() {
  [ -f "$PIDS" ] || { say "nothing recorded in $PIDS: not up"; return 0; }
  local lines name pid prog i
  mapfile -t lines <"$PIDS"
  # The balancer first, Redis last.
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    read -r name pid prog <<<"${lines[$i]}"
    if is_ours "$pid" "$prog"; then
      kill -TERM "$pid" 2>/dev/null || true
      local n
      for n in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
      say "stopped $name (pid $pid)"
    fi
  done
  rm -f "$PIDS"
}

status() {
  [ -f "$PIDS" ] || { say "not up"; return 0; }
  local name pid prog
  while read -r name pid prog; do
    if is_ours "$pid" "$prog"; then say "$name pid $pid running"; else say "$name pid $pid gone"; fi
  done <"$PIDS"
}

cmd="${1:-}"
shift || true
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) INSTANCES="$2"; shift ;;
    --) shift; SERVE_ARGS=("$@"); break ;;
    *) die "unknown option $1" ;;
  esac
  shift
done
case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 up [--instances N] [-- SERVE-ARGS...] | status | down" ;;
esac
