#!/usr/bin/env bash
# Installs dependencies, checks the formatting, builds the project twice with -Werror
# (optimised, and with AddressSanitizer + UndefinedBehaviorSanitizer) and runs the whole test
# suite on both builds.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/install_deps.sh"
"$ROOT/scripts/check_format.sh"
"$ROOT/scripts/build.sh" "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DSEXTANT_WERROR=ON
(cd "$ROOT/build" && ctest --output-on-failure -j "$(nproc)")
"$ROOT/scripts/build.sh" "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DSEXTANT_SANITIZE=ON \
  -DSEXTANT_BENCHMARKS=OFF -DSEXTANT_WERROR=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$ROOT/build-asan" && ctest --output-on-failure -j "$(nproc)")
echo "All tests passed (optimised and sanitizer builds)."
