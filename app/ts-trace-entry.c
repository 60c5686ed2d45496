/* ts-trace-entry.c — a trace the worker reported. */
#include "ts-trace-entry.h"

struct _TsTraceEntry {
  GObject parent_instance;
  TsLoadedModule *module;
  TsConcreteInfo *concrete;
  char *function;
  char *signature;
  char *reason;
  char *kind;
  char *call_label;
  char *time_text;
  char *duration_text;
  ts_trace_reason reason_code;
  gboolean failed;
  guint64 duration_ns;
  int n_concrete;
  gint64 time_us;
};

enum {
  PROP_0,
  PROP_FUNCTION,
  PROP_SIGNATURE,
  PROP_REASON,
  PROP_KIND,
  PROP_CALL_LABEL,
  PROP_TIME_TEXT,
  PROP_DURATION_TEXT,
  PROP_N_CONCRETE,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsTraceEntry, ts_trace_entry, G_TYPE_OBJECT)

/* How the log names each kind of trace. */
static const char *const KINDS[TS_TRACE_REASON_COUNT] = {
  [TS_TRACE_FIRST_CALL] = "traced",
  [TS_TRACE_SHAPE] = "retraced (shape)",
  [TS_TRACE_DTYPE] = "retraced (dtype)",
  [TS_TRACE_HOST_VALUE] = "retraced (host value)",
  [TS_TRACE_STRUCTURE] = "retraced (structure)",
  [TS_TRACE_EXPLICIT] = "traced (get_concrete_function)",
};

static void ts_trace_entry_finalize(GObject *object)
{
  TsTraceEntry *self = TS_TRACE_ENTRY(object);
  g_clear_object(&self->module);
  g_clear_pointer(&self->concrete, ts_concrete_info_unref);
  g_free(self->function);
  g_free(self->signature);
  g_free(self->reason);
  g_free(self->kind);
  g_free(self->call_label);
  g_free(self->time_text);
  g_free(self->duration_text);
  G_OBJECT_CLASS(ts_trace_entry_parent_class)->finalize(object);
}

static void ts_trace_entry_get_property(GObject *object, guint prop_id, GValue *value,
                                        GParamSpec *pspec)
{
  TsTraceEntry *self = TS_TRACE_ENTRY(object);
  switch (prop_id) {
  case PROP_FUNCTION: g_value_set_string(value, self->function); break;
  case PROP_SIGNATURE: g_value_set_string(value, self->signature); break;
  case PROP_REASON: g_value_set_string(value, self->reason); break;
  case PROP_KIND: g_value_set_string(value, self->kind); break;
  case PROP_CALL_LABEL: g_value_set_string(value, self->call_label); break;
  case PROP_TIME_TEXT: g_value_set_string(value, self->time_text); break;
  case PROP_DURATION_TEXT: g_value_set_string(value, self->duration_text); break;
  case PROP_N_CONCRETE: g_value_set_int(value, self->n_concrete); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static GParamSpec *string_prop(const char *name)
{
  return g_param_spec_string(name, NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
}

static void ts_trace_entry_class_init(TsTraceEntryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = ts_trace_entry_finalize;
  object_class->get_property = ts_trace_entry_get_property;
  properties[PROP_FUNCTION] = string_prop("function");
  properties[PROP_SIGNATURE] = string_prop("signature");
  properties[PROP_REASON] = string_prop("reason");
  properties[PROP_KIND] = string_prop("kind");
  properties[PROP_CALL_LABEL] = string_prop("call-label");
  properties[PROP_TIME_TEXT] = string_prop("time-text");
  properties[PROP_DURATION_TEXT] = string_prop("duration-text");
  properties[PROP_N_CONCRETE] = g_param_spec_int("n-concrete", NULL, NULL, 0, G_MAXINT, 0,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void ts_trace_entry_init(TsTraceEntry *self)
{
}

TsTraceEntry *ts_trace_entry_new(TsLoadedModule *module, const TsWorkerTrace *trace,
                                 TsConcreteInfo *concrete, const char *call_label, gint64 time_us)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(module) && trace != NULL, NULL);
  TsTraceEntry *self = g_object_new(TS_TYPE_TRACE_ENTRY, NULL);
  self->module = g_object_ref(module);
  self->concrete = concrete ? ts_concrete_info_ref(concrete) : NULL;
  self->function = g_strdup(trace->function);
  self->signature = g_strdup(trace->signature);
  /* a trace that failed says why in place of what made it trace */
  self->failed = trace->error != NULL;
  self->reason = g_strdup(self->failed ? trace->error : trace->reason_text);
  self->reason_code = trace->reason;
  self->kind = g_strdup(self->failed ? "tracing failed"
                        : (unsigned)trace->reason < TS_TRACE_REASON_COUNT ? KINDS[trace->reason] : "traced");
  self->duration_ns = trace->duration_ns;
  self->n_concrete = trace->n_concrete;
  self->call_label = g_strdup(call_label);
  self->time_us = time_us;
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local(time_us / G_USEC_PER_SEC);
  g_autofree char *hms = g_date_time_format(dt, "%H:%M:%S");
  self->time_text = g_strdup_printf("%s.%03d", hms, (int)(time_us % G_USEC_PER_SEC / 1000));
  /* none measured (the worker died while tracing): a dash, not "0.000 ms" */
  self->duration_text =
    trace->duration_ns ? g_strdup_printf("%.3f ms", (double)trace->duration_ns / 1e6) : g_strdup("—");
  return self;
}

const char *ts_trace_entry_get_function(TsTraceEntry *self) { return self->function; }
const char *ts_trace_entry_get_signature(TsTraceEntry *self) { return self->signature; }
const char *ts_trace_entry_get_reason(TsTraceEntry *self) { return self->reason; }
const char *ts_trace_entry_get_kind(TsTraceEntry *self) { return self->kind; }
gboolean ts_trace_entry_get_failed(TsTraceEntry *self) { return self->failed; }
ts_trace_reason ts_trace_entry_get_reason_code(TsTraceEntry *self) { return self->reason_code; }
guint64 ts_trace_entry_get_duration_ns(TsTraceEntry *self) { return self->duration_ns; }
int ts_trace_entry_get_n_concrete(TsTraceEntry *self) { return self->n_concrete; }
const char *ts_trace_entry_get_call_label(TsTraceEntry *self) { return self->call_label; }
gint64 ts_trace_entry_get_time(TsTraceEntry *self) { return self->time_us; }
TsLoadedModule *ts_trace_entry_get_module(TsTraceEntry *self) { return self->module; }
const TsConcreteInfo *ts_trace_entry_get_concrete(TsTraceEntry *self) { return self->concrete; }
int ts_trace_entry_get_concrete_index(TsTraceEntry *self) { return self->n_concrete - 1; }
