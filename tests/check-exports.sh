#!/bin/sh
# check-exports.sh ENGINE_SO LIB... — no other library of the project
# defines a function the engine exports: linked into one program, it would
# take the engine's own calls to that name (the viewer once had its own
# ts_tensor_stats_compute, another struct, which the engine's debugger
# would have reached inside the app).  TAP.
set -eu
NM=${NM:-nm}
engine=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NM" -D --defined-only "$engine" | awk '$2 == "T" { print $3 }' | sort -u > "$tmp/exported"
echo "1..$#"
i=0
status=0
for lib in "$@"; do
  i=$((i + 1))
  "$NM" --defined-only -g "$lib" 2>/dev/null | awk 'NF == 3 && $2 == "T" { print $3 }' | sort -u > "$tmp/defined"
  clash=$(comm -12 "$tmp/exported" "$tmp/defined" | tr '\n' ' ')
  if [ -n "$clash" ]; then
    echo "not ok $i - $(basename "$lib") defines what the engine exports: $clash"
    status=1
  else
    echo "ok $i - $(basename "$lib")"
  fi
done
exit $status
