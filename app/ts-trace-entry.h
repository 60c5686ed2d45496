/* ts-trace-entry.h — one row of the trace log: a (re)trace of a function,
 * with the concrete function it made (kept alive with its module). */
#pragma once

#include <glib-object.h>
#include <tracescope.h>

#include "ts-loaded-module.h"
#include "ts-worker.h"

G_BEGIN_DECLS

#define TS_TYPE_TRACE_ENTRY (ts_trace_entry_get_type())
G_DECLARE_FINAL_TYPE(TsTraceEntry, ts_trace_entry, TS, TRACE_ENTRY, GObject)

/* Copies every string; keeps concrete (of module; NULL if its graph did not come). */
TsTraceEntry *ts_trace_entry_new(TsLoadedModule *module, const TsWorkerTrace *trace,
                                 TsConcreteInfo *concrete, const char *call_label, gint64 time_us);

const char *ts_trace_entry_get_function(TsTraceEntry *self);
const char *ts_trace_entry_get_signature(TsTraceEntry *self);
/* "first call" or why the cached graphs did not fit ("arg 0 (x): host value 3 differs from 2"). */
const char *ts_trace_entry_get_reason(TsTraceEntry *self);
/* "traced" / "retraced (shape)" / "tracing failed". */
const char *ts_trace_entry_get_kind(TsTraceEntry *self);
/* Tracing failed: get_reason is the error, and there is no concrete function. */
gboolean ts_trace_entry_get_failed(TsTraceEntry *self);
ts_trace_reason ts_trace_entry_get_reason_code(TsTraceEntry *self);
/* 0 when none was measured (the worker died while tracing); its
 * duration-text is then a dash. */
guint64 ts_trace_entry_get_duration_ns(TsTraceEntry *self);
int ts_trace_entry_get_n_concrete(TsTraceEntry *self);
const char *ts_trace_entry_get_call_label(TsTraceEntry *self);
gint64 ts_trace_entry_get_time(TsTraceEntry *self);
TsLoadedModule *ts_trace_entry_get_module(TsTraceEntry *self);
/* The concrete function the trace made: borrowed, lives as long as the entry; may be NULL. */
const TsConcreteInfo *ts_trace_entry_get_concrete(TsTraceEntry *self);
/* Its index among the function's concrete functions. */
int ts_trace_entry_get_concrete_index(TsTraceEntry *self);

G_END_DECLS
