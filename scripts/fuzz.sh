#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ (libFuzzer, outside the workspace).
#
#   bash scripts/fuzz.sh --smoke              every target for 5 s, unoptimised build (what CI runs)
#   bash scripts/fuzz.sh --seconds 600        every target for 10 minutes each
#   bash scripts/fuzz.sh --seconds 60 sse     one target
#   bash scripts/fuzz.sh --runs 10000000 --seconds 3600 sse
#                                             10 million executions or an hour, whichever first
#   bash scripts/fuzz.sh --no-asan --runs 10000000 --seconds 3600 sse
#                                             the same without AddressSanitizer
#                                             (--sanitizer none; --sanitizer NAME picks another)
#
# Why a campaign may drop AddressSanitizer: the workspace has no `unsafe`
# (the workspace lints forbid `unsafe_code`), so ASan only guards the unsafe
# code of dependencies, and it costs dearly here: an ASan `-O` build of the
# fuzz crate took over 100 minutes on the shared 2-core VM, and every
# execution runs 2-4x slower. Without it libFuzzer still has its coverage
# feedback, panics, timeouts and the RSS limit, which is what the targets'
# properties check. CI's smoke keeps ASan (`--dev` build).
#
# The stable toolchain is enough: cargo-fuzz needs nightly flags, which
# RUSTC_BOOTSTRAP=1 allows. cargo-fuzz is installed (cargo install) when
# missing. The committed seeds in fuzz/corpus/TARGET are read, never written:
# new inputs go to a working corpus under the target directory
# ($FUZZ_TARGET_DIR, default /var/tmp/tessera-fuzz). A crash stops the run
# and leaves its input in fuzz/artifacts/TARGET; turn it into a regression
# test.
#
# Campaigns use an optimised build (`cargo fuzz build -O`); --smoke uses an
# unoptimised one (`--dev`, line tables only), which costs less CPU to build
# and still has AddressSanitizer and the coverage feedback: it proves that
# every target builds, reads its seeds and survives a few seconds of
# mutation. Each target's line gives its executions, exec/s, coverage and
# peak RSS; the last line is "N passed, M failed" (a target passes when it ran
# without a crash). The smoke starts each target from the committed seeds and
# an empty working corpus (under $FUZZ_TARGET_DIR/smoke, logs too), so what a
# campaign accumulated never lengthens it: libFuzzer runs every input of its
# corpus before the time limit counts. Every run is bounded: libFuzzer stops
# at the time limit, and an outer `timeout` kills a target that overruns it
# (by a minute for the smoke, by ten for a campaign, whose working corpus
# may take that long to replay); such a target is reported as OVERRAN.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_EACH=600
RUNS=
BUILD=(-O)
SMOKE=
SANITIZER=
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SECONDS_EACH=5; BUILD=(--dev); SMOKE=1; shift ;;
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --sanitizer) SANITIZER="$2"; shift 2 ;;
    --no-asan) SANITIZER=none; shift ;;
    -h|--help) sed -n 2,30p "$0"; exit 0 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done

export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-/var/tmp/tessera-fuzz}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked --version 0.13.2 >&2
fi

cd "$ROOT/fuzz"
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(cargo fuzz list)
fi
if [ -n "$SANITIZER" ]; then
  BUILD+=(--sanitizer "$SANITIZER")
fi
echo "fuzz: building ${#TARGETS[@]} targets (${BUILD[*]})" >&2
if [ "${BUILD[0]}" = --dev ]; then
  export CARGO_PROFILE_DEV_DEBUG=line-tables-only
fi
cargo fuzz build "${BUILD[@]}" >&2

# One of libFuzzer's closing `stat::NAME: value` lines of a log.
final_stat() { grep -Eo "stat::$1: *[0-9]+" "$2" | grep -Eo '[0-9]+$' | tail -1 || true; }

if [ -n "$SMOKE" ]; then
  OUT="$CARGO_TARGET_DIR/smoke"
  SLACK=60
else
  OUT="$CARGO_TARGET_DIR"
  SLACK=600
fi

passed=0
failed=0
for t in "${TARGETS[@]}"; do
  work="$OUT/corpus/$t"
  if [ -n "$SMOKE" ]; then
    rm -rf "$work"
  fi
  mkdir -p "$work"
  log="$OUT/fuzz-$t.log"
  rc=0
  timeout --kill-after=10 "$((SECONDS_EACH + SLACK))" \
    cargo fuzz run "${BUILD[@]}" "$t" "$work" "corpus/$t" -- \
    -max_total_time="$SECONDS_EACH" ${RUNS:+-runs="$RUNS"} \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    </dev/null >"$log" 2>&1 || rc=$?
  case "$rc" in
    0) status=ok ;;
    124|137) status=OVERRAN ;;
    *) status=CRASH ;;
  esac
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1 || true)
  echo "fuzz: $t: $status, $(final_stat number_of_executed_units "$log") executions," \
    "$(final_stat average_exec_per_sec "$log") exec/s, ${cov:-no coverage line}," \
    "peak RSS $(final_stat peak_rss_mb "$log") MB (log: $log)"
  if [ "$rc" -ne 0 ]; then
    tail -30 "$log" >&2
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
