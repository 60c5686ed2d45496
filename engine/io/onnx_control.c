/* onnx_control.c — ONNX's If and Loop as the engine's control flow
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
} loop_env;

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
      vars[V_CARRIED + i] = out[1 + i];
  }
  g_free(out);
}

/* The dtype of the body's output i, as its type says (a scan output's
 * TensorArray needs it before the body is built).  false + error. */
static bool body_output_dtype(const onnx_node_ctx *c, const Onnx__GraphProto *body, size_t i, ts_dtype *out)
{
  const Onnx__TypeProto *t = body->output[i]->type;
  if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type &&
      t->tensor_type->has_elem_type && onnx_dtype(t->tensor_type->elem_type, out))
    return true;
  onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the body's output %zu '%s' (a scan output) has no tensor type "
                 "of a dtype the engine has", i, body->output[i]->name);
  return false;
}

bool onnx_op_loop(onnx_node_ctx *c)
{
  loop_env env = { c, need_graph(c, "body"), c->in[0].t, c->n_in > 1 && c->in[1].t, c->n_in - 2, 0, NULL };
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
  int64_t zero = 0, one = 1;
  uint8_t yes = 1;
  vars[V_ITER] = ts_constant(TS_I64, TS_SCALAR_SHAPE, &zero);
  env.one = ts_constant(TS_I64, TS_SCALAR_SHAPE, &one);
  if (env.trip_count)
    env.trip_count = ts_reshape_at(c->loc, env.trip_count, TS_SCALAR_SHAPE);
  vars[V_COND] = env.has_cond ? ts_reshape_at(c->loc, c->in[1].t, TS_SCALAR_SHAPE)
                              : ts_constant(TS_BOOL, TS_SCALAR_SHAPE, &yes);
  for (int i = 0; i < env.n_carried; i++)
    vars[V_CARRIED + i] = c->in[2 + i].t;
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
  for (int i = 0; i < c->n_out && ok; i++)
    c->out[i] = i < env.n_carried ? vars[V_CARRIED + i]
                                  : ts_tensor_array_stack_at(c->loc, vars[V_CARRIED + i]);
  g_free(vars);
  return ok && !ts_failed();
}
