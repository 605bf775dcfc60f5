#!/usr/bin/env bash
# Fails, listing the files, when a tracked C++ file is not formatted as .clang-format says.
# `scripts/check_format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/sextant-format.$$; then
  grep -o '^[^:]*:[0-9]*:[0-9]*: error' /tmp/sextant-format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/not clang-formatted: /' >&2
  rm -f /tmp/sextant-format.$$
  echo "scripts/check_format.sh --fix formats them" >&2
  exit 1
fi
rm -f /tmp/sextant-format.$$
