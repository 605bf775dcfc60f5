#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [DIR] [extra cmake args...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-$ROOT/build}"; shift || true
cmake -S "$ROOT" -B "$DIR" -G Ninja "$@" >/dev/null
cmake --build "$DIR" -j "${SEXTANT_JOBS:-$(nproc)}"
