/* ops/assert.c — Assert (tf.debugging.Assert) and the checks built on it
 * (tf.debugging.assert_equal, assert_less, assert_greater).
 *
 * Assert fails with InvalidArgument when its condition is false, its
 * message the data summarized as TensorFlow's AssertOp gives it:
 * "assertion failed: [x must be positive] [-1 2 3...]".  It is stateful,
 * as in TensorFlow: while tracing it is chained in program order with the
 * other side effects (tf.function's automatic control dependencies) and
 * the executor never prunes it, though nothing reads it (it has no
 * outputs); in a graph it fails the call when it runs, naming its node. */
#include "../engine-private.h"

#include <inttypes.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

enum { DEFAULT_SUMMARIZE = 3, MAX_DATA = 8 };

static const ts_attr_def assert_attrs[] = {
  { "summarize", TS_ATTR_INT }, /* elements of each data tensor in the message; -1: all */
};

/* The condition is a bool scalar, or of shape [1] (TensorFlow's legacy scalar). */
static bool assert_infer(ts_infer_ctx *c)
{
  ts_info cond = c->in[0];
  bool scalar = cond.shape.rank == 0 ||
                (cond.shape.rank == 1 && (cond.shape.dim[0] == 1 || cond.shape.dim[0] < 0));
  if (cond.dtype != TS_BOOL || !scalar) {
    char buf[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "the condition must be a bool scalar, got %s",
                          ts__info_str(buf, cond.dtype, cond.shape));
  }
  if (c->attrs[0].i < -1)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "summarize must be -1 (all) or more, got %" PRId64,
                          c->attrs[0].i);
  c->n_out = 0;
  return true;
}

static bool assert_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *cond = k->in[0];
  if (cond->size != 1) { /* a dim unknown while tracing */
    char buf[TS_INFO_STR];
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "the condition must be a bool scalar, got %s",
                           ts__info_str(buf, cond->dtype, cond->shape));
  }
  if (ts__load_i64(cond->dtype, cond->data, 0))
    return true;
  GString *msg = g_string_new("assertion failed: ");
  for (int i = 1; i < k->n_in; i++) {
    g_string_append_c(msg, '[');
    ts__append_tf_summary(msg, k->in[i], k->attrs[0].i);
    g_string_append(msg, i + 1 < k->n_in ? "] " : "]");
  }
  if (k->site && k->site->node_name) /* a graph's: which node failed the call */
    g_string_append_printf(msg, " (node %s)", k->site->node_name);
  ts__op_fail(k->loc, k->def, TS_ERR_INVALID_ARGUMENT, "%s", msg->str);
  g_string_free(msg, TRUE);
  return false;
}

const ts_op_def ts__op_assert = {
  .op = TS_OP_ASSERT, .name = "Assert", .api_name = "assert",
  .n_inputs = -1, .min_inputs = 1, .n_outputs = 0,
  .flags = TS_OPF_STATEFUL | TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  ATTRS(assert_attrs), .infer = assert_infer, .kernel[TS_DEVICE_CPU] = assert_cpu,
};

bool ts_assert_at(ts_loc loc, ts_tensor *condition, const ts_value *data, int n_data,
                  int summarize)
{
  const ts_op_def *def = &ts__op_assert;
  if (!condition) {
    if (!ts_failed())
      ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "the condition is NULL");
    return false;
  }
  if (n_data < 0 || n_data > MAX_DATA || (n_data > 0 && !data)) {
    ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "bad data list (%d items, at most %d)", n_data,
                MAX_DATA);
    return false;
  }
  ts_tensor *in[1 + MAX_DATA] = { condition };
  for (int i = 0; i < n_data; i++) {
    if (data[i].kind == TS_VALUE_STRING && data[i].s)
      in[1 + i] = ts_scalar_string(data[i].s);
    else if (data[i].kind == TS_VALUE_TENSOR && data[i].tensor)
      in[1 + i] = data[i].tensor;
    else {
      if (!ts_failed())
        ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                    "data item %d is neither a string nor a tensor", i);
      return false;
    }
    if (!in[1 + i])
      return false;
  }
  ts_attr attrs[] = { TS_ATTR_I(summarize) };
  return ts__dispatch(loc, TS_OP_ASSERT, in, 1 + n_data, attrs, NULL) >= 0;
}

/* x <op> y element-wise, or an Assert with TensorFlow's graph-mode data:
 * the message, "Condition x == y did not hold element-wise:", x and y. */
static bool binary_assert(ts_loc loc, ts_tensor *(*compare)(ts_loc, ts_tensor *, ts_tensor *),
                          const char *symbol, ts_tensor *x, ts_tensor *y, const char *message)
{
  ts_tensor *cond = ts_reduce_min_at(loc, compare(loc, x, y), TS_ALL_AXES, false); /* all */
  char *condition = g_strdup_printf("Condition x %s y did not hold element-wise:", symbol);
  ts_value data[] = {
    TS_STRING_VALUE(message ? message : ""), TS_STRING_VALUE(condition), TS_STRING_VALUE("x = "),
    TS_TENSOR_VALUE(x), TS_STRING_VALUE("y = "), TS_TENSOR_VALUE(y),
  };
  int skip = message ? 0 : 1;
  bool ok = ts_assert_at(loc, cond, data + skip, (int)G_N_ELEMENTS(data) - skip, DEFAULT_SUMMARIZE);
  g_free(condition);
  return ok;
}

bool ts_assert_equal_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message)
{
  return binary_assert(loc, ts_equal_at, "==", x, y, message);
}

bool ts_assert_less_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message)
{
  return binary_assert(loc, ts_less_at, "<", x, y, message);
}

bool ts_assert_greater_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message)
{
  return binary_assert(loc, ts_greater_at, ">", x, y, message);
}
