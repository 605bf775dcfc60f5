#!/usr/bin/env bash
# Installs every package needed to build, test and benchmark Sextant on Debian 12.
# Safe to re-run: apt-get skips packages that are already present.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimdjson-dev libyaml-cpp-dev libtomlplusplus-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libxlsxwriter-dev zlib1g-dev libzstd-dev libprotobuf-dev protobuf-compiler libcpp-httplib-dev
  libopenmpi-dev openmpi-bin python3
  chromium  # the viewer's browser tests (tests/web/) drive it headless
)
# Node.js and npm run the browser tests; Debian's packages unless the machine already has them
# (a nodesource nodejs includes npm, and conflicts with Debian's npm package).
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
