#!/usr/bin/env bash
# Installs the Debian 12 packages Tracescope builds and tests with, if any
# are missing.  Idempotent: does nothing when everything is there.
# --fuzz: only what `make fuzz` needs on top (clang and its libFuzzer runtime).
set -euo pipefail

packages=(
  build-essential gcc make pkg-config meson ninja-build
  libglib2.0-dev libglib2.0-bin
  libopenblas-dev
  libgraphviz-dev
  libgtk-4-dev libadwaita-1-dev
  libcairo2-dev libpango1.0-dev fonts-dejavu-core
  xvfb xauth appstream desktop-file-utils
)

fuzz_packages=(clang libclang-rt-14-dev)
[ "${1:-}" = "--fuzz" ] && packages=("${fuzz_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
