#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default example.
# Extra arguments are passed to `sextant projection memory`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/install_deps.sh"
"$ROOT/scripts/build.sh" "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
exec "$ROOT/build/src/cli/sextant" projection memory "$@"
