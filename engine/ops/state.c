/* ops/state.c — side effects: Print (tf.print) and the variable ops
 * ReadVariableOp, AssignVariableOp, AssignAddVariableOp and
 * AssignSubVariableOp.  All are stateful: while tracing they get control
 * dependencies in program order and the executor never prunes them.
 *
 * Reads never copy: a read is a view of the variable's storage, and an
 * assign while a read still holds that storage moves the variable to a
 * new one (copy on write), so the read keeps the value it read.
 *
 * Print formats tensors with ts__append_tf_print (print_tf.c), as tf.print
 * does, or with its "python" attribute as Python's print() shows eager
 * tensors (ts_tensor_str); tf.print of a lone scalar string prints it raw. */
#include "../engine-private.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

/* ---- Print ------------------------------------------------------------------ */

/* Attributes: the line with a placeholder where each tensor goes (tf.print's
 * StringFormat template), the placeholder: "{}", or "{{}}" ... when a
 * printed string contains "{}" itself, and whether tensors print as
 * Python's print() shows them (str(), "tf.Tensor(...)") or as tf.print. */
static const ts_attr_def print_attrs[] = {
  { "template", TS_ATTR_STRING },
  { "placeholder", TS_ATTR_STRING },
  { "python", TS_ATTR_BOOL },
};

static int count_occurrences(const char *s, const char *needle)
{
  int n = 0;
  size_t len = strlen(needle);
  for (const char *p = strstr(s, needle); p; p = strstr(p + len, needle))
    n++;
  return n;
}

static bool print_infer(ts_infer_ctx *c)
{
  const char *tmpl = c->attrs[0].s, *ph = c->attrs[1].s;
  if (!tmpl || !ph || !*ph)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "missing template or placeholder");
  int n = count_occurrences(tmpl, ph);
  if (n != c->n_in)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "the template has %d placeholders for %d tensors", n, c->n_in);
  c->n_out = 0;
  return true;
}

void ts__emit_print(const char *text, const struct ts_node *node)
{
  if (!(__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS_EVENT_MASK(TS_EVENT_PRINT)))
    return;
  ts_event ev = { .kind = TS_EVENT_PRINT };
  ev.print = (ts_print_event){ .text = text, .node = node };
  ts__listeners_emit(&ev);
}

static bool print_cpu(ts_kernel_ctx *k)
{
  const char *tmpl = k->attrs[0].s, *ph = k->attrs[1].s;
  size_t ph_len = strlen(ph);
  GString *s = g_string_new(NULL);
  bool python = k->attrs[2].b;
  if (!python && k->n_in == 1 && strcmp(tmpl, ph) == 0 && k->in[0]->dtype == TS_STRING &&
      k->in[0]->shape.rank == 0) {
    /* tf.print(scalar_string_tensor) prints the string itself */
    const char *str = ((char *const *)k->in[0]->data)[0];
    g_string_append(s, str ? str : "");
  } else {
    const char *p = tmpl;
    for (int i = 0; i < k->n_in; i++) {
      const char *at = strstr(p, ph);
      g_string_append_len(s, p, at - p);
      if (python) {
        char *str = ts_tensor_str(k->in[i]);
        g_string_append(s, str);
        free(str);
      } else {
        ts__append_tf_print(s, k->in[i]);
      }
      p = at + ph_len;
    }
    g_string_append(s, p);
  }
  flockfile(stdout);
  fputs(s->str, stdout);
  fputc('\n', stdout);
  fflush(stdout);
  funlockfile(stdout);
  ts__emit_print(s->str, k->site ? k->site->node : NULL);
  g_string_free(s, TRUE);
  return true;
}

const ts_op_def ts__op_print = {
  .op = TS_OP_PRINT, .name = "PrintV2", .api_name = "print",
  .n_inputs = -1, .min_inputs = 0, .n_outputs = 0, .flags = TS_OPF_STATEFUL | TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  ATTRS(print_attrs), .infer = print_infer, .kernel[TS_DEVICE_CPU] = print_cpu,
};

ts_value ts__print_string(const char *s)
{
  return TS_STRING_VALUE(s);
}

ts_value ts__print_tensor(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

/* A placeholder that no printed string contains: "{}", "{{}}", ... */
static char *print_placeholder(const ts_value *items, int n)
{
  GString *ph = g_string_new("{}");
  for (int i = 0; i < n; i++) {
    if (items[i].kind == TS_VALUE_STRING && strstr(items[i].s, ph->str)) {
      g_string_prepend_c(ph, '{');
      g_string_append_c(ph, '}');
      i = -1; /* check every string again */
    }
  }
  return g_string_free(ph, FALSE);
}

static bool print_items(ts_loc loc, const ts_value *items, int n_items, bool python)
{
  const ts_op_def *def = &ts__op_print;
  if (n_items < 0 || (n_items > 0 && !items)) {
    ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "bad item list (%d items)", n_items);
    return false;
  }
  ts_tensor *in[TS_MAX_INPUTS];
  int n_in = 0;
  for (int i = 0; i < n_items; i++) {
    if (items[i].kind == TS_VALUE_TENSOR) {
      if (!items[i].tensor) {
        ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "item %d is NULL", i);
        return false;
      }
      if (n_in == TS_MAX_INPUTS) {
        ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "more than %d tensors", TS_MAX_INPUTS);
        return false;
      }
      in[n_in++] = items[i].tensor;
    } else if (items[i].kind == TS_VALUE_STRING) {
      if (!items[i].s) {
        ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "item %d is a NULL string", i);
        return false;
      }
    } else {
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                  "item %d is neither a string nor a tensor (value kind %d)", i,
                  (int)items[i].kind);
      return false;
    }
  }

  char *ph = print_placeholder(items, n_items);
  GString *tmpl = g_string_new(NULL);
  for (int i = 0; i < n_items; i++) {
    if (i > 0)
      g_string_append_c(tmpl, ' ');
    g_string_append(tmpl, items[i].kind == TS_VALUE_TENSOR ? ph : items[i].s);
  }
  ts_attr attrs[] = {
    { .type = TS_ATTR_STRING, .s = tmpl->str },
    { .type = TS_ATTR_STRING, .s = ph },
    TS_ATTR_B(python),
  };

  bool ok = ts__dispatch(loc, TS_OP_PRINT, in, n_in, attrs, NULL) >= 0;
  g_string_free(tmpl, TRUE);
  g_free(ph);
  return ok;
}

bool ts_print_at(ts_loc loc, const ts_value *items, int n_items)
{
  return print_items(loc, items, n_items, false);
}

bool ts_print_python_at(ts_loc loc, const ts_value *items, int n_items)
{
  return print_items(loc, items, n_items, true);
}

/* ---- variables ------------------------------------------------------------- */

static bool is_variable(const ts_tensor *t)
{
  return t && t->is_variable;
}

static bool require_variable(ts_loc loc, const ts_op_def *def, const ts_tensor *var)
{
  if (!var || is_variable(var))
    return true; /* NULL: dispatch passes the earlier error on */
  ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "input 0 is not a variable");
  return false;
}

static bool read_infer(ts_infer_ctx *c)
{
  c->out[0] = c->in[0];
  return true;
}

/* Copies var's value from src's data to dst's, both on var's backend. */
static bool copy_value(ts_kernel_ctx *k, const ts_tensor *var, const ts_tensor *dst,
                       const ts_tensor *src)
{
  size_t bytes = (size_t)var->size * ts_dtype_size(var->dtype);
  return ts__data_copy(dst, src, bytes) ||
         ts__kernel_fail(k, TS_ERR_INTERNAL, "copying the variable's value on %s failed",
                         ts_backend_name(var->backend));
}

/* A variable keeps its value in a storage tensor of its own (var->base),
 * which reads share: a read is a view, never a copy.  A variable made with
 * its data inline (ts_variable_new, a graph read back) moves it into one
 * on first use.  false + error (out of memory). */
static bool variable_storage(ts_kernel_ctx *k, ts_tensor *var)
{
  if (var->base)
    return true;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *store = ts__tensor_alloc_on(k->loc, var->backend, var->dtype, var->shape);
  if (store && !copy_value(k, var, store, var))
    store = NULL;
  if (store) {
    if (var->owns_buffer)
      ts_buffer_free(var->buffer);
    var->owns_buffer = false;
    var->base = ts_tensor_ref(store);
    var->data = store->data;
    var->buffer = store->buffer;
  }
  ts_scope_end(scope);
  return store != NULL;
}

/* Before var's value changes: a storage that reads still hold is theirs
 * (they keep the value they read); the variable moves to a fresh copy,
 * copying the old value only when copy_old (add/sub read it).  Gives var
 * a storage of its own first (ts_variable_new's inline data). */
bool ts__variable_writable(ts_kernel_ctx *k, ts_tensor *var, bool copy_old)
{
  if (!variable_storage(k, var))
    return false;
  ts_tensor *old = var->base;
  if (__atomic_load_n(&old->refcount, __ATOMIC_ACQUIRE) == 1)
    return true; /* only the variable holds it: write in place */
  ts_scope *scope = ts_scope_begin();
  ts_tensor *fresh = ts__tensor_alloc_on(k->loc, var->backend, var->dtype, var->shape);
  if (fresh && copy_old && !copy_value(k, var, fresh, old))
    fresh = NULL;
  if (fresh) {
    var->base = ts_tensor_ref(fresh);
    var->data = fresh->data;
    var->buffer = fresh->buffer;
    ts_tensor_unref(old);
  }
  ts_scope_end(scope);
  return fresh != NULL;
}

ts_tensor *ts__variable_read_storage(ts_tensor *var)
{
  ts_tensor *store = is_variable(var) ? var->base : NULL;
  if (!store || store->dtype != var->dtype || store->backend != var->backend ||
      store->size != var->size || store->shape.rank != var->shape.rank)
    return NULL;
  for (int d = 0; d < var->shape.rank; d++)
    if (store->shape.dim[d] != var->shape.dim[d])
      return NULL;
  return store;
}

/* Read and the assigns run where the variable lives, on the caller's
 * thread: the host, or a device through its copies and kernels
 * (write_value), the same code on each, so that a variable on a GPU never
 * leaves it. */
static bool read_kernel(ts_kernel_ctx *k)
{
  ts_tensor *var = k->in[0];
  if (!is_variable(var))
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "input 0 is not a variable");
  if (!variable_storage(k, var))
    return false;
  k->out[0] = ts__tensor_view(var, var->shape);
  return k->out[0] || ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory");
}

const ts_op_def ts__op_read_variable = {
  .op = TS_OP_READ_VARIABLE, .name = "ReadVariableOp", .api_name = "read_variable",
  .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_STATEFUL | TS_OPF_VARIABLE | TS_OPF_AUXILIARY | TS_OPF_ALIAS,
  .infer = read_infer, .kernel[TS_DEVICE_CPU] = read_kernel,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(read_kernel), .grad = ts__grad_pass,
};

/* Dims of -1 (a traced value) fit any size. */
static bool shapes_fit(ts_shape var, ts_shape value)
{
  if (var.rank != value.rank)
    return false;
  for (int i = 0; i < var.rank; i++)
    if (value.dim[i] >= 0 && value.dim[i] != var.dim[i])
      return false;
  return true;
}

static bool assign_infer(ts_infer_ctx *c)
{
  ts_info var = c->in[0], value = c->in[1];
  if (var.dtype != value.dtype || !shapes_fit(var.shape, value.shape)) {
    char vb[TS_INFO_STR], xb[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "the value %s does not match the variable %s (dtype and shape must "
                          "be equal)",
                          ts__info_str(xb, value.dtype, value.shape),
                          ts__info_str(vb, var.dtype, var.shape));
  }
  if (var.dtype == TS_BOOL && c->def->op != TS_OP_ASSIGN_VARIABLE)
    return ts__infer_fail(c, TS_ERR_DTYPE, "bool variables cannot be added to or subtracted from");
  c->out[0] = var;
  return true;
}

/* dst op= src elementwise; integers wrap (unsigned arithmetic). */
#define COMBINE_LOOP(T, U)                                                   \
  do {                                                                       \
    T *d = dst;                                                              \
    const T *x = src;                                                        \
    for (int64_t i = 0; i < n; i++)                                          \
      d[i] = (T)(sub ? (U)((U)d[i] - (U)x[i]) : (U)((U)d[i] + (U)x[i]));     \
  } while (0)

static void combine(ts_dtype dt, void *dst, const void *src, int64_t n, bool sub)
{
  switch (dt) {
  case TS_F32: COMBINE_LOOP(float, float); break;
  case TS_F64: COMBINE_LOOP(double, double); break;
  case TS_I32: COMBINE_LOOP(int32_t, uint32_t); break;
  case TS_I64: COMBINE_LOOP(int64_t, uint64_t); break;
  case TS_U8: COMBINE_LOOP(uint8_t, uint32_t); break;
  case TS_I8: COMBINE_LOOP(int8_t, uint32_t); break;
  case TS_I16: COMBINE_LOOP(int16_t, uint32_t); break;
  case TS_U16: COMBINE_LOOP(uint16_t, uint32_t); break;
  case TS_U32: COMBINE_LOOP(uint32_t, uint32_t); break;
  case TS_U64: COMBINE_LOOP(uint64_t, uint64_t); break;
  case TS_F16:
  case TS_BF16: /* in float32, rounded back */
    for (int64_t i = 0; i < n; i++) {
      double a = ts__load_f64(dt, dst, i), b = ts__load_f64(dt, src, i);
      ts__store_f64(dt, dst, i, (float)(sub ? a - b : a + b));
    }
    break;
  default: g_assert_not_reached(); /* bool and the rest fail in inference */
  }
}

/* var = src, var += src or var -= src (src: a header of the value's data
 * in var's shape): on the host directly; on a device (a variable lives
 * where it was made, tensor.c) through its copy, or its Add or Sub kernel
 * in place on the storage, queued on its stream. */
static bool write_value(ts_kernel_ctx *k, ts_tensor *var, ts_tensor *src, bool set)
{
  const ts_backend *b = var->backend;
  bool sub = k->def->op == TS_OP_ASSIGN_SUB_VARIABLE;
  if (ts__host_visible(b)) {
    if (set)
      memmove(var->data, src->data, (size_t)var->size * ts_dtype_size(var->dtype));
    else
      combine(var->dtype, var->data, src->data, var->size, sub);
    return true;
  }
  if (set)
    return copy_value(k, var, var, src);
  ts_tensor *in[2] = { var->base, src }, *out[1] = { var->base };
  ts_kernel_ctx op = { .def = ts__op_def(sub ? TS_OP_SUB : TS_OP_ADD), .loc = k->loc,
                       .backend = b, .seq = k->seq, .n_in = 2, .in = in, .n_out = 1,
                       .out = out, .correlation = k->correlation };
  return b->iface.run_op ? b->iface.run_op(b, &op) : ts_kernel_run(&op, b->iface.kind);
}

static bool assign_kernel(ts_kernel_ctx *k)
{
  ts_tensor *var = k->in[0];
  const ts_tensor *value = k->in[1];
  if (!is_variable(var))
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "input 0 is not a variable");
  bool set = k->def->op == TS_OP_ASSIGN_VARIABLE;
  /* value may be the variable or a read of it: its data stays where it is
   * (a storage moved away from is held by whoever made the move needed) */
  if (!variable_storage(k, var))
    return false;
  ts_tensor src = { .refcount = 1, .dtype = value->dtype, .shape = var->shape,
                    .size = var->size, .data = value->data, .backend = value->backend,
                    .buffer = value->buffer };
  if (!ts__variable_writable(k, var, !set))
    return false;
  if (!write_value(k, var, &src, set))
    return false;
  /* the new value, shared like a read's */
  k->out[0] = ts__tensor_view(var, var->shape);
  return k->out[0] || ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory");
}

#define ASSIGN_DEF(ID, id, display)                                                        \
  const ts_op_def ts__op_##id = {                                                          \
    .op = TS_OP_##ID, .name = display, .api_name = #id, .n_inputs = 2, .n_outputs = 1,     \
    .flags = TS_OPF_STATEFUL | TS_OPF_VARIABLE | TS_OPF_ALIAS | TS_OPF_NOT_DIFFERENTIABLE, .infer = assign_infer,            \
    .kernel[TS_DEVICE_CPU] = assign_kernel,                                                \
    .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(assign_kernel),                               \
  };
ASSIGN_DEF(ASSIGN_VARIABLE, assign_variable, "AssignVariableOp")
ASSIGN_DEF(ASSIGN_ADD_VARIABLE, assign_add_variable, "AssignAddVariableOp")
ASSIGN_DEF(ASSIGN_SUB_VARIABLE, assign_sub_variable, "AssignSubVariableOp")

/* Checks up front so a non-variable fails while tracing too (it would be
 * lifted to a Const and only fail when the graph runs). */
static ts_tensor *variable_op(ts_loc loc, ts_op op, ts_tensor *var, ts_tensor *value)
{
  if (!require_variable(loc, ts__op_def(op), var))
    return NULL;
  ts_tensor *in[2] = { var, value };
  return ts__dispatch1(loc, op, in, op == TS_OP_READ_VARIABLE ? 1 : 2, NULL);
}

ts_tensor *ts_read_at(ts_loc loc, ts_tensor *var)
{
  return variable_op(loc, TS_OP_READ_VARIABLE, var, NULL);
}

ts_tensor *ts_assign_at(ts_loc loc, ts_tensor *var, ts_tensor *value)
{
  return variable_op(loc, TS_OP_ASSIGN_VARIABLE, var, value);
}

ts_tensor *ts_assign_add_at(ts_loc loc, ts_tensor *var, ts_tensor *value)
{
  return variable_op(loc, TS_OP_ASSIGN_ADD_VARIABLE, var, value);
}

ts_tensor *ts_assign_sub_at(ts_loc loc, ts_tensor *var, ts_tensor *value)
{
  return variable_op(loc, TS_OP_ASSIGN_SUB_VARIABLE, var, value);
}
