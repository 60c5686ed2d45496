/* dispatch.c — eager op execution: validate through the op's definition,
 * promote, infer, allocate, notify listeners, run the CPU kernel. */
#include "trace/trace-private.h"

static bool check_inputs(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in)
{
  if (def->n_inputs >= 0 ? n_in != def->n_inputs : (n_in < 1 || n_in > TS_MAX_INPUTS)) {
    ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "takes %s%d inputs, got %d",
                def->n_inputs >= 0 ? "" : "1 to ",
                def->n_inputs >= 0 ? def->n_inputs : TS_MAX_INPUTS, n_in);
    return false;
  }
  for (int i = 0; i < n_in; i++) {
    if (!in[i]) {
      /* A NULL input is an earlier failure: keep that error. */
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "input %d is NULL", i);
      return false;
    }
    if (!in[i]->data && !in[i]->node) {
      ts__op_fail(loc, def, TS_ERR_INTERNAL, "input %d has no data", i);
      return false;
    }
    if (!(def->flags & TS_OPF_ANY_DTYPE) &&
        (in[i]->dtype == TS_STRING || in[i]->dtype == TS_VARIANT)) {
      char buf[TS_INFO_STR], ok[TS_DTYPE_NAMES_STR];
      ts__op_fail(loc, def, TS_ERR_DTYPE, "takes numeric tensors (%s), got %s for input %d (%s)",
                  ts__dtype_names(ok, TS_NUMERIC_DTYPES), ts_dtype_name(in[i]->dtype), i,
                  ts__info_str(buf, in[i]->dtype, in[i]->shape));
      return false;
    }
  }
  return true;
}

/* Dtype attributes name numeric dtypes unless the op takes any. */
static bool check_attrs(ts_loc loc, const ts_op_def *def, const ts_attr *attrs)
{
  for (int i = 0; i < def->n_attrs; i++) {
    if (attrs[i].type != def->attrs[i].type) {
      ts__op_fail(loc, def, TS_ERR_INTERNAL, "attribute %s has the wrong type", def->attrs[i].name);
      return false;
    }
    if (attrs[i].type != TS_ATTR_DTYPE)
      continue;
    ts_dtype dt = attrs[i].dtype;
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
      ts__op_fail(loc, def, TS_ERR_DTYPE, "invalid dtype %d for attribute %s", (int)dt,
                  def->attrs[i].name);
      return false;
    }
    if (!(def->flags & TS_OPF_ANY_DTYPE) && (dt == TS_STRING || dt == TS_VARIANT)) {
      char ok[TS_DTYPE_NAMES_STR];
      ts__op_fail(loc, def, TS_ERR_DTYPE, "attribute %s takes a numeric dtype (%s), got %s",
                  def->attrs[i].name, ts__dtype_names(ok, TS_NUMERIC_DTYPES), ts_dtype_name(dt));
      return false;
    }
  }
  return true;
}

/* Casts the leading inputs the def names to their common dtype; cast[]
 * receives the (possibly new) inputs. */
static bool promote(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in,
                    ts_tensor **cast)
{
  int n = def->n_promote < 0 || def->n_promote > n_in ? n_in : def->n_promote;
  ts_dtype dt = in[0]->dtype;
  for (int i = 1; i < n; i++)
    dt = ts_dtype_promote(dt, in[i]->dtype);
  for (int i = 0; i < n_in; i++) {
    cast[i] = in[i];
    if (i < n && in[i]->dtype != dt && !(cast[i] = ts_cast_at(loc, in[i], dt)))
      return false;
  }
  return true;
}

static void emit_op(ts_event_kind kind, const ts_op_def *def, ts_loc loc, ts_tensor *const *in,
                    int n_in, ts_tensor *const *out, int n_out, uint64_t start_ns,
                    const ts_node *node)
{
  ts_event ev = { .kind = kind };
  ev.op = (ts_op_event){
    .op = def->op,
    .op_name = def->name,
    .loc = loc,
    .device = "CPU",
    .n_inputs = n_in,
    .inputs = in,
    .n_outputs = kind == TS_EVENT_OP_END ? n_out : 0,
    .outputs = kind == TS_EVENT_OP_END ? out : NULL,
    .start_ns = start_ns,
    .end_ns = kind == TS_EVENT_OP_END ? ts_now_ns() : 0,
    .node = node,
  };
  ts__listeners_emit(&ev);
}

static bool infer(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in,
                  const ts_attr *attrs, ts_info *out_info, int *n_out, const ts_node *node)
{
  ts_info in_info[TS_MAX_INPUTS];
  for (int i = 0; i < n_in; i++)
    in_info[i] = (ts_info){ in[i]->dtype, in[i]->shape };
  ts_infer_ctx ic = {
    .def = def, .loc = loc, .node = node, .n_in = n_in, .in = in_info, .attrs = attrs,
    .n_out = def->n_outputs, .out = out_info,
  };
  if (!def->infer(&ic))
    return false;
  g_assert(ic.n_out >= 0 && ic.n_out <= TS_MAX_OUTPUTS);
  *n_out = ic.n_out;
  return true;
}

static _Thread_local int quiet;
static _Thread_local const int *cancel_flag;

void ts_watch_cancel_flag(const int *flag)
{
  cancel_flag = flag;
}

static bool cancelled(ts_loc loc, const ts_op_def *def)
{
  if (G_LIKELY(!cancel_flag) || !__atomic_load_n(cancel_flag, __ATOMIC_RELAXED))
    return false;
  ts__op_fail(loc, def, TS_ERR_CANCELLED, "cancelled");
  return true;
}

void ts__listeners_mute(bool mute)
{
  quiet += mute ? 1 : -1;
}

int ts__execute(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in,
                const ts_attr *attrs, ts_tensor **out, const ts_node *node)
{
  ts_info out_info[TS_MAX_OUTPUTS];
  int n_out;
  if (cancelled(loc, def) || !infer(loc, def, in, n_in, attrs, out_info, &n_out, node))
    return -1;

  if (!(def->flags & TS_OPF_ALIAS)) {
    for (int i = 0; i < n_out; i++)
      if (!(out[i] = ts__tensor_alloc(loc, out_info[i].dtype, out_info[i].shape)))
        return -1;
  }

  int mask = quiet ? 0 : __atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED);
  uint64_t start_ns = 0;
  if (G_UNLIKELY(mask)) {
    start_ns = ts_now_ns();
    if (mask & TS_EVENT_MASK(TS_EVENT_OP_BEGIN))
      emit_op(TS_EVENT_OP_BEGIN, def, loc, in, n_in, out, n_out, start_ns, node);
  }

  ts_kernel_ctx kc = {
    .def = def, .loc = loc, .node = node, .n_in = n_in, .in = in, .attrs = attrs,
    .n_out = n_out, .out = out,
  };
  bool ok = def->cpu(&kc);

  if (G_UNLIKELY(mask & TS_EVENT_MASK(TS_EVENT_OP_END)))
    emit_op(TS_EVENT_OP_END, def, loc, in, n_in, out, ok ? n_out : 0, start_ns, node);
  return ok ? n_out : -1;
}

int ts__dispatch(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in, const ts_attr *attrs,
                 ts_tensor **out)
{
  const ts_op_def *def = ts__op_def(op);
  if (!def) {
    ts_error_set(TS_ERR_INTERNAL, loc, NULL, "unknown op %d", (int)op);
    return -1;
  }
  if (!check_inputs(loc, def, in, n_in) || !check_attrs(loc, def, attrs))
    return -1;
  if (!def->infer || !def->cpu) {
    ts__op_fail(loc, def, TS_ERR_UNIMPLEMENTED, "not implemented on CPU");
    return -1;
  }

  ts_tensor *promoted[TS_MAX_INPUTS];
  if (def->flags & TS_OPF_PROMOTE) {
    if (!promote(loc, def, in, n_in, promoted))
      return -1;
    in = promoted;
  }

  ts_frame *frame = ts__trace_frame();
  if (G_UNLIKELY(frame != NULL)) {
    ts_info out_info[TS_MAX_OUTPUTS];
    int n_out;
    if (!infer(loc, def, in, n_in, attrs, out_info, &n_out, NULL))
      return -1;
    return ts__trace_record(frame, loc, def, in, n_in, attrs, out_info, n_out, out);
  }
  return ts__execute(loc, def, in, n_in, attrs, out, NULL);
}

ts_tensor *ts__dispatch1(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in,
                         const ts_attr *attrs)
{
  ts_tensor *out[TS_MAX_OUTPUTS];
  return ts__dispatch(loc, op, in, n_in, attrs, out) == 1 ? out[0] : NULL;
}
