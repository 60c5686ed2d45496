# Sourced by scripts/bench-peers and scripts/bench-train: Debian's PyTorch
# and NumPy, installed for the benchmarks only (never for the tests).
#   $python           the interpreter Debian's python3-torch is for
#   have_torch        whether it imports torch and numpy
#   ensure_torch LOG  installs them if missing (apt-get; sudo when not
#                     root), apt's output in LOG; when they cannot be had,
#                     prints why and returns 1
python=/usr/bin/python3
[ -x "$python" ] || python=python3

have_torch() { "$python" -c "import torch, numpy" >/dev/null 2>&1; }

ensure_torch() {
  have_torch && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "PyTorch: python3-torch is not installed, and without root or sudo it cannot be (apt-get install python3-torch python3-numpy)"
      return 1
    fi
    sudo="sudo -n"
  fi
  echo "installing python3-torch python3-numpy" >&2
  { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-numpy; } >"$1" 2>&1 && return 0
  echo "PyTorch: apt-get install python3-torch python3-numpy failed (offline?); see $1"
  return 1
}
