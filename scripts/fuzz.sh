#!/usr/bin/env bash
# Runs the libFuzzer targets of a -Dfuzz=true build (`make fuzz`), one after
# the other, each for FUZZ_SECONDS on its committed corpus (fuzz/corpus/T,
# read only) plus a scratch directory for the units it finds (fuzz/new/T,
# not committed).  Crashes, leaks and timeouts land in fuzz/artifacts/ and
# make the script exit non-zero after every target has had its turn.
#   scripts/fuzz.sh BUILD-DIR TARGET...
set -uo pipefail

build=$1
shift
seconds=${FUZZ_SECONDS:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export OPENBLAS_NUM_THREADS=1

failed=()
for target in "$@"; do
  new="$root/fuzz/new/$target"
  mkdir -p "$new" "$root/fuzz/artifacts"
  dict=()
  [ -f "$root/fuzz/$target.dict" ] && dict=(-dict="$root/fuzz/$target.dict")
  echo "fuzz: $target for ${seconds}s (new units in fuzz/new/$target)"
  # -close_fd_mask=1: the op fuzzer's ts_print output would flood the log
  if ! "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -close_fd_mask=1 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="$root/fuzz/artifacts/$target-" "$new" "$root/fuzz/corpus/$target"; then
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (reproducers in fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz: no findings"
