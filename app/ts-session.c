/* ts-session.c — sessions as JSON (json-glib), read through the bounded
 * reader (tsp_json_load) and checked field by field on the way in: a
 * session file from elsewhere gives an error, never a crash. */
#include "ts-session.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <tracescope-json.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT "tracescope-session"
#define VERSION 1
#define SESSION_MAX_BYTES ((uint64_t)1 << 30)

static void args_free(TsSessionArgs *a)
{
  g_free(a->function);
  g_strfreev(a->specs);
  g_free(a);
}

static void trace_free(TsSessionTrace *t)
{
  g_free(t->function);
  g_free(t->signature);
  g_free(t->reason_text);
  g_free(t->call_label);
  g_clear_pointer(&t->concrete, ts_concrete_info_unref);
  g_free(t);
}

TsSession *ts_session_new(const char *module, const char *function, const char *mode)
{
  TsSession *s = g_new0(TsSession, 1);
  s->module = g_strdup(module);
  s->function = g_strdup(function);
  s->mode = g_strdup(mode ? mode : "graph");
  s->args = g_ptr_array_new_with_free_func((GDestroyNotify)args_free);
  s->traces = g_ptr_array_new_with_free_func((GDestroyNotify)trace_free);
  return s;
}

void ts_session_free(TsSession *s)
{
  if (!s)
    return;
  g_free(s->module);
  g_free(s->function);
  g_free(s->mode);
  g_free(s->device);
  g_ptr_array_unref(s->args);
  g_ptr_array_unref(s->traces);
  g_free(s->view_function);
  g_free(s->view_signature);
  g_strfreev(s->expanded);
  g_free(s);
}

void ts_session_add_args(TsSession *s, const char *function, const char *const *specs, guint repeat)
{
  TsSessionArgs *a = g_new0(TsSessionArgs, 1);
  a->function = g_strdup(function);
  a->specs = g_strdupv((char **)specs);
  a->repeat = MAX(repeat, 1);
  g_ptr_array_add(s->args, a);
}

void ts_session_set_view(TsSession *s, const char *function, const char *signature,
                         const char *const *expanded, double zoom, double centre_x, double centre_y)
{
  g_free(s->view_function);
  g_free(s->view_signature);
  s->view_function = g_strdup(function);
  s->view_signature = g_strdup(signature);
  g_strfreev(s->expanded);
  s->expanded = g_strdupv((char **)(expanded ? expanded : (const char *const[]){ NULL }));
  s->zoom = zoom;
  s->centre_x = centre_x;
  s->centre_y = centre_y;
}

void ts_session_add_entry(TsSession *s, TsTraceEntry *entry)
{
  TsSessionTrace *t = g_new0(TsSessionTrace, 1);
  t->function = g_strdup(ts_trace_entry_get_function(entry));
  t->signature = g_strdup(ts_trace_entry_get_signature(entry));
  t->reason = ts_trace_entry_get_reason_code(entry);
  t->reason_text = g_strdup(ts_trace_entry_get_reason(entry));
  t->duration_ns = ts_trace_entry_get_duration_ns(entry);
  t->n_concrete = ts_trace_entry_get_n_concrete(entry);
  t->call_label = g_strdup(ts_trace_entry_get_call_label(entry));
  t->time_us = ts_trace_entry_get_time(entry);
  t->failed = ts_trace_entry_get_failed(entry);
  TsConcreteInfo *cf = (TsConcreteInfo *)ts_trace_entry_get_concrete(entry);
  t->concrete = cf ? ts_concrete_info_ref(cf) : NULL;
  g_ptr_array_add(s->traces, t);
}

GPtrArray *ts_session_make_entries(const TsSession *s, TsLoadedModule *module)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint i = 0; i < s->traces->len; i++) {
    const TsSessionTrace *t = g_ptr_array_index(s->traces, i);
    TsWorkerTrace trace = {
      .function = t->function, .signature = t->signature, .reason = t->reason,
      .reason_text = t->reason_text, .duration_ns = t->duration_ns, .n_concrete = t->n_concrete,
      .error = t->failed ? t->reason_text : NULL,
    };
    g_ptr_array_add(entries, ts_trace_entry_new(module, &trace, t->concrete, t->call_label, t->time_us));
  }
  return entries;
}

/* ---- writing ----------------------------------------------------------------------- */

static void add_string(JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name(b, name);
  if (value)
    json_builder_add_string_value(b, value);
  else
    json_builder_add_null_value(b);
}

static void add_int(JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name(b, name);
  json_builder_add_int_value(b, value);
}

static void add_trace(JsonBuilder *b, const TsSessionTrace *t)
{
  json_builder_begin_object(b);
  add_string(b, "function", t->function);
  add_string(b, "signature", t->signature);
  add_int(b, "reason", t->reason);
  add_string(b, "reason_text", t->reason_text);
  add_int(b, "duration_ns", (gint64)t->duration_ns);
  add_int(b, "n_concrete", t->n_concrete);
  add_string(b, "call", t->call_label);
  add_int(b, "time_us", t->time_us);
  json_builder_set_member_name(b, "failed");
  json_builder_add_boolean_value(b, t->failed);
  if (t->concrete) {
    add_string(b, "pretty_signature", t->concrete->pretty_signature);
    size_t size = 0;
    void *bytes = t->concrete->graph ? ts_graph_serialize(t->concrete->graph, &size) : NULL;
    if (bytes) {
      g_autofree char *text = g_base64_encode(bytes, size);
      add_string(b, "graph", text);
      free(bytes);
    } else {
      ts_error_clear();
    }
  }
  json_builder_end_object(b);
}

static void add_view(JsonBuilder *b, const TsSession *s)
{
  json_builder_set_member_name(b, "view");
  json_builder_begin_object(b);
  add_string(b, "function", s->view_function);
  add_string(b, "signature", s->view_signature);
  json_builder_set_member_name(b, "expanded");
  json_builder_begin_array(b);
  for (char **name = s->expanded; *name; name++)
    json_builder_add_string_value(b, *name);
  json_builder_end_array(b);
  json_builder_set_member_name(b, "zoom");
  json_builder_add_double_value(b, s->zoom);
  json_builder_set_member_name(b, "centre");
  json_builder_begin_array(b);
  json_builder_add_double_value(b, s->centre_x);
  json_builder_add_double_value(b, s->centre_y);
  json_builder_end_array(b);
  json_builder_end_object(b);
}

gboolean ts_session_save(const TsSession *s, const char *path, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  add_string(b, "format", FORMAT);
  add_int(b, "version", VERSION);
  add_string(b, "module", s->module);
  add_string(b, "function", s->function);
  add_string(b, "mode", s->mode);
  if (s->device)
    add_string(b, "device", s->device);
  json_builder_set_member_name(b, "arguments");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->args->len; i++) {
    const TsSessionArgs *a = g_ptr_array_index(s->args, i);
    json_builder_begin_object(b);
    add_string(b, "function", a->function);
    json_builder_set_member_name(b, "specs");
    json_builder_begin_array(b);
    for (char **spec = a->specs; spec && *spec; spec++)
      json_builder_add_string_value(b, *spec);
    json_builder_end_array(b);
    add_int(b, "repeat", a->repeat);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "trace_log");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->traces->len; i++)
    add_trace(b, g_ptr_array_index(s->traces, i));
  json_builder_end_array(b);
  if (s->expanded)
    add_view(b, s);
  json_builder_end_object(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  gsize length;
  g_autofree char *text = json_generator_to_data(gen, &length);
  if (!g_file_set_contents(path, text, (gssize)length, error)) {
    g_prefix_error(error, "cannot save the session: ");
    return FALSE;
  }
  return TRUE;
}

/* ---- reading ------------------------------------------------------------------------- */

typedef struct {
  const char *path;
  GError **error;
} Reader;

static gboolean bad(Reader *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean bad(Reader *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(r->error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "'%s' is not a Tracescope session: %s",
              r->path, what);
  return FALSE;
}

/* The member `name` of o as a string; NULL and no error when absent or null
 * and optional, else an error. */
static gboolean get_string(Reader *r, JsonObject *o, const char *where, const char *name,
                           gboolean optional, char **out)
{
  JsonNode *n = json_object_get_member(o, name);
  *out = NULL;
  if (!n || JSON_NODE_HOLDS_NULL(n))
    return optional || bad(r, "%s has no %s", where, name);
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
    return bad(r, "%s: %s is not a string", where, name);
  *out = g_strdup(json_node_get_string(n));
  return TRUE;
}

static gboolean get_int(Reader *r, JsonObject *o, const char *where, const char *name, gint64 min,
                        gint64 max, gint64 *out)
{
  JsonNode *n = json_object_get_member(o, name);
  if (!n || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64)
    return bad(r, "%s: %s is not an integer", where, name);
  *out = json_node_get_int(n);
  if (*out < min || *out > max)
    return bad(r, "%s: %s %" G_GINT64_FORMAT " is out of range", where, name, *out);
  return TRUE;
}

static JsonArray *get_array(Reader *r, JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member(o, name);
  if (!n)
    return NULL;
  if (!JSON_NODE_HOLDS_ARRAY(n)) {
    bad(r, "%s is not an array", name);
    return NULL;
  }
  return json_node_get_array(n);
}

static gboolean read_args(Reader *r, TsSession *s, JsonArray *args)
{
  for (guint i = 0; args && i < json_array_get_length(args); i++) {
    g_autofree char *where = g_strdup_printf("arguments[%u]", i);
    JsonNode *n = json_array_get_element(args, i);
    if (!JSON_NODE_HOLDS_OBJECT(n))
      return bad(r, "%s is not an object", where);
    JsonObject *o = json_node_get_object(n);
    g_autofree char *function = NULL;
    gint64 repeat = 1;
    JsonArray *specs = get_array(r, o, "specs");
    if (!get_string(r, o, where, "function", FALSE, &function) || !specs ||
        !get_int(r, o, where, "repeat", 1, G_MAXUINT32, &repeat))
      return specs ? FALSE : bad(r, "%s has no specs", where);
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    for (guint k = 0; k < json_array_get_length(specs); k++) {
      JsonNode *spec = json_array_get_element(specs, k);
      if (!JSON_NODE_HOLDS_VALUE(spec) || json_node_get_value_type(spec) != G_TYPE_STRING)
        return bad(r, "%s: spec %u is not a string", where, k);
      g_strv_builder_add(b, json_node_get_string(spec));
    }
    g_auto(GStrv) list = g_strv_builder_end(b);
    ts_session_add_args(s, function, (const char *const *)list, (guint)repeat);
  }
  return TRUE;
}

static gboolean read_graph(Reader *r, const char *where, const char *base64, ts_graph **out)
{
  gsize size;
  g_autofree guchar *bytes = g_base64_decode(base64, &size);
  *out = ts_graph_deserialize(bytes, size);
  if (*out)
    return TRUE;
  ts_error *e = ts_error_take();
  gboolean ret = bad(r, "%s: its graph does not read: %s", where, e ? e->message : "?");
  ts_error_free(e);
  return ret;
}

static gboolean read_trace(Reader *r, TsSession *s, guint i, JsonNode *n)
{
  g_autofree char *where = g_strdup_printf("trace_log[%u]", i);
  if (!JSON_NODE_HOLDS_OBJECT(n))
    return bad(r, "%s is not an object", where);
  JsonObject *o = json_node_get_object(n);
  TsSessionTrace *t = g_new0(TsSessionTrace, 1);
  g_ptr_array_add(s->traces, t);
  gint64 reason = 0, duration = 0, n_concrete = 0, time_us = 0;
  g_autofree char *pretty = NULL, *graph = NULL;
  if (!get_string(r, o, where, "function", FALSE, &t->function) ||
      !get_string(r, o, where, "signature", FALSE, &t->signature) ||
      !get_string(r, o, where, "reason_text", TRUE, &t->reason_text) ||
      !get_string(r, o, where, "call", TRUE, &t->call_label) ||
      !get_string(r, o, where, "pretty_signature", TRUE, &pretty) ||
      !get_string(r, o, where, "graph", TRUE, &graph) ||
      !get_int(r, o, where, "reason", 0, TS_TRACE_REASON_COUNT - 1, &reason) ||
      !get_int(r, o, where, "duration_ns", 0, G_MAXINT64, &duration) ||
      !get_int(r, o, where, "n_concrete", 0, G_MAXINT32, &n_concrete) ||
      !get_int(r, o, where, "time_us", 0, G_MAXINT64, &time_us))
    return FALSE;
  t->reason = (ts_trace_reason)reason;
  t->duration_ns = (guint64)duration;
  t->n_concrete = (int)n_concrete;
  t->time_us = time_us;
  JsonNode *failed = json_object_get_member(o, "failed");
  if (failed && (!JSON_NODE_HOLDS_VALUE(failed) || json_node_get_value_type(failed) != G_TYPE_BOOLEAN))
    return bad(r, "%s: failed is not true or false", where);
  t->failed = failed && json_node_get_boolean(failed);
  ts_graph *g = NULL;
  if (graph && !read_graph(r, where, graph, &g))
    return FALSE;
  if (g || pretty)
    t->concrete = ts_concrete_info_new(t->function, t->n_concrete - 1, t->signature, pretty, g);
  return TRUE;
}

static gboolean get_number(Reader *r, JsonNode *n, const char *what, double *out)
{
  if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
      (json_node_get_value_type(n) != G_TYPE_DOUBLE && json_node_get_value_type(n) != G_TYPE_INT64))
    return bad(r, "view: %s is not a number", what);
  *out = json_node_get_double(n);
  if (!isfinite(*out))
    return bad(r, "view: %s is not finite", what);
  return TRUE;
}

static gboolean read_view(Reader *r, TsSession *s, JsonNode *n)
{
  if (!JSON_NODE_HOLDS_OBJECT(n))
    return bad(r, "view is not an object");
  JsonObject *o = json_node_get_object(n);
  g_autofree char *function = NULL, *signature = NULL;
  if (!get_string(r, o, "view", "function", FALSE, &function) ||
      !get_string(r, o, "view", "signature", FALSE, &signature))
    return FALSE;
  JsonArray *expanded = get_array(r, o, "expanded");
  if (!expanded)
    return json_object_has_member(o, "expanded") ? FALSE : bad(r, "view has no expanded");
  JsonNode *centre = json_object_get_member(o, "centre");
  if (!centre || !JSON_NODE_HOLDS_ARRAY(centre) || json_array_get_length(json_node_get_array(centre)) != 2)
    return bad(r, "view: centre is not a pair of numbers");
  double zoom, x, y;
  JsonArray *xy = json_node_get_array(centre);
  if (!get_number(r, json_object_get_member(o, "zoom"), "zoom", &zoom) ||
      !get_number(r, json_array_get_element(xy, 0), "centre x", &x) ||
      !get_number(r, json_array_get_element(xy, 1), "centre y", &y))
    return FALSE;
  if (zoom <= 0)
    return bad(r, "view: zoom %g is not positive", zoom);
  g_autoptr(GStrvBuilder) names = g_strv_builder_new();
  for (guint i = 0; i < json_array_get_length(expanded); i++) {
    JsonNode *name = json_array_get_element(expanded, i);
    if (!JSON_NODE_HOLDS_VALUE(name) || json_node_get_value_type(name) != G_TYPE_STRING)
      return bad(r, "view: expanded[%u] is not a string", i);
    g_strv_builder_add(names, json_node_get_string(name));
  }
  g_auto(GStrv) list = g_strv_builder_end(names);
  ts_session_set_view(s, function, signature, (const char *const *)list, zoom, x, y);
  return TRUE;
}

static gboolean read_session(Reader *r, TsSession *s, JsonNode *root)
{
  if (!root || !JSON_NODE_HOLDS_OBJECT(root))
    return bad(r, "not a JSON object");
  JsonObject *o = json_node_get_object(root);
  g_autofree char *format = NULL;
  gint64 version = 0;
  if (!get_string(r, o, "the file", "format", FALSE, &format))
    return FALSE;
  if (strcmp(format, FORMAT) != 0)
    return bad(r, "its format is '%s'", format);
  if (!get_int(r, o, "the file", "version", 0, G_MAXINT32, &version))
    return FALSE;
  if (version != VERSION)
    return bad(r, "it is version %" G_GINT64_FORMAT "; this Tracescope reads version %d", version, VERSION);
  if (!get_string(r, o, "the file", "module", FALSE, &s->module) ||
      !get_string(r, o, "the file", "function", TRUE, &s->function))
    return FALSE;
  g_autofree char *mode = NULL;
  if (!get_string(r, o, "the file", "mode", TRUE, &mode))
    return FALSE;
  if (mode && strcmp(mode, "graph") != 0 && strcmp(mode, "eager") != 0 && strcmp(mode, "debug") != 0)
    return bad(r, "mode '%s' is not graph, eager or debug", mode);
  if (mode) {
    g_free(s->mode);
    s->mode = g_steal_pointer(&mode);
  }
  if (!get_string(r, o, "the file", "device", TRUE, &s->device))
    return FALSE;
  if (s->device && (!*s->device || strlen(s->device) > 64 || !g_str_is_ascii(s->device)))
    return bad(r, "device '%.64s' is not a device's name (\"CPU\", \"SIM:0\", \"CUDA:0\")", s->device);
  JsonArray *args = get_array(r, o, "arguments");
  if (!args && json_object_has_member(o, "arguments"))
    return FALSE;
  if (!read_args(r, s, args))
    return FALSE;
  JsonArray *log = get_array(r, o, "trace_log");
  if (!log && json_object_has_member(o, "trace_log"))
    return FALSE;
  for (guint i = 0; log && i < json_array_get_length(log); i++)
    if (!read_trace(r, s, i, json_array_get_element(log, i)))
      return FALSE;
  JsonNode *view = json_object_get_member(o, "view");
  return !view || JSON_NODE_HOLDS_NULL(view) || read_view(r, s, view);
}

TsSession *ts_session_load(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  /* measured before json-glib sees it: a file nested 200,000 deep is an
   * error, not a stack overflow */
  tsp_read_limits limits = tsp_read_limits_default();
  limits.max_bytes = limits.max_value = SESSION_MAX_BYTES;
  limits.max_string = SESSION_MAX_BYTES; /* a big model's graph, base64 */
  g_autoptr(JsonNode) root = tsp_json_load(path, &limits, error);
  if (!root) {
    g_prefix_error(error, "cannot open the session: ");
    return NULL;
  }
  Reader r = { .path = path, .error = error };
  TsSession *s = ts_session_new(NULL, NULL, "graph");
  if (!read_session(&r, s, root)) {
    ts_session_free(s);
    return NULL;
  }
  return s;
}
