#!/usr/bin/env bash
# What keeping state in Redis costs: `tools/call echo` on the reference server, one instance
# in memory (`tessera serve --http`) beside one instance with its state in Redis
# (`tessera serve --http --redis URL`, a private redis-server), in the modes legacy-sse and
# modern, at concurrency 16 and 64. Also the Redis commands each request costs (load-independent):
# `INFO commandstats` before and after a fixed number of calls.
#
#   bench/redis.sh [--smoke] [--rounds N] [--duration S] [--calls N] [--redis-cpu LIST] [--skip-build]
#
#   --smoke        1 round of 1 s per point, 2,000 counted calls (proves it works)
#   --rounds N     rounds, each running every configuration once, alternating order (default 3)
#   --duration S   measured seconds per point (default 5; 1 s warm-up before each)
#   --calls N      calls counted for the Redis commands per request (default 20000)
#   --redis-cpu L  the CPUs redis-server runs on (`taskset -c L`; default 1, the load generator's
#                  core, never the server's), or `any` for wherever the kernel puts it
#
# Environment: TESSERA_BIN, TESSERA_TARGET_DIR, BENCH_TARGET_DIR as for bench/run.sh; needs
# redis-server (Debian package redis-server) and redis-cli (same package).
# The server runs pinned to core 0 (`taskset -c 0`), the load generator to core 1; redis-server
# stands for a Redis on another host, so by default it is kept off the server's core (pinned to
# core 1 with the load generator; `--redis-cpu any` lets it float, onto core 0 too, which charges
# its work to the server). Its CPU per call is measured and reported beside the server's, so
# nothing is hidden. Prints a Markdown table (medians over rounds) and writes it to
# bench/results/<UTC date>-redis[-smoke].md. Exit status 0 when every point ran without errors.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
BENCH_TARGET_DIR="${BENCH_TARGET_DIR:-$BENCH/target}"
TESSERA_TARGET_DIR="${TESSERA_TARGET_DIR:-$BENCH/target/tessera}"
ROUNDS=3
DURATION=5
WARMUP=1
CALLS=20000
REDIS_CPU=1
SKIP_BUILD=0
SMOKE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1; ROUNDS=1; DURATION=1; WARMUP=0.3; CALLS=2000 ;;
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --calls) CALLS="$2"; shift ;;
    --redis-cpu) REDIS_CPU="$2"; shift ;;
    --skip-build) SKIP_BUILD=1 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "redis.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

say() { printf 'bench redis: %s\n' "$*" >&2; }
die() { printf 'bench redis: ERROR: %s\n' "$*" >&2; exit 2; }
command -v taskset >/dev/null || die "taskset is required (apt-get install util-linux)"
command -v python3 >/dev/null || die "python3 is required"
command -v redis-server >/dev/null || die "redis-server is required (apt-get install redis-server)"
command -v redis-cli >/dev/null || die "redis-cli is required (apt-get install redis-server)"

# shellcheck source=bench/lib.sh
. "$BENCH/lib.sh"
prepare_binaries

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-redis.XXXXXX")"
PIDS=()
REDIS_PID=""
stop_redis() {
  if [ -n "$REDIS_PID" ]; then
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=""
  fi
}
trap 'stop_all; stop_redis' EXIT


# A private redis-server, persistence off, for the whole run.
REDIS_PORT="$(free_port)"
mkdir -p "$LOGS/redis"
REDIS_PIN=()
[ "$REDIS_CPU" = any ] || REDIS_PIN=(taskset -c "$REDIS_CPU")
"${REDIS_PIN[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize no --dir "$LOGS/redis" --logfile "$LOGS/redis.log" </dev/null >/dev/null 2>&1 &
REDIS_PID=$!
wait_port "$REDIS_PORT" || die "redis-server did not start (see $LOGS/redis.log)"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# start_server CONFIG MODE : starts tessera serve for CONFIG (memory|redis); sets URL, SERVER_PID
start_server() {
  local config="$1" mode="$2" port extra=()
  [ "$mode" = legacy-sse ] && extra+=(--sse-response)
  [ "$config" = redis ] && extra+=(--redis "$REDIS_URL" --redis-prefix "bench$RANDOM:")
  port="$(free_port)"
  "${SERVER[@]}" "$TESSERA_BIN" serve --http "127.0.0.1:$port" "${extra[@]}" \
    >"$LOGS/$config-$mode-$port.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_port "$port" || die "tessera serve did not start (see $LOGS)"
  URL="http://127.0.0.1:$port/mcp"
}

# point CONFIG MODE CONCURRENCY : one load point; appends
# "CONFIG MODE C rps p50 p99 cpu errors redis-cpu"
point() {
  local config="$1" mode="$2" c="$3" era="legacy" also=()
  [ "$mode" = modern ] && era=modern
  [ "$config" = redis ] && also=(--also-pid "$REDIS_PID")
  start_server "$config" "$mode"
  local out="$LOGS/$config-$mode-$c-$RANDOM.json"
  "${CLIENT[@]}" "$LOAD" load --url "$URL" --era "$era" --concurrency "$c" --pid "$SERVER_PID" \
    "${also[@]}" --duration "$DURATION" --warmup "$WARMUP" >"$out" 2>"$out.err" || true
  stop_all
  python3 - "$out" "$config" "$mode" "$c" >>"$LOGS/points" <<'PY'
import json, sys
path, config, mode, c = sys.argv[1:5]
try:
    r = json.load(open(path))
    cpu = r.get("cpu_us_per_req") or 0
    redis = r.get("others_cpu_us_per_req") or 0
    print(config, mode, c, r["rps"], r["p50_us"], r["p99_us"], cpu, r["errors"], redis)
except Exception:
    print(config, mode, c, 0, 0, 0, 0, -1, 0)
PY
}

# commands MODE : Redis commands per call through the Redis-backed server, from INFO
# commandstats around exactly $CALLS calls at concurrency 16 (sessions opened included).
# Appends "MODE calls total cmd=n ..." to $LOGS/commands.
commands() {
  local mode="$1" era="legacy"
  [ "$mode" = modern ] && era=modern
  start_server redis "$mode"
  # Let the instance's start-up commands (key ring, task recovery) settle.
  "${CLIENT[@]}" "$LOAD" load --url "$URL" --era "$era" --concurrency 1 --requests 10 \
    >/dev/null 2>&1 || true
  rcli CONFIG RESETSTAT >/dev/null
  local out="$LOGS/commands-$mode.json"
  "${CLIENT[@]}" "$LOAD" load --url "$URL" --era "$era" --concurrency 16 --requests "$CALLS" \
    >"$out" 2>"$out.err" || true
  rcli INFO commandstats >"$LOGS/commandstats-$mode.txt"
  rcli INFO stats >"$LOGS/stats-$mode.txt"
  stop_all
  python3 - "$out" "$mode" "$LOGS/commandstats-$mode.txt" "$LOGS/stats-$mode.txt" \
    >>"$LOGS/commands" <<'PY'
import json, re, sys
path, mode, stats, info = sys.argv[1:5]
try:
    calls = json.load(open(path))["requests"]
except Exception:
    calls = 0
counts = {}
for line in open(stats):
    m = re.match(r"cmdstat_([a-z|]+):calls=(\d+)", line.strip())
    if m and m.group(1) not in ("info", "config|resetstat", "config"):
        counts[m.group(1)] = int(m.group(2))
# Read events: each is one batch of bytes the server read from a client socket, so one round trip
# (a pipeline, or requests that several tasks queued on one multiplexed connection at once, arrive
# in one). The two INFO calls above are two of them.
reads = 0
for line in open(info):
    if line.startswith("total_reads_processed:"):
        reads = max(int(line.split(":")[1]) - 2, 0)
print(mode, calls, reads, " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
PY
}

CONFIGS=(memory redis)
MODES=(legacy-sse modern)
LEVELS=(16 64)
: >"$LOGS/points"
: >"$LOGS/commands"
START_LOAD="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for mode in "${MODES[@]}"; do
  say "Redis commands per call: $mode ($CALLS calls)"
  commands "$mode"
done
for round in $(seq 1 "$ROUNDS"); do
  order=("${CONFIGS[@]}")
  if [ $((round % 2)) = 0 ]; then order=(redis memory); fi
  for mode in "${MODES[@]}"; do
    for c in "${LEVELS[@]}"; do
      for config in "${order[@]}"; do
        say "round $round: $config $mode c=$c (${DURATION}s)"
        point "$config" "$mode" "$c"
      done
    done
  done
done
REDIS_VERSION="$(rcli INFO server | sed -n 's/^redis_version:\([^[:space:]]*\).*/\1/p')"
stop_redis

mkdir -p "$BENCH/results"
STAMP="$(date -u +%Y-%m-%dT%H-%M-%SZ)"
SUFFIX=""; [ "$SMOKE" = 1 ] && SUFFIX="-smoke"
REPORT="$BENCH/results/$STAMP-redis$SUFFIX.md"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
python3 - "$LOGS/points" "$LOGS/commands" "$ROUNDS" "$DURATION" "$TESSERA_BIN" "$START_LOAD" \
  "$LOAD_AFTER" "$(nproc)" "$REDIS_VERSION" "$REV" "$REDIS_CPU" >"$REPORT" <<'PY'
import statistics, sys
points, commands, rounds, duration, binary, load_before, load_after, cpus, redis_version, rev, redis_cpu = sys.argv[1:12]
rows = {}
errors = 0
for line in open(points):
    config, mode, c, rps, p50, p99, cpu, err, redis = line.split()
    if int(err) != 0:
        errors += 1
    rows.setdefault((config, mode, int(c)), []).append(
        (float(rps), float(p50), float(p99), float(cpu), float(redis)))
def med(config, mode, c, i):
    v = [x[i] for x in rows.get((config, mode, c), [])]
    return statistics.median(v) if v else float("nan")
per_call = {}
trips = {}
detail = {}
for line in open(commands):
    parts = line.split()
    mode, calls, reads = parts[0], int(parts[1]), int(parts[2])
    counts = dict(p.split("=") for p in parts[3:])
    total = sum(int(v) for v in counts.values())
    per_call[mode] = total / calls if calls else float("nan")
    trips[mode] = reads / calls if calls else float("nan")
    detail[mode] = ", ".join(
        f"{k.upper()} {int(v) / calls:.3f}" for k, v in sorted(counts.items(), key=lambda kv: -int(kv[1]))
    ) if calls else "no calls counted"
    detail[mode] += f" (over {calls:,} calls)"
target = {"legacy-sse": 0.6, "modern": 0.9}
print(f"# Redis-backed vs in-memory: tools/call echo, medians of {rounds} round(s) of {duration} s\n")
where = "unpinned (it may share core 0 with the server)" if redis_cpu == "any" else f"on CPU(s) {redis_cpu}"
print(f"Binary: `{binary}` (git {rev}); redis-server {redis_version}, persistence off, on loopback. "
      f"The server on core 0, the load generator on core 1, redis-server {where}. "
      "CPU µs/req is the server process's user + system time per call; redis-server's is its own "
      "column, and the last column adds the two.\n")
print(f"Machine load average (1, 5, 15 min) on {cpus} CPUs: {load_before} before, {load_after} after. "
      "Other work on the machine skews req/s; the Redis commands per call do not depend on it.\n")
print("| mode | concurrency | in-memory req/s | Redis req/s | ratio (target) | in-memory p50 µs | Redis p50 µs | Redis p99 µs | in-memory CPU µs/req | Redis CPU µs/req | redis-server CPU µs/req | Redis + redis-server CPU µs/req | Redis commands per call | Redis round trips per call |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for mode in ("legacy-sse", "modern"):
    for c in (16, 64):
        m_rps, r_rps = med("memory", mode, c, 0), med("redis", mode, c, 0)
        ratio = r_rps / m_rps if m_rps else float("nan")
        print(f"| {mode} | {c} | {m_rps:,.0f} | {r_rps:,.0f} | {ratio:.2f}× (≥ {target[mode]}×) | "
              f"{med('memory', mode, c, 1):.0f} | {med('redis', mode, c, 1):.0f} | {med('redis', mode, c, 2):.0f} | "
              f"{med('memory', mode, c, 3):.0f} | {med('redis', mode, c, 3):.0f} | {med('redis', mode, c, 4):.1f} | "
              f"{med('redis', mode, c, 3) + med('redis', mode, c, 4):.0f} | "
              f"{per_call.get(mode, float('nan')):.3f} | {trips.get(mode, float('nan')):.3f} |")
print("\nRedis commands per call, by command (`INFO commandstats` around a fixed number of calls at "
      "concurrency 16, the sessions' opening included; commands run inside Lua scripts count too). "
      "Round trips are redis-server's read events (`total_reads_processed` of `INFO stats`): a "
      "pipeline, or requests that concurrent tasks queued on one multiplexed connection at once, "
      "arrive in one, so round trips can be fewer than commands:\n")
for mode in ("legacy-sse", "modern"):
    print(f"- {mode}: {detail.get(mode, 'not measured')}")
if errors:
    print(f"\n{errors} point(s) had errors or did not run (see the logs).")
PY
cat "$REPORT"
say "report: $REPORT (logs: $LOGS)"
if grep -q "had errors" "$REPORT"; then exit 1; fi
