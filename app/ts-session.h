/* ts-session.h — a saved session: the module, what was selected, the
 * arguments typed per function and the trace log with each trace's graph,
 * as a JSON file (docs/session.md).  Graphs inside are in their one
 * serialized form (docs/graph-format.md), base64-encoded. */
#pragma once

#include <gio/gio.h>

#include "ts-trace-entry.h"

G_BEGIN_DECLS

/* Arguments the user gave a function. */
typedef struct {
  char *function;
  char **specs;
  guint repeat;
} TsSessionArgs;

/* A row of the trace log. */
typedef struct {
  char *function;
  char *signature;
  ts_trace_reason reason;
  char *reason_text;
  guint64 duration_ns;
  int n_concrete;
  char *call_label;
  gint64 time_us;
  gboolean failed;          /* tracing failed: reason_text is the error */
  TsConcreteInfo *concrete; /* with its graph; NULL if the trace had none */
} TsSessionTrace;

typedef struct {
  char *module;        /* what was opened: "seeds" or a path */
  char *function;      /* selected, or NULL */
  char *mode;          /* "graph", "eager" or "debug" */
  char *device;        /* where the calls ran ("SIM:0"), or NULL: the CPU */
  GPtrArray *args;     /* TsSessionArgs * */
  GPtrArray *traces;   /* TsSessionTrace * */
  /* the graph view: the graph it shows, which groups are open, where it looks */
  char *view_function, *view_signature;
  char **expanded;     /* item names; NULL: no view kept */
  double zoom, centre_x, centre_y;
} TsSession;

TsSession *ts_session_new(const char *module, const char *function, const char *mode);
void ts_session_free(TsSession *session);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsSession, ts_session_free)

void ts_session_add_args(TsSession *session, const char *function, const char *const *specs, guint repeat);
void ts_session_add_entry(TsSession *session, TsTraceEntry *entry);
/* Keeps the graph view's state: the graph of function with signature,
 * shown with ts_graph_view_dup_expanded and _get_centre's results. */
void ts_session_set_view(TsSession *session, const char *function, const char *signature,
                         const char *const *expanded, double zoom, double centre_x, double centre_y);

/* Writes session to path (atomically).  FALSE with an error naming path. */
gboolean ts_session_save(const TsSession *session, const char *path, GError **error);
/* Reads a session; NULL with an error naming path and what was wrong. */
TsSession *ts_session_load(const char *path, GError **error);

/* The trace log of a session read back, as entries of module. */
GPtrArray *ts_session_make_entries(const TsSession *session, TsLoadedModule *module);

G_END_DECLS
