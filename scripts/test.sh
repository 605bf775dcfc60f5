#!/usr/bin/env bash
# Installs dependencies, checks the formatting, builds the project twice with -Werror
# (optimised with GCC, and with clang + AddressSanitizer + UndefinedBehaviorSanitizer, which
# also builds the libFuzzer targets) and runs the whole test suite on both builds, then a short
# run of every fuzz target (SEXTANT_FUZZ_SECONDS each, default 5).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/install_deps.sh"
"$ROOT/scripts/check_format.sh"
# puppeteer-core for the browser tests, exactly as locked (no browser download: Debian's chromium).
(cd "$ROOT/tests/web" && npm ci --no-audit --no-fund --loglevel=error)
"$ROOT/scripts/build.sh" "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DSEXTANT_WERROR=ON
(cd "$ROOT/build" && ctest --output-on-failure -j "$(nproc)")
CC=clang CXX=clang++ "$ROOT/scripts/build.sh" "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug \
  -DSEXTANT_SANITIZE=ON -DSEXTANT_FUZZ=ON -DSEXTANT_BENCHMARKS=OFF -DSEXTANT_WERROR=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$ROOT/build-asan" && ctest --output-on-failure -j "$(nproc)")
# Inputs capped at 64 KiB: the short run checks every target starts, loads its seeds and
# survives mutation; the long campaigns (docs/robustness.md) use the full-size seeds.
SEXTANT_FUZZ_DIR="$ROOT/build-asan" SEXTANT_FUZZ_MAX_LEN=65536 \
  "$ROOT/scripts/fuzz.sh" "${SEXTANT_FUZZ_SECONDS:-5}"
echo "All tests passed (optimised and sanitizer builds, fuzz targets)."
