#!/usr/bin/env bash
# Installs the Debian 12 packages Tracescope builds and tests with, if any
# are missing.  Idempotent: does nothing when everything is there.
# --fuzz: only what `make fuzz` needs on top (clang and its libFuzzer runtime).
set -euo pipefail

packages=(
  build-essential gcc make pkg-config meson ninja-build
  libglib2.0-dev libglib2.0-bin
  libjson-glib-dev libyajl-dev zlib1g-dev
  libopenblas-dev
  dataset-fashion-mnist
  libdw-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
  libgraphviz-dev
  libgtk-4-dev libadwaita-1-dev libgtksourceview-5-dev
  libcairo2-dev libpango1.0-dev fonts-dejavu-core
  xvfb xauth appstream desktop-file-utils
  openssh-client openssh-server
)

fuzz_packages=(clang libclang-rt-14-dev)
[ "${1:-}" = "--fuzz" ] && packages=("${fuzz_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: these Debian packages are missing: ${missing[*]}" >&2
    echo "install-deps: you are not root and sudo is not installed, so they cannot be installed from here." >&2
    echo "install-deps: as root, run:  apt-get install ${missing[*]}" >&2
    echo "install-deps: (or install sudo and give yourself the right to use it), then run make again." >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
