#!/usr/bin/env bash
# Installs dependencies, builds the `sextant` program only (scripts/test.sh builds the tests and
# benchmarks in the same build directory) and runs the main job on the bundled default example.
# The configure and build output goes to build/run-build.log and is shown only if they fail.
# Extra arguments are passed to `sextant projection memory`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/build"
LOG="$DIR/run-build.log"
"$ROOT/scripts/install_deps.sh"
mkdir -p "$DIR"
if ! { cmake -S "$ROOT" -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$DIR" --target sextant -j "${SEXTANT_JOBS:-$(nproc)}"; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "scripts/run.sh: building sextant failed (the output above is kept in $LOG)" >&2
  exit 1
fi
exec "$DIR/src/cli/sextant" projection memory "$@"
