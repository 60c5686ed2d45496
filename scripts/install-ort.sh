#!/usr/bin/env bash
# Installs onnxruntime-node (ONNX Runtime for Node.js, CPU build) into
# PREFIX/node_modules for test-onnx-interop, which runs our exported
# models in it.  npm install --ignore-scripts: the CPU library ships in
# the package.  Idempotent.  Never fails the build: without node, npm or
# the registry it says why, and the test skips saying the same.
#
#   scripts/install-ort.sh PREFIX      (make test: build-test/ort)
set -uo pipefail

prefix=${1:?usage: scripts/install-ort.sh PREFIX}
version=1.30.0
package=$prefix/node_modules/onnxruntime-node/package.json

if [ -f "$package" ] && grep -q "\"version\": \"$version\"" "$package"; then
  exit 0
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-ort: node and npm are not installed (apt-get install nodejs npm): test-onnx-interop will skip" >&2
  exit 0
fi
mkdir -p "$prefix"
echo "install-ort: installing onnxruntime-node $version into $prefix"
# The system's CA store (ca-certificates): a proxy whose CA only that store
# has must not leave npm retrying a failed TLS handshake for minutes.
cafile=()
[ -r /etc/ssl/certs/ca-certificates.crt ] && cafile=(--cafile /etc/ssl/certs/ca-certificates.crt)
if ! timeout 300 npm install --ignore-scripts --no-audit --no-fund --fetch-retries=1 "${cafile[@]}" \
  --prefix "$prefix" "onnxruntime-node@$version" >"$prefix/npm.log" 2>&1; then
  echo "install-ort: npm install failed (offline?), see $prefix/npm.log: test-onnx-interop will skip" >&2
  exit 0
fi
# The package must load here (glibc, CPU): say so now rather than in the test.
if ! (cd "$prefix" && node -e "require('onnxruntime-node')") >>"$prefix/npm.log" 2>&1; then
  echo "install-ort: onnxruntime-node does not load on this machine, see $prefix/npm.log" >&2
fi
exit 0
