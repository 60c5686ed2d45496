/* phase.h — spans of what the engine does to prepare calls (tracing, each
 * pass, planning, tuning), reported as PHASE_BEGIN/PHASE_END events.
 * Shared by the engine's files and its kernels (tuning). */
#pragma once

#include "tracescope.h"

/* One phase as it runs, on the caller's stack. */
typedef struct ts__phase {
  ts_phase_kind kind;
  const char *name;
  int depth;
  uint64_t start_ns;
} ts__phase;

/* Begins phase p (name must live until the end); events only while someone
 * listens, the nesting kept always. */
void ts__phase_begin(ts__phase *p, ts_phase_kind kind, const char *name);
/* Ends it, with what it did (or NULL). */
void ts__phase_end(ts__phase *p, const char *detail);
