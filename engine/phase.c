/* phase.c — phase events: spans around tracing, passes, planning and
 * tuning, so that a timeline can explain a first call as a whole. */
#include "phase.h"

#include "engine-private.h"

static const char *const PHASE_NAMES[TS_PHASE_KIND_COUNT] = {
  [TS_PHASE_TRACE] = "trace", [TS_PHASE_OPTIMIZE] = "optimize", [TS_PHASE_PASS] = "pass",
  [TS_PHASE_PLAN] = "plan",   [TS_PHASE_TUNE] = "tune",
};

const char *ts_phase_kind_name(ts_phase_kind kind)
{
  return (unsigned)kind < TS_PHASE_KIND_COUNT ? PHASE_NAMES[kind] : "?";
}

/* Phases open on this thread: begin and end pair on one thread. */
static _Thread_local int open_phases;

static bool wanted(ts_event_kind kind)
{
  return __atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS_EVENT_MASK(kind);
}

void ts__phase_begin(ts__phase *p, ts_phase_kind kind, const char *name)
{
  *p = (ts__phase){ kind, name, open_phases++, ts_now_ns() };
  if (!wanted(TS_EVENT_PHASE_BEGIN))
    return;
  ts_event ev = { .kind = TS_EVENT_PHASE_BEGIN };
  ev.phase = (ts_phase_event){ .phase = kind, .name = name, .depth = p->depth,
                               .start_ns = p->start_ns };
  ts__listeners_emit(&ev);
}

void ts__phase_end(ts__phase *p, const char *detail)
{
  open_phases--;
  if (!wanted(TS_EVENT_PHASE_END))
    return;
  ts_event ev = { .kind = TS_EVENT_PHASE_END };
  ev.phase = (ts_phase_event){ .phase = p->kind, .name = p->name, .detail = detail,
                               .depth = p->depth, .start_ns = p->start_ns,
                               .end_ns = ts_now_ns() };
  ts__listeners_emit(&ev);
}
