/* chrome-decode.c — Chrome trace events streamed through yajl into plain
 * records, checked as they come: no document is built, so a batch of
 * events costs one pass over its text.  Runs on the importer's parsing
 * threads.  The json-glib helpers at the end read the file's (small)
 * tables. */
#include "chrome-decode.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <yajl/yajl_parse.h>

bool tsp__fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, TSP_ERROR, TSP_ERROR_FORMAT, msg);
  g_free(msg);
  return false;
}

/* ---- one JSON value, as much as the checks need ----------------------------------- */

typedef enum { J_ABSENT, J_NULL, J_BOOL, J_INT, J_DOUBLE, J_STRING, J_OBJECT, J_ARRAY } jtype;

typedef struct jvalue {
  jtype type;
  int64_t i;
  double d;
  size_t str; /* J_STRING: offset in the event's scratch text */
} jvalue;

/* An integer (an integral double in range too); absent or null: 0 unless required. */
static bool check_int(const jvalue *v, const char *key, int64_t *out, bool required,
                      GError **error, uint64_t k)
{
  if (v->type == J_ABSENT || v->type == J_NULL) {
    *out = 0;
    return required ? tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key) : true;
  }
  if (v->type == J_INT) {
    *out = v->i;
    return true;
  }
  if (v->type != J_DOUBLE)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  if (!(v->d >= -TSP_MAX_NS && v->d <= TSP_MAX_NS) || v->d != floor(v->d))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not an integer in range", k, key);
  *out = (int64_t)v->d;
  return true;
}

/* A time in µs ("ts", "dur") as ns in [0, 2^53]. */
static bool check_time(const jvalue *v, const char *key, uint64_t *out, bool required,
                       GError **error, uint64_t k)
{
  *out = 0;
  if (v->type == J_ABSENT)
    return required ? tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key) : true;
  if (v->type != J_INT && v->type != J_DOUBLE)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  double us = v->type == J_INT ? (double)v->i : v->d;
  double ns = round(us * 1000.0);
  if (!(ns >= 0 && ns <= TSP_MAX_NS))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" %g µs is out of range", k, key, us);
  *out = (uint64_t)ns;
  return true;
}

/* The common case, "-?digits[.digits]" with at most 15 digits: exactly
 * what strtod gives (the digits and the power of ten are exact doubles, and
 * one division rounds correctly).  False for anything else. */
static bool plain_number(jvalue *v, const char *s, size_t len)
{
  static const double POW10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                  1e11, 1e12, 1e13, 1e14, 1e15 };
  size_t i = s[0] == '-';
  uint64_t digits = 0;
  int n = 0, decimals = -1;
  for (; i < len; i++) {
    if (s[i] == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (s[i] < '0' || s[i] > '9' || ++n > 15)
      return false;
    digits = digits * 10 + (uint64_t)(s[i] - '0');
    if (decimals >= 0)
      decimals++;
  }
  bool negative = s[0] == '-';
  if (decimals < 0) {
    *v = (jvalue){ .type = J_INT, .i = negative ? -(int64_t)digits : (int64_t)digits };
  } else {
    double d = (double)digits / POW10[decimals];
    *v = (jvalue){ .type = J_DOUBLE, .d = negative ? -d : d };
  }
  return true;
}

/* A JSON number's text as an integer when it is one that fits, else a double. */
static void number_value(jvalue *v, const char *s, size_t len)
{
  if (plain_number(v, s, len))
    return;
  char small[64];
  char *text = len < sizeof small ? small : g_malloc(len + 1);
  memcpy(text, s, len);
  text[len] = '\0';
  *v = (jvalue){ .type = J_DOUBLE };
  if (!strpbrk(text, ".eE")) {
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno == 0 && *end == '\0')
      *v = (jvalue){ .type = J_INT, .i = x };
  }
  if (v->type == J_DOUBLE)
    v->d = g_ascii_strtod(text, NULL); /* too big: ±inf, out of every range */
  if (text != small)
    g_free(text);
}

/* ---- the streaming decoder ------------------------------------------------------------- */

enum { F_PH, F_NAME, F_TID, F_TS, F_DUR, F_CAT, F_ARGS, F_DELTA, N_FIELDS };
enum { A_NAME, A_DEVICE, A_MODE, A_FUNCTION, A_REASON, A_SIGNATURE, A_RUN, A_SEQ, A_PARENT, A_N,
       A_T, A_L, A_C, A_CODE, N_ARGS };

static const char *const FIELD_KEYS[N_FIELDS] = {
  [F_PH] = "ph", [F_NAME] = "name", [F_TID] = "tid", [F_TS] = "ts", [F_DUR] = "dur",
  [F_CAT] = "cat", [F_ARGS] = "args", [F_DELTA] = "delta",
};
static const char *const ARG_KEYS[N_ARGS] = {
  [A_NAME] = "name", [A_DEVICE] = "device", [A_MODE] = "mode", [A_FUNCTION] = "function",
  [A_REASON] = "reason", [A_SIGNATURE] = "signature", [A_RUN] = "run", [A_SEQ] = "seq",
  [A_PARENT] = "parent_seq", [A_N] = "n", [A_T] = "t", [A_L] = "l", [A_C] = "c",
  [A_CODE] = "reason_code",
};

typedef struct decoder {
  int depth;            /* 1: in the events array, 2: in an event, 3: in its args or a member */
  bool in_args;         /* the container at depth 3 is the event's args object */
  jvalue *slot;         /* where the next value goes: a member we read, or NULL */
  jvalue *first_slot;   /* and there when it is the args' first member */
  jvalue field[N_FIELDS], arg[N_ARGS];
  bool has_first;       /* the args have a first member: */
  size_t first_key;     /* its name (offset in scratch) */
  jvalue first;         /* and its value (a counter's series) */
  GString *scratch;     /* the event's strings, each NUL-terminated */
  uint64_t k;           /* the event being read */
  GArray *events;
  GStringChunk *chunk;
  GError *error;
} decoder;

static jvalue *lookup(jvalue *values, const char *const *keys, int n, const unsigned char *key,
                      size_t len)
{
  for (int i = 0; i < n; i++)
    if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
      return &values[i];
  return NULL;
}

static const char *str_of(const decoder *dc, const jvalue *v)
{
  return v->type == J_STRING ? dc->scratch->str + v->str : NULL;
}

/* A string member copied into the batch's chunk, or NULL. */
static const char *copy_str(decoder *dc, const jvalue *v)
{
  const char *s = str_of(dc, v);
  return s ? g_string_chunk_insert_const(dc->chunk, s) : NULL;
}

/* A "memory" (tensors) or "arena" counter: the args' first member is the
 * series (the device), its value the live bytes; other counters are not
 * kept. */
static bool finish_memory(decoder *dc, tsp_decoded *d, const char *name)
{
  uint64_t k = dc->k;
  GError **error = &dc->error;
  const jvalue *f = dc->field;
  int what = 0;
  while (what < TS_MEMORY_KIND_COUNT && g_strcmp0(name, tsp_memory_counter_name(what)) != 0)
    what++;
  if (what == TS_MEMORY_KIND_COUNT)
    return true;
  if (f[F_ARGS].type != J_OBJECT || !dc->has_first)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": memory counter without a value", k);
  const char *series = dc->scratch->str + dc->first_key;
  int64_t tid;
  if (!check_int(&f[F_TID], "tid", &tid, false, error, k) ||
      !check_time(&f[F_TS], "ts", &d->ts, true, error, k) ||
      !check_int(&dc->first, series, &d->n, true, error, k) ||
      !check_int(&f[F_DELTA], "delta", &d->code, false, error, k))
    return false;
  d->has_delta = f[F_DELTA].type != J_ABSENT;
  if (d->n < 0)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": memory counter \"%s\" is negative", k,
                     series);
  d->ph = 'C';
  d->what = (uint8_t)what;
  d->tid = (uint64_t)tid;
  d->device = g_string_chunk_insert_const(dc->chunk, series);
  return true;
}

/* The event just read into d; false + dc->error if it is bad. */
static bool finish_event(decoder *dc, tsp_decoded *d)
{
  uint64_t k = dc->k;
  GError **error = &dc->error;
  const jvalue *f = dc->field, *a = dc->arg;
  const char *ph = str_of(dc, &f[F_PH]);
  if (!ph)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"ph\" string", k);
  bool has_args = f[F_ARGS].type == J_OBJECT;
  const char *name = str_of(dc, &f[F_NAME]);
  int64_t tid;
  if (strcmp(ph, "M") == 0) {
    if (!name || strcmp(name, "thread_name") != 0)
      return true;
    if (!check_int(&f[F_TID], "tid", &tid, true, error, k))
      return false;
    d->ph = 'M';
    d->tid = (uint64_t)tid;
    d->name = has_args ? copy_str(dc, &a[A_NAME]) : NULL;
    return true;
  }
  if (strcmp(ph, "C") == 0)
    return finish_memory(dc, d, name);
  if (strcmp(ph, "X") != 0 && strcmp(ph, "B") != 0 && strcmp(ph, "E") != 0)
    return true; /* instants, other counters, flows, ...: not kept */
  d->ph = ph[0];
  if (!check_int(&f[F_TID], "tid", &tid, false, error, k) ||
      !check_time(&f[F_TS], "ts", &d->ts, true, error, k) ||
      (d->ph == 'X' && !check_time(&f[F_DUR], "dur", &d->dur, false, error, k)))
    return false;
  d->tid = (uint64_t)tid;
  if (d->ph == 'E')
    return true; /* what it ends names the event */
  if (!name)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"name\" string", k);
  d->name = g_string_chunk_insert_const(dc->chunk, name);
  const char *cat = str_of(dc, &f[F_CAT]);
  d->cat = cat && strcmp(cat, "call") == 0    ? TSP_CAT_CALL
           : cat && strcmp(cat, "trace") == 0 ? TSP_CAT_TRACE
           : cat && strcmp(cat, "phase") == 0 ? TSP_CAT_PHASE
           : cat && strcmp(cat, "device") == 0 ? TSP_CAT_DEVICE
                                              : TSP_CAT_OP;
  d->ours = has_args; /* and the file has our tables: see the importer */
  if (!d->ours)
    return true;
  d->device = copy_str(dc, &a[A_DEVICE]);
  d->mode = copy_str(dc, &a[A_MODE]);
  d->function = copy_str(dc, &a[A_FUNCTION]);
  d->reason = copy_str(dc, &a[A_REASON]);
  d->signature = copy_str(dc, &a[A_SIGNATURE]);
  struct { int arg; int64_t *out; } ints[] = {
    { A_RUN, &d->run }, { A_SEQ, &d->seq }, { A_PARENT, &d->parent }, { A_N, &d->n },
    { A_T, &d->t }, { A_L, &d->l }, { A_C, &d->c }, { A_CODE, &d->code },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ints); i++)
    if (!check_int(&a[ints[i].arg], ARG_KEYS[ints[i].arg], ints[i].out, false, error, k))
      return false;
  return true;
}

/* An element of the events array that is not an object. */
static int not_an_object(decoder *dc)
{
  tsp__fail(&dc->error, "event %" G_GUINT64_FORMAT ": not an object", dc->k);
  return 0;
}

static int put(decoder *dc, jvalue v)
{
  if (dc->depth == 1)
    return not_an_object(dc);
  if (dc->slot)
    *dc->slot = v;
  if (dc->first_slot)
    *dc->first_slot = v;
  dc->slot = dc->first_slot = NULL;
  return 1;
}

static int on_null(void *ctx)
{
  return put(ctx, (jvalue){ .type = J_NULL });
}

static int on_boolean(void *ctx, int b)
{
  return put(ctx, (jvalue){ .type = J_BOOL, .i = b });
}

static int on_number(void *ctx, const char *s, size_t len)
{
  decoder *dc = ctx;
  if (!dc->slot && !dc->first_slot)
    return put(dc, (jvalue){ .type = J_DOUBLE });
  jvalue v;
  number_value(&v, s, len);
  return put(dc, v);
}

/* A string the session keeps must be UTF-8 as GLib has it (yajl lets
 * overlong forms through; json-glib, reading our export, does not). */
static bool utf8(decoder *dc, const unsigned char *s, size_t len)
{
  if (g_utf8_validate_len((const char *)s, len, NULL))
    return true;
  tsp__fail(&dc->error, "event %" G_GUINT64_FORMAT ": a string that is not valid UTF-8", dc->k);
  return false;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
  decoder *dc = ctx;
  if (!dc->slot && !dc->first_slot)
    return put(dc, (jvalue){ .type = J_STRING });
  if (!utf8(dc, s, len))
    return 0;
  jvalue v = { .type = J_STRING, .str = dc->scratch->len };
  g_string_append_len(dc->scratch, (const char *)s, (gssize)len);
  g_string_append_c(dc->scratch, '\0');
  return put(dc, v);
}

static int on_start_map(void *ctx)
{
  decoder *dc = ctx;
  if (dc->depth == 1) { /* an event */
    memset(dc->field, 0, sizeof dc->field);
    dc->has_first = false;
    g_string_truncate(dc->scratch, 0);
  } else if (dc->depth == 2 && dc->slot == &dc->field[F_ARGS]) {
    memset(dc->arg, 0, sizeof dc->arg);
    dc->has_first = false;
    dc->in_args = true;
  }
  if (dc->slot)
    dc->slot->type = J_OBJECT;
  if (dc->first_slot)
    dc->first_slot->type = J_OBJECT;
  dc->slot = dc->first_slot = NULL;
  dc->depth++;
  return 1;
}

static int on_map_key(void *ctx, const unsigned char *key, size_t len)
{
  decoder *dc = ctx;
  dc->slot = dc->depth == 2               ? lookup(dc->field, FIELD_KEYS, N_FIELDS, key, len)
             : dc->depth == 3 && dc->in_args ? lookup(dc->arg, ARG_KEYS, N_ARGS, key, len)
                                          : NULL;
  if (dc->depth == 3 && dc->in_args && !dc->has_first) {
    if (!utf8(dc, key, len))
      return 0;
    dc->has_first = true;
    dc->first_key = dc->scratch->len;
    g_string_append_len(dc->scratch, (const char *)key, (gssize)len);
    g_string_append_c(dc->scratch, '\0');
    dc->first = (jvalue){ .type = J_ABSENT };
    dc->first_slot = &dc->first;
  }
  return 1;
}

static int on_end_map(void *ctx)
{
  decoder *dc = ctx;
  dc->depth--;
  if (dc->depth == 2)
    dc->in_args = false;
  if (dc->depth != 1)
    return 1;
  tsp_decoded d = { 0 };
  bool ok = finish_event(dc, &d);
  if (!ok)
    d.ph = 0; /* the events before it are applied, then the error reported */
  g_array_append_val(dc->events, d);
  dc->k++;
  return ok;
}

static int on_start_array(void *ctx)
{
  decoder *dc = ctx;
  if (dc->depth == 1)
    return not_an_object(dc);
  if (dc->slot)
    dc->slot->type = J_ARRAY;
  if (dc->first_slot)
    dc->first_slot->type = J_ARRAY;
  dc->slot = dc->first_slot = NULL;
  dc->depth++;
  return 1;
}

static int on_end_array(void *ctx)
{
  ((decoder *)ctx)->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = on_null,
  .yajl_boolean = on_boolean,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_start_map,
  .yajl_map_key = on_map_key,
  .yajl_end_map = on_end_map,
  .yajl_start_array = on_start_array,
  .yajl_end_array = on_end_array,
};

bool tsp__decode_events(const char *text, size_t len, uint64_t first, GArray *events,
                        GStringChunk *chunk, GError **error)
{
  decoder dc = { .scratch = g_string_sized_new(256), .k = first, .events = events, .chunk = chunk };
  yajl_handle h = yajl_alloc(&callbacks, NULL, &dc);
  /* The elements are fed as the array they are part of: "[", them, "]". */
  struct { const char *p; size_t n; } parts[] = { { "[", 1 }, { text, len }, { "]", 1 } };
  yajl_status st = yajl_status_ok;
  for (size_t i = 0; i < G_N_ELEMENTS(parts) && st == yajl_status_ok; i++)
    st = yajl_parse(h, (const unsigned char *)parts[i].p, parts[i].n);
  if (st == yajl_status_ok)
    st = yajl_complete_parse(h);
  bool ok = st == yajl_status_ok;
  if (st == yajl_status_error) {
    unsigned char *why = yajl_get_error(h, 0, NULL, 0);
    tsp__fail(error, "traceEvents, near event %" G_GUINT64_FORMAT ": %s", dc.k, (const char *)why);
    yajl_free_error(h, why);
  } else if (!ok) {
    g_propagate_error(error, g_steal_pointer(&dc.error));
  }
  g_clear_error(&dc.error);
  yajl_free(h);
  g_string_free(dc.scratch, TRUE);
  return ok;
}

/* ---- the tables, read with json-glib ------------------------------------------------- */

bool tsp__json_int(JsonObject *o, const char *key, int64_t *out, bool required, GError **error,
                   uint64_t k)
{
  JsonNode *n = json_object_get_member(o, key);
  jvalue v = { .type = J_ABSENT };
  if (n && JSON_NODE_HOLDS_NULL(n))
    v.type = J_NULL;
  else if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64)
    v = (jvalue){ .type = J_INT, .i = json_node_get_int(n) };
  else if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_DOUBLE)
    v = (jvalue){ .type = J_DOUBLE, .d = json_node_get_double(n) };
  else if (n)
    v.type = J_OBJECT; /* anything else is not a number */
  return check_int(&v, key, out, required, error, k);
}

const char *tsp__json_str(JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member(o, key) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
           ? json_node_get_string(n)
           : NULL;
}
