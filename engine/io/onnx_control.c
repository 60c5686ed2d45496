/* onnx_control.c — ONNX's If, Loop and Scan as the engine's control flow
 * (ts_cond_at, ts_while_loop_at): eagerly the branch or the iterations
 * run as plain C; while tracing they become If and While nodes whose
 * subgraphs are the ONNX subgraphs built op by op (onnx_build_subgraph),
 * reading the enclosing graphs' values by name. */
#include "onnx-private.h"

#include <string.h>

static const Onnx__GraphProto *graph_attr(const onnx_node_ctx *c, const char *name)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i]->g;
  return NULL;
}

/* A graph attribute the op needs; NULL + error naming it. */
static const Onnx__GraphProto *need_graph(const onnx_node_ctx *c, const char *name)
{
  const Onnx__GraphProto *g = graph_attr(c, name);
  if (!g)
    onnx_node_fail(c, TS_ERR_FORMAT, "attribute '%s' (a graph) is missing", name);
  return g;
}

/* ---- If -------------------------------------------------------------------------- */

typedef struct branch_env {
  const onnx_node_ctx *c;
  const Onnx__GraphProto *branch[2];
} branch_env;

static void build_branch(ts_tensor **vars, const branch_env *env, int which)
{
  onnx_build_subgraph(env->c, env->branch[which], NULL, 0, vars);
}

static void then_branch(ts_tensor **vars, int n, void *data) { build_branch(vars, data, 0); }
static void else_branch(ts_tensor **vars, int n, void *data) { build_branch(vars, data, 1); }

bool onnx_op_if(onnx_node_ctx *c)
{
  branch_env env = { c, { need_graph(c, "then_branch"), need_graph(c, "else_branch") } };
  if (!env.branch[0] || !env.branch[1])
    return false;
  for (int b = 0; b < 2; b++)
    if ((int)env.branch[b]->n_output != c->n_out) {
      onnx_node_fail(c, TS_ERR_FORMAT, "%s has %zu outputs, the node %d", b ? "else_branch" : "then_branch",
                     env.branch[b]->n_output, c->n_out);
      return false;
    }
  if (!c->in[0].t) {
    onnx_node_fail(c, TS_ERR_FORMAT, "the condition is missing");
    return false;
  }
  return ts_cond_at(c->loc, c->in[0].t, then_branch, else_branch, c->out, c->n_out, &env);
}

/* ---- Loop -------------------------------------------------------------------------- */

/* The loop's variables: the iteration number, the condition, the N
 * carried values, then one TensorArray per scan output. */
enum { V_ITER, V_COND, V_CARRIED };

typedef struct loop_env {
  const onnx_node_ctx *c;
  const Onnx__GraphProto *body;
  ts_tensor *trip_count;  /* NULL: none */
  bool has_cond;
  int n_carried, n_scan;
  ts_tensor *one;
  bool *wrap;             /* per carried value: the body takes an optional and gives its value */
} loop_env;

static bool is_optional(const Onnx__TypeProto *t)
{
  return t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
}

/* A carried value the body takes as an optional and gives as a plain value
 * (a sequence where optional(sequence) is declared: ONNX's reading of a
 * value as the optional holding it).  Such values are carried as
 * optionals, the body's each iteration wrapped, and the loop's output is
 * the last one's value, of the body's output type. */
static bool wraps_carried(const Onnx__GraphProto *body, int i)
{
  const Onnx__ValueInfoProto *in = body->input[2 + i], *out = body->output[1 + i];
  return is_optional(in->type) && out->type && !is_optional(out->type);
}

static ts_tensor *loop_cond(ts_tensor *const *vars, int n, void *data)
{
  const loop_env *env = data;
  if (!env->trip_count)
    return vars[V_COND];
  ts_tensor *more = ts_less_at(env->c->loc, vars[V_ITER], env->trip_count);
  return env->has_cond ? ts_logical_and_at(env->c->loc, more, vars[V_COND]) : more;
}

static void loop_body(ts_tensor **vars, int n, void *data)
{
  const loop_env *env = data;
  ts_loc loc = env->c->loc;
  int n_out = 1 + env->n_carried + env->n_scan;
  ts_tensor **out = g_new0(ts_tensor *, n_out + 1);
  if (onnx_build_subgraph(env->c, env->body, vars, 2 + env->n_carried, out)) {
    ts_tensor *index = ts_cast_at(loc, vars[V_ITER], TS_I32);
    for (int k = 0; k < env->n_scan; k++) {
      int at = V_CARRIED + env->n_carried + k;
      vars[at] = ts_tensor_array_write_at(loc, vars[at], index, out[1 + env->n_carried + k]);
    }
    vars[V_ITER] = ts_add_at(loc, vars[V_ITER], env->one);
    vars[V_COND] = ts_reshape_at(loc, out[0], TS_SCALAR_SHAPE);
    for (int i = 0; i < env->n_carried; i++)
      vars[V_CARRIED + i] = env->wrap[i] ? ts_optional_from_value_at(loc, out[1 + i]) : out[1 + i];
  }
  g_free(out);
}

static bool tensor_type_dtype(const Onnx__TypeProto *t, ts_dtype *out)
{
  return t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type &&
         t->tensor_type->has_elem_type && onnx_dtype(t->tensor_type->elem_type, out);
}

/* ONNX ops whose output 0 has their input 0's type (one type T in their
 * schemas): what an untyped body value's dtype is followed back through. */
static const char *const SAME_TYPE_OPS[] = {
  "Abs", "Add", "Concat", "Div", "Expand", "Flatten", "Gather", "Identity", "Max", "Min", "Mul",
  "Neg", "Relu", "Reshape", "Slice", "Squeeze", "Sub", "Sum", "Tile", "Transpose", "Unsqueeze", NULL,
};

/* The dtype of the value `name` of a Loop's body: its type where the body
 * gives one (output or value_info), the loop's for its inputs (iteration
 * number, condition, carried values), else followed back through the
 * node that makes it when that node's op keeps its input's type. */
static bool body_value_dtype(const onnx_node_ctx *c, const Onnx__GraphProto *body, const char *name, int depth,
                             ts_dtype *out)
{
  for (size_t i = 0; i < body->n_output; i++)
    if (strcmp(body->output[i]->name, name) == 0 && tensor_type_dtype(body->output[i]->type, out))
      return true;
  for (size_t i = 0; i < body->n_value_info; i++)
    if (strcmp(body->value_info[i]->name, name) == 0 && tensor_type_dtype(body->value_info[i]->type, out))
      return true;
  for (size_t i = 0; i < body->n_input; i++)
    if (strcmp(body->input[i]->name, name) == 0) {
      if (tensor_type_dtype(body->input[i]->type, out))
        return true;
      if (i < 2) {
        *out = i == 0 ? TS_I64 : TS_BOOL;
        return true;
      }
      if ((int)i < c->n_in && c->in[i].t) {
        *out = ts_tensor_dtype(c->in[i].t);
        return true;
      }
      return false;
    }
  for (size_t n = 0; n < body->n_node && depth < 64; n++) {
    const Onnx__NodeProto *node = body->node[n];
    if (node->n_output < 1 || strcmp(node->output[0], name) != 0 || node->n_input < 1 || !node->op_type)
      continue;
    for (int k = 0; SAME_TYPE_OPS[k]; k++)
      if (strcmp(node->op_type, SAME_TYPE_OPS[k]) == 0 && onnx_is_default_domain(node->domain))
        return body_value_dtype(c, body, node->input[0], depth + 1, out);
    return false;
  }
  return false;
}

/* The dtype of the body's output i (a scan output's TensorArray needs it
 * before the body is built).  false + error. */
static bool body_output_dtype(const onnx_node_ctx *c, const Onnx__GraphProto *body, size_t i, ts_dtype *out)
{
  if (body_value_dtype(c, body, body->output[i]->name, 0, out))
    return true;
  onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the body's output %zu '%s' (a scan output) has no tensor type "
                 "of a dtype the engine has, nor one its ops keep from a typed value", i, body->output[i]->name);
  return false;
}

bool onnx_op_loop(onnx_node_ctx *c)
{
  loop_env env = { c, need_graph(c, "body"), c->in[0].t, c->n_in > 1 && c->in[1].t, c->n_in - 2, 0, NULL, NULL };
  if (!env.body)
    return false;
  if (!env.trip_count && !env.has_cond) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "a Loop with neither a trip count nor a condition never ends");
    return false;
  }
  if (env.n_carried < 0 || (int)env.body->n_input != 2 + env.n_carried ||
      (int)env.body->n_output < 1 + env.n_carried) {
    onnx_node_fail(c, TS_ERR_FORMAT, "the body has %zu inputs and %zu outputs for %d carried values",
                   env.body->n_input, env.body->n_output, env.n_carried < 0 ? 0 : env.n_carried);
    return false;
  }
  env.n_scan = (int)env.body->n_output - 1 - env.n_carried;
  if (c->n_out > env.n_carried + env.n_scan) {
    onnx_node_fail(c, TS_ERR_FORMAT, "%d outputs for %d carried values and %d scan outputs", c->n_out,
                   env.n_carried, env.n_scan);
    return false;
  }
  int n = V_CARRIED + env.n_carried + env.n_scan;
  ts_tensor **vars = g_new0(ts_tensor *, n + 1);
  env.wrap = g_new0(bool, env.n_carried + 1);
  for (int i = 0; i < env.n_carried; i++)
    env.wrap[i] = wraps_carried(env.body, i);
  int64_t zero = 0, one = 1;
  uint8_t yes = 1;
  vars[V_ITER] = ts_constant(TS_I64, TS_SCALAR_SHAPE, &zero);
  env.one = ts_constant(TS_I64, TS_SCALAR_SHAPE, &one);
  if (env.trip_count)
    env.trip_count = ts_reshape_at(c->loc, env.trip_count, TS_SCALAR_SHAPE);
  vars[V_COND] = env.has_cond ? ts_reshape_at(c->loc, c->in[1].t, TS_SCALAR_SHAPE)
                              : ts_constant(TS_BOOL, TS_SCALAR_SHAPE, &yes);
  for (int i = 0; i < env.n_carried; i++) {
    /* a plain value given for a carried optional: the optional holding it */
    const Onnx__TypeProto *given = c->in[2 + i].type;
    bool wrap = env.wrap[i] && c->in[2 + i].t && given && !is_optional(given);
    vars[V_CARRIED + i] = wrap ? ts_optional_from_value_at(c->loc, c->in[2 + i].t) : c->in[2 + i].t;
  }
  bool ok = !ts_failed();
  int32_t none = 0;
  ts_tensor *empty = ts_constant(TS_I32, TS_SCALAR_SHAPE, &none);
  for (int k = 0; k < env.n_scan && ok; k++) {
    ts_dtype dt;
    ok = body_output_dtype(c, env.body, (size_t)(1 + env.n_carried + k), &dt);
    if (ok)
      vars[V_CARRIED + env.n_carried + k] = ts_tensor_array_at(c->loc, dt, empty);
  }
  ok = ok && ts_while_loop_at(c->loc, loop_cond, loop_body, vars, n, &env);
  for (int i = 0; i < c->n_out && ok; i++) {
    ts_tensor *v = vars[V_CARRIED + i];
    ts_list_elem hint;
    if (i >= env.n_carried)
      c->out[i] = ts_tensor_array_stack_at(c->loc, v);
    else if (env.wrap[i]) /* the optional's value, of the body's output type */
      c->out[i] = ts__element_op(c->loc, TS_OP_OPTIONAL_GET_VALUE, &v, 1,
                                 onnx_value_hint(env.body->output[1 + i]->type, &hint) ? &hint : NULL, 0);
    else
      c->out[i] = v;
  }
  g_free(vars);
  g_free(env.wrap);
  return ok && !ts_failed();
}

/* ---- Scan -------------------------------------------------------------------------- */

/* The loop's variables: the iteration number, the N states, then one
 * TensorArray per scan output.  Scan inputs are read by the iteration
 * number along their axis 0 (moved there, and reversed, beforehand). */
typedef struct scan_env {
  const onnx_node_ctx *c;
  const Onnx__GraphProto *body;
  int n_state, n_in, n_out;
  ts_tensor **inputs; /* n_in, scanned along axis 0 */
  ts_tensor *steps, *one;
} scan_env;

static ts_tensor *scan_cond(ts_tensor *const *vars, int n, void *data)
{
  const scan_env *env = data;
  return ts_less_at(env->c->loc, vars[0], env->steps);
}

static void scan_body(ts_tensor **vars, int n, void *data)
{
  const scan_env *env = data;
  ts_loc loc = env->c->loc;
  ts_tensor **in = g_new0(ts_tensor *, env->n_state + env->n_in + 1);
  ts_tensor **out = g_new0(ts_tensor *, env->n_state + env->n_out + 1);
  for (int i = 0; i < env->n_state; i++)
    in[i] = vars[1 + i];
  for (int k = 0; k < env->n_in; k++)
    in[env->n_state + k] = ts_gather_at(loc, env->inputs[k], vars[0], 0);
  if (onnx_build_subgraph(env->c, env->body, in, env->n_state + env->n_in, out)) {
    ts_tensor *index = ts_cast_at(loc, vars[0], TS_I32);
    for (int i = 0; i < env->n_state; i++)
      vars[1 + i] = out[i];
    for (int k = 0; k < env->n_out; k++)
      vars[1 + env->n_state + k] = ts_tensor_array_write_at(loc, vars[1 + env->n_state + k], index,
                                                             out[env->n_state + k]);
    vars[0] = ts_add_at(loc, vars[0], env->one);
  }
  g_free(in);
  g_free(out);
}

/* x (its dims known) reversed along axis 0. */
static ts_tensor *reverse_front(ts_loc loc, ts_tensor *x)
{
  int64_t n = ts_tensor_dim(x, 0);
  return ts_gather_at(loc, x, ts_range_at(loc, TS_I64, (double)n - 1, -1, -1), 0);
}

/* x with its axis moved to the front (to_front) or its front moved to axis. */
static ts_tensor *move_axis(ts_loc loc, ts_tensor *x, int axis, bool to_front)
{
  int rank = ts_tensor_rank(x);
  if (axis == 0)
    return x;
  ts_ints perm = { .n = rank };
  for (int d = 0; d < rank; d++)
    perm.v[d] = to_front ? (d == 0 ? axis : d <= axis ? d - 1 : d) : (d < axis ? d + 1 : d == axis ? 0 : d);
  return ts_transpose_at(loc, x, perm);
}

/* An int attribute list of n values (default 0): axes (negatives from
 * the end of ranks, when given), or directions (0 or 1).  false + error. */
static bool scan_ints(const onnx_node_ctx *c, const char *name, int n, bool axes, const int *ranks, int64_t *out)
{
  const Onnx__AttributeProto *a = NULL;
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      a = c->node->attribute[i];
  if (a && (int)a->n_ints != n) {
    onnx_node_fail(c, TS_ERR_FORMAT, "attribute '%s' has %zu values for %d", name, a->n_ints, n);
    return false;
  }
  for (int i = 0; i < n; i++) {
    out[i] = a ? a->ints[i] : 0;
    if (axes && !ranks)
      continue;
    if (axes && out[i] < 0)
      out[i] += ranks[i];
    if (axes ? out[i] < 0 || out[i] >= ranks[i] : out[i] != 0 && out[i] != 1) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "attribute '%s': value %d is out of range", name, i);
      return false;
    }
  }
  return true;
}

/* One scan (opset 9 on): states[n_state] and inputs[n_in] (their scan
 * axis first, in scan order) to the final states and the stacked scan
 * outputs (axis 0 the iterations), into out.  false + error. */
static bool scan_run(const onnx_node_ctx *c, const Onnx__GraphProto *body, ts_tensor **states, int n_state,
                     ts_tensor **inputs, int n_in, ts_tensor **out)
{
  int n_out = (int)body->n_output - n_state;
  int64_t steps = n_in ? ts_tensor_dim(inputs[0], 0) : 0;
  for (int k = 0; k < n_in; k++)
    if (steps < 0 || ts_tensor_dim(inputs[k], 0) != steps) {
      onnx_node_fail(c, TS_ERR_SHAPE, "the scan inputs' lengths must be known and equal");
      return false;
    }
  int64_t zero = 0, one = 1;
  int32_t none = 0;
  scan_env env = { c, body, n_state, n_in, n_out, inputs, ts_constant(TS_I64, TS_SCALAR_SHAPE, &steps),
                   ts_constant(TS_I64, TS_SCALAR_SHAPE, &one) };
  int n = 1 + n_state + n_out;
  ts_tensor **vars = g_new0(ts_tensor *, n + 1);
  vars[0] = ts_constant(TS_I64, TS_SCALAR_SHAPE, &zero);
  for (int i = 0; i < n_state; i++)
    vars[1 + i] = states[i];
  bool ok = !ts_failed();
  ts_tensor *empty = ts_constant(TS_I32, TS_SCALAR_SHAPE, &none);
  for (int k = 0; k < n_out && ok; k++) {
    ts_dtype dt;
    ok = body_output_dtype(c, body, (size_t)(n_state + k), &dt);
    if (ok)
      vars[1 + n_state + k] = ts_tensor_array_at(c->loc, dt, empty);
  }
  ok = ok && ts_while_loop_at(c->loc, scan_cond, scan_body, vars, n, &env);
  for (int i = 0; i < n_state + n_out && ok; i++)
    out[i] = i < n_state ? vars[1 + i] : ts_tensor_array_stack_at(c->loc, vars[1 + i]);
  g_free(vars);
  return ok && !ts_failed();
}

/* Scan: from opset 9 each scan input and output has its axis and
 * direction; opset 8's inputs have a batch axis first (each batch entry
 * scanned apart, sequence_lens absent) and the scan axis second. */
bool onnx_op_scan(onnx_node_ctx *c)
{
  const Onnx__GraphProto *body = need_graph(c, "body");
  if (!body)
    return false;
  bool batched = c->opset < 9;
  int first = batched ? 1 : 0;
  if (batched && c->n_in > 0 && c->in[0].t) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sequence_lens is not supported");
    return false;
  }
  int64_t n_in = -1;
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, "num_scan_inputs") == 0)
      n_in = c->node->attribute[i]->i;
  int n_state = c->n_in - first - (int)n_in;
  if (n_in < 1 || n_state < 0 || (int)body->n_input != n_state + n_in || (int)body->n_output < n_state ||
      c->n_out != (int)body->n_output) {
    onnx_node_fail(c, TS_ERR_FORMAT, "num_scan_inputs %" G_GINT64_FORMAT ", %d inputs and %d outputs for a body "
                   "of %zu inputs and %zu outputs", n_in, c->n_in, c->n_out, body->n_input, body->n_output);
    return false;
  }
  int n_out = c->n_out - n_state;
  ts_tensor **x = g_new0(ts_tensor *, c->n_in + 1);
  int *in_ranks = g_new0(int, n_in + 1);
  int64_t *in_axes = g_new0(int64_t, n_in + 1), *in_dirs = g_new0(int64_t, n_in + 1);
  int64_t *out_axes = g_new0(int64_t, n_out + 1), *out_dirs = g_new0(int64_t, n_out + 1);
  bool ok = true;
  for (int i = 0; i < c->n_in - first && ok; i++) {
    x[i] = c->in[first + i].t;
    ok = x[i] != NULL;
    for (int d = 0; ok && d < ts_tensor_rank(x[i]); d++)
      ok = ts_tensor_dim(x[i], d) >= 0;
    if (!ok)
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input %d must be present with known dims", first + i);
  }
  for (int k = 0; k < n_in && ok; k++)
    in_ranks[k] = ts_tensor_rank(x[n_state + k]) - (batched ? 1 : 0);
  /* the outputs' axes are checked once their ranks are known */
  ok = ok && scan_ints(c, batched ? "directions" : "scan_input_directions", (int)n_in, false, NULL, in_dirs) &&
       (batched || (scan_ints(c, "scan_input_axes", (int)n_in, true, in_ranks, in_axes) &&
                    scan_ints(c, "scan_output_directions", n_out, false, NULL, out_dirs) &&
                    scan_ints(c, "scan_output_axes", n_out, true, NULL, out_axes)));
  int64_t batch = batched && ok ? ts_tensor_dim(x[0] ? x[0] : x[n_state], 0) : 1;
  ts_tensor ***per_batch = g_new0(ts_tensor **, batch + 1);
  for (int64_t b = 0; b < batch && ok; b++) {
    ts_tensor **states = g_new0(ts_tensor *, c->n_in + 1);
    for (int i = 0; i < n_state + n_in; i++) {
      ts_tensor *v = x[i];
      if (batched) {
        int64_t at = b;
        v = ts_gather_at(c->loc, v, ts_constant(TS_I64, TS_SCALAR_SHAPE, &at), 0);
      }
      if (i >= n_state) {
        v = move_axis(c->loc, v, (int)in_axes[i - n_state], true);
        v = in_dirs[i - n_state] ? reverse_front(c->loc, v) : v;
      }
      states[i] = v;
    }
    per_batch[b] = g_new0(ts_tensor *, c->n_out + 1);
    ok = scan_run(c, body, states, n_state, states + n_state, (int)n_in, per_batch[b]);
    g_free(states);
  }
  for (int i = 0; i < c->n_out && ok; i++) {
    ts_tensor *y;
    if (batched) {
      ts_tensor **parts = g_new0(ts_tensor *, batch + 1);
      for (int64_t b = 0; b < batch; b++) {
        ts_shape s = ts_tensor_shape(per_batch[b][i]), one = { .rank = s.rank + 1 };
        one.dim[0] = 1;
        for (int d = 0; d < s.rank; d++)
          one.dim[d + 1] = s.dim[d];
        parts[b] = ts_reshape_at(c->loc, per_batch[b][i], one);
      }
      y = batch == 1 ? parts[0] : ts_concat_at(c->loc, parts, (int)batch, 0);
      g_free(parts);
    } else {
      y = per_batch[0][i];
      int k = i - n_state;
      if (k >= 0 && out_dirs[k])
        y = reverse_front(c->loc, y);
      if (k >= 0 && (out_axes[k] < -ts_tensor_rank(y) || out_axes[k] >= ts_tensor_rank(y))) {
        onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "scan_output_axes value %d is out of range", k);
        ok = false;
        break;
      }
      if (k >= 0)
        y = move_axis(c->loc, y, (int)(out_axes[k] < 0 ? out_axes[k] + ts_tensor_rank(y) : out_axes[k]), false);
    }
    c->out[i] = y;
  }
  for (int64_t b = 0; b < batch; b++)
    g_free(per_batch[b]);
  g_free(per_batch);
  g_free(x);
  g_free(in_ranks);
  g_free(in_axes);
  g_free(in_dirs);
  g_free(out_axes);
  g_free(out_dirs);
  return ok && !ts_failed();
}

/* ---- SequenceMap -------------------------------------------------------------------- */

/* The loop's variables: the position, then one TensorList per output.
 * Each iteration gives the body element i of every sequence input and
 * every tensor input whole, and writes its outputs at i. */
typedef struct map_env {
  const onnx_node_ctx *c;
  const Onnx__GraphProto *body;
  ts_tensor *length, *one;
} map_env;

static ts_tensor *map_cond(ts_tensor *const *vars, int n, void *data)
{
  const map_env *env = data;
  return ts_less_at(env->c->loc, vars[0], env->length);
}

static void map_body(ts_tensor **vars, int n, void *data)
{
  const map_env *env = data;
  const onnx_node_ctx *c = env->c;
  ts_tensor **in = g_new0(ts_tensor *, c->n_in + 1), **out = g_new0(ts_tensor *, c->n_out + 1);
  for (int i = 0; i < c->n_in; i++) {
    in[i] = c->in[i].t;
    if (ts_tensor_dtype(in[i]) != TS_VARIANT)
      continue;
    /* the body's input type says what the element is where the graph cannot */
    ts_list_elem hint = { 0 };
    bool hinted = onnx_elem_hint(c->in[i].type, &hint);
    ts_tensor *read[2] = { in[i], vars[0] };
    in[i] = ts__element_op(c->loc, TS_OP_TENSOR_LIST_GET_ITEM, read, 2, hinted ? &hint : NULL, 0);
  }
  if (!ts_failed() && onnx_build_subgraph(c, env->body, in, c->n_in, out)) {
    for (int k = 0; k < c->n_out; k++)
      vars[1 + k] = ts_tensor_array_write_at(c->loc, vars[1 + k], vars[0], out[k]);
    vars[0] = ts_add_at(c->loc, vars[0], env->one);
  }
  g_free(in);
  g_free(out);
}

/* SequenceMap: the body run on each element of the first input (a
 * sequence), and of the other sequences at the same position (their
 * lengths must match), the tensors among the other inputs given whole;
 * each output a sequence of what the body gave. */
bool onnx_op_sequence_map(onnx_node_ctx *c)
{
  map_env env = { c, need_graph(c, "body"), NULL, NULL };
  if (!env.body)
    return false;
  if ((int)env.body->n_input != c->n_in || (int)env.body->n_output != c->n_out) {
    onnx_node_fail(c, TS_ERR_FORMAT, "the body has %zu inputs and %zu outputs; the node %d and %d",
                   env.body->n_input, env.body->n_output, c->n_in, c->n_out);
    return false;
  }
  for (int i = 0; i < c->n_in; i++)
    if (!c->in[i].t || (i == 0 && ts_tensor_dtype(c->in[0].t) != TS_VARIANT)) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, i ? "input %d is missing" : "input %d must be a sequence", i);
      return false;
    }
  int64_t zero = 0, one = 1;
  env.length = ts_tensor_list_length_at(c->loc, c->in[0].t);
  env.one = ts_constant(TS_I64, TS_SCALAR_SHAPE, &one);
  /* the other sequences must be as long: a shorter one's read fails past
   * its end; a longer one is refused where the lengths are known */
  int64_t n0 = ts_tensor_list_size(c->in[0].t);
  for (int i = 1; i < c->n_in; i++) {
    int64_t ni = ts_tensor_list_size(c->in[i].t);
    if (n0 >= 0 && ni >= 0 && ni != n0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "input %d is a sequence of %" G_GINT64_FORMAT
                     " elements, input 0 of %" G_GINT64_FORMAT, i, ni, n0);
      return false;
    }
  }
  int n = 1 + c->n_out;
  ts_tensor **vars = g_new0(ts_tensor *, n + 1);
  vars[0] = ts_constant(TS_I64, TS_SCALAR_SHAPE, &zero);
  bool ok = !ts_failed();
  for (int k = 0; k < c->n_out && ok; k++) {
    ts_dtype dt;
    ok = body_output_dtype(c, env.body, (size_t)k, &dt);
    if (ok)
      vars[1 + k] = ts_tensor_array_at(c->loc, dt, env.length);
  }
  ok = ok && ts_while_loop_at(c->loc, map_cond, map_body, vars, n, &env);
  for (int k = 0; k < c->n_out && ok; k++)
    c->out[k] = vars[1 + k];
  g_free(vars);
  return ok && !ts_failed();
}
