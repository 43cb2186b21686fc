#!/usr/bin/env bash
# Checks that the crates of the workspace are ready to publish.
#
#   scripts/publish-check.sh [--skip STAGE]...
#
# Stages, run in this order; a failing stage does not stop the ones after it:
#   msrv      `cargo +VERSION check --workspace --all-targets` with the declared
#             `rust-version` (rustup installs that toolchain, minimal profile, when
#             it is missing)
#   features  `cargo hack --each-feature --no-dev-deps check --workspace`: every
#             member crate builds with no default features, with its defaults, and
#             with each feature alone (cargo-hack is installed with
#             `cargo install --locked cargo-hack` when it is missing)
#   package   `cargo package --workspace`: each publishable crate's archive (licence
#             files, readme, metadata) is built and then compiled on its own, with
#             its unpublished siblings taken from a local registry of their archives
#
# Not part of `.ci/run`: on a shared 2-core machine (December 2026) the msrv
# stage took 12 minutes (a cold build with a second toolchain), the features
# stage 15 minutes (42 checks, 5.5 minutes of CPU; installing cargo-hack
# 1.5 more), and the package stage compiles every crate once more: together
# well over the margin a cold CI run has left. Run it before a release.
#
# Exit status: 0 when every stage passed, else 1.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

SKIP=" "
while [ $# -gt 0 ]; do
  case "$1" in
    --skip) shift; SKIP+="${1:-} " ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "publish-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

FAILED=()
stage() { # NAME CMD...
  local name="$1"; shift
  case "$SKIP" in *" $name "*) echo "== $name: skipped"; return 0 ;; esac
  printf '\n===== %s =====\n' "$name"
  local t0=$SECONDS
  if "$@"; then
    echo "== $name: ok ($((SECONDS - t0))s)"
  else
    echo "== $name: FAILED ($((SECONDS - t0))s)"
    FAILED+=("$name")
  fi
}

# The workspace's declared rust-version (Cargo.toml, [workspace.package]).
rust_version() {
  sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version *= *"\([0-9.]*\)"/\1/p' Cargo.toml
}

msrv() {
  local v
  v="$(rust_version)"
  [ -n "$v" ] || { echo "no rust-version in [workspace.package]" >&2; return 1; }
  if ! rustup run "$v" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$v" --profile minimal || return 1
  fi
  cargo "+$v" check --workspace --all-targets
}

features() {
  if ! cargo hack --version >/dev/null 2>&1; then
    cargo install --locked cargo-hack || return 1
  fi
  cargo hack --each-feature --no-dev-deps check --workspace
}

package() {
  cargo package --workspace --exclude tessera-examples --locked
}

stage msrv msrv
stage features features
stage package package

echo
if [ ${#FAILED[@]} -eq 0 ]; then
  echo "publish-check: every stage passed"
else
  echo "publish-check: failed: ${FAILED[*]}"
  exit 1
fi
