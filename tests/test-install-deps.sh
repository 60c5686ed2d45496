#!/usr/bin/env bash
# scripts/install-deps.sh as a user without root and without sudo: it must
# fail with a message naming what to install as root, not "sudo: command not
# found".  dpkg-query and id are faked; PATH holds nothing else but grep.
set -u
script="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '#!/bin/sh\nexit 1\n' > "$dir/dpkg-query"          # nothing is installed
printf '#!/bin/sh\necho 1000\n' > "$dir/id"               # not root
chmod +x "$dir/dpkg-query" "$dir/id"
ln -s "$(command -v grep)" "$dir/grep"
echo "1..3"
out=$(PATH="$dir" "$(command -v bash)" "$script" 2>&1)
status=$?
[ "$status" -ne 0 ] && echo "ok 1 fails without root and sudo" || echo "not ok 1 exit status $status"
case "$out" in
  *"as root, run:  apt-get install "*libgtk-4-dev*) echo "ok 2 names the packages to install as root" ;;
  *) echo "not ok 2 message: $out" ;;
esac
case "$out" in
  *"command not found"*) echo "not ok 3 message: $out" ;;
  *) echo "ok 3 no 'command not found'" ;;
esac
