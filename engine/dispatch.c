/* dispatch.c — every op goes through here: validate through the op's
 * definition, promote, then hand it to the calling thread's innermost op
 * handler (eager execution at the bottom: execute.c runs it). */
#include "engine-private.h"

static bool check_inputs(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in)
{
  if (def->n_inputs >= 0 ? n_in != def->n_inputs
                         : (n_in < def->min_inputs || n_in > TS_MAX_INPUTS)) {
    if (def->n_inputs >= 0)
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "takes %d inputs, got %d", def->n_inputs,
                  n_in);
    else
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "takes %d to %d inputs, got %d",
                  def->min_inputs, TS_MAX_INPUTS, n_in);
    return false;
  }
  for (int i = 0; i < n_in; i++) {
    if (!in[i]) {
      /* A NULL input is an earlier failure: keep that error. */
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "input %d is NULL", i);
      return false;
    }
    if (G_UNLIKELY(ts__is_none(in[i]))) {
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                  "input %d is None (ts_none): the result of a function that returns nothing", i);
      return false;
    }
    if (G_UNLIKELY(in[i]->items)) {
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                  "input %d is a tuple of %d tensors (ts_tuple): a tuple is only a function's "
                  "result; read its tensors with ts_function_call_n and pass one",
                  i, in[i]->n_items);
      return false;
    }
    if (!in[i]->data && !in[i]->node) {
      ts__op_fail(loc, def, TS_ERR_INTERNAL, "input %d has no data", i);
      return false;
    }
    if (G_UNLIKELY(in[i]->carried_loop.file)) {
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                  "input %d was made by an iteration of the %s loop at %s:%d and is used by "
                  "the next one; a value carried around a loop must be one of the loop's "
                  "listed variables (&x, ...), or each iteration of the traced loop would see "
                  "the value from before the loop",
                  i, in[i]->carried_kind, in[i]->carried_loop.file, in[i]->carried_loop.line);
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

/* Do the inputs promotion looks at share one dtype already (the usual case)? */
static inline bool same_dtypes(const ts_op_def *def, ts_tensor *const *in, int n_in)
{
  int n = def->n_promote < 0 || def->n_promote > n_in ? n_in : def->n_promote;
  for (int i = 1; i < n; i++)
    if (in[i]->dtype != in[0]->dtype)
      return false;
  return true;
}

/* Casts the leading inputs the def names to their common dtype (Cast ops,
 * dispatched like any other); cast[] receives the (possibly new) inputs. */
static bool promote(ts_loc loc, const ts_op_def *def, ts_tensor *const *in, int n_in,
                    ts_tensor **cast)
{
  int n = def->n_promote < 0 || def->n_promote > n_in ? n_in : def->n_promote;
  ts_dtype dt = in[0]->dtype;
  for (int i = 1; i < n; i++)
    dt = ts_dtype_promote(dt, in[i]->dtype);
  ts_attr to = TS_ATTR_DT(dt);
  for (int i = 0; i < n_in; i++) {
    cast[i] = in[i];
    if (i < n && in[i]->dtype != dt && !(cast[i] = ts__dispatch1(loc, TS_OP_CAST, &in[i], 1, &to)))
      return false;
  }
  return true;
}

/* ---- op handlers ------------------------------------------------------------------- */

void ts__handler_push(ts_op_handler *h)
{
  ts_context *c = ts__context();
  h->below = c->handlers;
  c->handlers = h;
}

void ts__handler_pop(ts_op_handler *h)
{
  ts_context *c = ts__context();
  g_return_if_fail(c->handlers == h);
  c->handlers = h->below;
  h->below = NULL;
}

ts_op_handler *ts__handler_top(void)
{
  return ts__context()->handlers;
}

int ts__handler_next(ts_op_handler *self, const ts_op_call *call, ts_tensor **out)
{
  ts_op_handler *below = self->below;
  return below ? below->run(below, call, out) : ts__run_eager(call, out);
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
  if (!def->infer) {
    ts__op_fail(loc, def, TS_ERR_UNIMPLEMENTED, "runs only as a node of a traced graph");
    return -1;
  }

  ts_tensor *promoted[TS_MAX_INPUTS];
  if ((def->flags & TS_OPF_PROMOTE) && !same_dtypes(def, in, n_in)) {
    if (!promote(loc, def, in, n_in, promoted))
      return -1;
    in = promoted;
  }

  ts_op_call call = { loc, def, in, n_in, attrs };
  ts_op_handler *h = ts__context()->handlers;
  return G_UNLIKELY(h != NULL) ? h->run(h, &call, out) : ts__run_eager(&call, out);
}

ts_tensor *ts__dispatch1(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in,
                         const ts_attr *attrs)
{
  ts_tensor *out[TS_MAX_OUTPUTS];
  return ts__dispatch(loc, op, in, n_in, attrs, out) == 1 ? out[0] : NULL;
}
