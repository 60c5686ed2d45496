#!/bin/sh
# check-lib-layers.sh LAYER:PATH... — the project's libraries and programs
# point down the layers of DESIGN.md: each PATH (a library, or a folder of
# a program's object files) may call functions defined at its own layer or
# below, never above (the CLI and the worker never reach GTK code, the
# profiler never the viewer, the viewer never the app).  The engine's own
# files are checked by check-layers.sh.  TAP.
set -eu
NM=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

symbols() { # PATH: defined global functions, or undefined ones with -u
  if [ -d "$2" ]; then
    for o in "$2"/*.o; do "$NM" $1 "$o"; done
  else
    "$NM" $1 "$2" 2>/dev/null
  fi
}

: > "$tmp/defined"
for spec in "$@"; do
  layer=${spec%%:*}
  path=${spec#*:}
  symbols "--defined-only -g" "$path" | awk -v l="$layer" -v f="$(basename "$path")" \
    'NF == 3 && $2 == "T" { print $3, l, f }' >> "$tmp/defined"
done
sort -k1,1 "$tmp/defined" > "$tmp/defined.sorted"

echo "1..$#"
i=0
status=0
for spec in "$@"; do
  i=$((i + 1))
  layer=${spec%%:*}
  path=${spec#*:}
  symbols -u "$path" | awk '$1 == "U" { print $2 }' | sort -u > "$tmp/undef"
  bad=$(join "$tmp/undef" "$tmp/defined.sorted" | awk -v l="$layer" '$2 > l { printf "%s (%s) ", $1, $3 }')
  if [ -n "$bad" ]; then
    echo "not ok $i - $(basename "$path") (layer $layer) calls up: $bad"
    status=1
  else
    echo "ok $i - $(basename "$path") (layer $layer)"
  fi
done
exit $status
