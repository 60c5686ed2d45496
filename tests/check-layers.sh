#!/bin/sh
# check-layers.sh OBJDIR — the engine's files form layers that point one
# way: a file may call functions of its own layer and the layers below,
# never above.  Upward paths go through function pointers only (the op
# table, the op-handler stack, backends), which nm does not see as calls.
# Reads every object file's defined and undefined function symbols; TAP.
#
#   0 core      tensors, scopes, dtypes, errors, context, listeners, phases, op clock,
#               printing, backends (with the CUDA kernels) and what their
#               kernels are handed, the thread pool, the nearest name to a typo
#   1 dispatch  validation, promotion, op handlers; the step runner (execute.c:
#               one op, eager or a graph step)
#   2 ops       op families and the op table
#   3 graph     the graph IR and its rewrite API
#   4 exec      executables and passes
#   5 trace     functions, signatures, the tracer, control flow
#   6 io        .npy, argument specs, graph text, serialized graphs, modules
#   7 debug     the step debugger and health mode (their hooks below are a
#               listener and the op observer: pointers)
#   8 train     layers, losses, metrics, optimizers, IDX files, datasets
#               (tracescope-train.h: built on the public API of the rest)
set -eu
objdir=$1
NM=${NM:-nm}

layer_of() {
  case $1 in
    dtype.c.o|error.c.o|context.c.o|tensor.c.o|scope.c.o|listener.c.o|phase.c.o|op_clock.c.o|pool.c.o|nearest_name.c.o|print*.c.o|backend_*.c.o|backend_*.cu.o|kernel_ctx.c.o) echo 0 ;;
    dispatch.c.o|execute.c.o) echo 1 ;;
    ops_*.c.o|registry.c.o) echo 2 ;;
    graph.c.o) echo 3 ;;
    exec_*.c.o) echo 4 ;;
    trace_*.c.o) echo 5 ;;
    io_*.c.o|module.c.o) echo 6 ;;
    debug_*.c.o) echo 7 ;;
    train_*.c.o) echo 8 ;;
    *) echo unknown ;;
  esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objects=$(cd "$objdir" && ls *.o)
n=0
for o in $objects; do
  l=$(layer_of "$o")
  n=$((n + 1))
  # defined global functions: "symbol layer file"
  "$NM" --defined-only -g "$objdir/$o" | awk -v l="$l" -v f="$o" '$2 == "T" { print $3, l, f }' >> "$tmp/defined"
done
sort -k1,1 "$tmp/defined" > "$tmp/defined.sorted"

echo "1..$n"
i=0
status=0
for o in $objects; do
  i=$((i + 1))
  l=$(layer_of "$o")
  if [ "$l" = unknown ]; then
    echo "not ok $i - $o: not assigned to a layer (add it to tests/check-layers.sh)"
    status=1
    continue
  fi
  "$NM" -u "$objdir/$o" | awk '{ print $2 }' | sort -u > "$tmp/undef"
  bad=$(join "$tmp/undef" "$tmp/defined.sorted" | awk -v l="$l" '$2 > l { printf "%s (%s, layer %s) ", $1, $3, $2 }')
  if [ -n "$bad" ]; then
    echo "not ok $i - $o (layer $l) calls up: $bad"
    status=1
  else
    echo "ok $i - $o (layer $l)"
  fi
done
exit $status
