/* ts-trace-log.h — one row per trace event (time, function, signature,
 * reason, duration, concrete functions held) and, above them, the
 * frequent-retracing warning as a banner whose button applies the input
 * signature it suggests.  Activating a row emits ::entry-activated. */
#pragma once

#include <gtk/gtk.h>

#include "ts-trace-entry.h"

G_BEGIN_DECLS

#define TS_TYPE_TRACE_LOG (ts_trace_log_get_type())
G_DECLARE_FINAL_TYPE(TsTraceLog, ts_trace_log, TS, TRACE_LOG, GtkWidget)

void ts_trace_log_add(TsTraceLog *self, TsTraceEntry *entry);
void ts_trace_log_clear(TsTraceLog *self);
/* The rows (borrowed). */
GListModel *ts_trace_log_get_entries(TsTraceLog *self);

/* Shows the banner; when fixable, with a button that activates
 * win.apply-signature("function"). */
void ts_trace_log_show_warning(TsTraceLog *self, const char *function, const char *message,
                               gboolean fixable);
void ts_trace_log_hide_warning(TsTraceLog *self);
/* The banner's text, NULL when hidden. */
const char *ts_trace_log_get_warning(TsTraceLog *self);

G_END_DECLS
