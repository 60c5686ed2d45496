/* fuzz-control-flow.c — random programs of nested TS_IF / TS_WHILE / TS_FOR
 * with TS_BREAK, TS_CONTINUE and TS_RETURN at any depth, run eagerly and
 * traced (tracer.c, control_flow.c: where issue 24's use after free was).
 *
 * The input is parsed into a statement tree first, so both runs execute
 * the same program: statements are ops on four f32 registers (every block
 * lists all four), If on the sign of a register's sum, While with a
 * counter (it always ends) and a data condition, For over a short range,
 * and jumps.  The interpreter is recursive C: each statement's macro is
 * written in a helper function, as user code may put a TS_IF in a helper
 * its loop body calls; a jump met in a nested block is performed by the
 * level that holds the macro, and an eager TS_RETURN unwinds every level
 * with a plain return.  A jump whose loop is in another C function is
 * refused when traced ("outside a TS_WHILE or TS_FOR loop (of this
 * function)").
 *
 * Each program runs twice over: returning a register, and returning None
 * (ts_none) after assigning the register's sum to a variable where it
 * would have returned it, so that None travels the same jumps, guards
 * and loop flags; the variable's value is then what the runs compare.
 *
 * The graph runs a third time on the simulated device (SIM:0), where its
 * If and While nodes run as the device's conditional nodes in the plan's
 * capture (exec/device_cf.c), or from the host where they cannot.
 *
 * A finding: a crash, a sanitizer report, a leak, a hang, an error without
 * a message — or two runs succeeding with different results (tf.function
 * semantics: eager and graph agree; a device gives the CPU graph's
 * result).  One run failing where the other succeeds is allowed (a loop
 * changing a variable's shape is an error only when traced), but the
 * device fails only where the CPU's graph does. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_REGS 4
#define MAX_STMTS 48
#define MAX_DEPTH 4
#define MAX_TRIPS 4

typedef enum { S_OP, S_IF, S_WHILE, S_FOR, S_BREAK, S_CONTINUE, S_RETURN } stmt_kind;
typedef enum { J_NONE, J_BREAK, J_CONTINUE, J_RETURN } jump_kind;

typedef struct stmt {
  stmt_kind kind;
  uint8_t op, a, b, c; /* registers and the op's code */
  int trips;           /* loops: at most this many */
  int body, orelse;    /* first statements of the blocks, -1: empty */
  int next;            /* the next statement of this block, -1: the end */
} stmt;

typedef struct program {
  stmt s[MAX_STMTS];
  int n, head;
  const uint8_t *p;
  size_t len, pos;
} program;

static uint8_t rd(program *pr)
{
  return pr->pos < pr->len ? pr->p[pr->pos++] : 0;
}

/* A block: statements until an end byte, the input's end or the limits. */
static int parse_block(program *pr, int depth)
{
  int head = -1, *link = &head;
  while (pr->pos < pr->len && pr->n < MAX_STMTS) {
    uint8_t b = rd(pr);
    if (b % 9 == 8) /* the block ends */
      break;
    stmt *s = &pr->s[pr->n];
    int self = pr->n++;
    *s = (stmt){ .body = -1, .orelse = -1, .next = -1 };
    s->op = rd(pr);
    s->a = rd(pr) % N_REGS;
    s->b = rd(pr) % N_REGS;
    s->c = rd(pr) % N_REGS;
    switch (b % 9) {
    case 0: case 1: case 2: s->kind = S_OP; break;
    case 3: s->kind = depth < MAX_DEPTH ? S_IF : S_OP; break;
    case 4: s->kind = depth < MAX_DEPTH ? S_WHILE : S_OP; break;
    case 5: s->kind = depth < MAX_DEPTH ? S_FOR : S_OP; break;
    case 6: s->kind = s->op & 1 ? S_BREAK : S_CONTINUE; break;
    default: s->kind = S_RETURN; break;
    }
    s->trips = 1 + s->op % MAX_TRIPS;
    if (s->kind == S_IF || s->kind == S_WHILE || s->kind == S_FOR) {
      int body = parse_block(pr, depth + 1);
      int orelse = s->kind == S_IF ? parse_block(pr, depth + 1) : -1;
      s = &pr->s[self]; /* (the array does not move; for the reader) */
      s->body = body;
      s->orelse = orelse;
    }
    *link = self;
    link = &pr->s[self].next;
  }
  return head;
}

/* One run of the program. */
typedef struct run {
  const program *pr;
  jump_kind jump;   /* a jump statement met, for the lexical level to perform */
  ts_tensor *value; /* TS_RETURN's value */
  bool returned;    /* an eager return: every level returns `value` at once */
} run;

static ts_tensor *apply(const stmt *s, ts_tensor **r)
{
  ts_tensor *x = r[s->b], *y = r[s->c];
  switch (s->op % 10) {
  case 0: return ts_add(x, y);
  case 1: return ts_sub(x, y);
  case 2: return ts_mul(x, y);
  case 3: return ts_maximum(x, y);
  case 4: return ts_tanh(x);
  case 5: return ts_neg(x);
  case 6: return ts_abs(y);
  case 7: return ts_reduce_sum(x, TS_AXES(0), false); /* [3] -> scalar: a shape change */
  case 8: return ts_add(x, ts_scalar_f32(0.5f));
  default: return ts_mul(x, ts_scalar_f32(-0.75f));
  }
}

/* The sign of a register's sum: a scalar bool whatever its shape. */
static ts_tensor *positive(ts_tensor *x)
{
  return ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0));
}

static ts_tensor *exec_block(run *x, int head, ts_tensor **r);

static bool none_variant; /* returns are None, the value assigned to `sink` */
static ts_tensor *sink;

/* What a return gives: the value, or None once the value is in sink. */
static ts_tensor *returned_value(ts_tensor *value)
{
  if (!none_variant)
    return value;
  ts_assign(sink, ts_reduce_sum(value, TS_ALL_AXES, false));
  return ts_none();
}

/* After a nested block: an eager return leaves at once; a jump the block
 * met is performed here, where its macro is written. */
#define PERFORM_JUMP(x)                                                              \
  if ((x)->returned)                                                                 \
    return (x)->value;                                                               \
  if ((x)->jump == J_BREAK) {                                                        \
    (x)->jump = J_NONE;                                                              \
    TS_BREAK;                                                                        \
  }                                                                                  \
  if ((x)->jump == J_CONTINUE) {                                                     \
    (x)->jump = J_NONE;                                                              \
    TS_CONTINUE;                                                                     \
  }                                                                                  \
  if ((x)->jump == J_RETURN) {                                                       \
    (x)->jump = J_NONE;                                                              \
    ts_tensor *rv_ = (x)->value;                                                     \
    if (ts__jump(TS_HERE, &ts__cf, TS__JUMP_RETURN, rv_)) { /* TS_RETURN's own */   \
      (x)->returned = true;                                                          \
      return rv_;                                                                    \
    }                                                                                \
    continue;                                                                        \
  }

static ts_tensor *exec_if(run *x, const stmt *s, ts_tensor **r)
{
  TS_IF (positive(r[s->a]), &r[0], &r[1], &r[2], &r[3]) {
    exec_block(x, s->body, r);
    PERFORM_JUMP(x)
  } TS_ELSE {
    exec_block(x, s->orelse, r);
    PERFORM_JUMP(x)
  } TS_END_IF;
  return NULL;
}

static ts_tensor *exec_while(run *x, const stmt *s, ts_tensor **r)
{
  ts_tensor *i = ts_scalar_i32(0);
  ts_tensor *trips = ts_scalar_i32(s->trips);
  /* the counter bounds it whatever the data say; it counts first, so a
   * TS_CONTINUE never skips it */
  TS_WHILE (ts_logical_and(ts_less(i, trips), s->op & 2 ? positive(r[s->b]) : ts_scalar_bool(true)),
            &i, &r[0], &r[1], &r[2], &r[3]) {
    i = ts_add(i, ts_scalar_i32(1));
    exec_block(x, s->body, r);
    PERFORM_JUMP(x)
  }
  return NULL;
}

static ts_tensor *exec_for(run *x, const stmt *s, ts_tensor **r)
{
  ts_tensor *v = NULL;
  TS_FOR (v, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(s->trips), ts_scalar_i32(1)), &r[0], &r[1],
          &r[2], &r[3]) {
    r[s->a] = ts_add(r[s->a], ts_cast(v, TS_F32));
    exec_block(x, s->body, r);
    PERFORM_JUMP(x)
  }
  return NULL;
}

/* Runs a block: NULL, or (after an eager return) the value returned; a
 * jump statement stops the block and is left in x->jump. */
static ts_tensor *exec_block(run *x, int head, ts_tensor **r)
{
  for (int k = head; k >= 0; k = x->pr->s[k].next) {
    const stmt *s = &x->pr->s[k];
    ts_tensor *out = NULL;
    switch (s->kind) {
    case S_OP: r[s->a] = apply(s, r); break;
    case S_IF: out = exec_if(x, s, r); break;
    case S_WHILE: out = exec_while(x, s, r); break;
    case S_FOR: out = exec_for(x, s, r); break;
    case S_BREAK: x->jump = J_BREAK; return NULL;
    case S_CONTINUE: x->jump = J_CONTINUE; return NULL;
    case S_RETURN:
      x->jump = J_RETURN;
      x->value = returned_value(r[s->a]);
      return NULL;
    }
    if (x->returned)
      return out;
  }
  return NULL;
}

static const program *current;

/* The function: its top level is plain C, where a return is `return`
 * and a break or continue cannot be written (they are left out). */
static ts_tensor *body(ts_call *call)
{
  ts_tensor *r[N_REGS];
  for (int i = 0; i < N_REGS; i++)
    r[i] = ts_arg(call, i % 2);
  run x = { .pr = current };
  ts_tensor *out = exec_block(&x, current->head, r);
  if (x.returned || x.jump == J_RETURN)
    return x.returned ? out : x.value;
  return returned_value(r[0]);
}

/* Both results, when both runs gave one: the same dtype, shape and values. */
static void compare(ts_tensor *eager, ts_tensor *graph, const char *what)
{
  if (ts_tensor_dtype(eager) != ts_tensor_dtype(graph) ||
      !ts_shape_equal(ts_tensor_shape(eager), ts_tensor_shape(graph)))
    fuzz_finding("%s results differ in dtype or shape", what);
  for (int64_t i = 0; i < ts_tensor_size(eager); i++) {
    double e = ts_tensor_get_f64(eager, i), g = ts_tensor_get_f64(graph, i);
    if (e == g || (isnan(e) && isnan(g))) /* inf against inf too: their difference is nan */
      continue;
    if (!(fabs(e - g) <= 1e-4 * fmax(1, fabs(e))))
      fuzz_finding("%s results differ at %" G_GINT64_FORMAT ": %g against %g", what, i, e, g);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  /* before the engine's first use, which lists the devices */
  static const ts_backend *sim;
  if (!sim) {
    g_setenv("TRACESCOPE_DEVICES", "sim", TRUE);
    sim = ts_backend_by_name("SIM:0");
    if (!sim)
      fuzz_finding("no SIM:0 with TRACESCOPE_DEVICES=sim");
  }
  static program pr;
  memset(&pr, 0, sizeof pr);
  pr.p = data;
  pr.len = size;
  pr.head = parse_block(&pr, 0);
  current = &pr;

  ts_scope *scope = ts_scope_begin();
  ts_tensor *a = ts_tensor_new(TS_F32, TS_SHAPE(3)), *b = ts_tensor_new(TS_F32, TS_SHAPE(3));
  float *pa = ts_tensor_data(a), *pb = ts_tensor_data(b);
  for (int i = 0; i < 3; i++) {
    pa[i] = (float)i - 1.25f;
    pb[i] = 0.5f - (float)i * 0.75f;
  }
  ts_value args[] = { TS_TENSOR_VALUE(a), TS_TENSOR_VALUE(b) };
  static const char *const MODES[] = { "eager call", "graph call", "graph call on SIM:0" };
  for (int variant = 0; variant < 2; variant++) {
    none_variant = variant == 1;
    ts_tensor *result[3] = { NULL, NULL, NULL };
    for (int mode = 0; mode < 3; mode++) {
      sink = none_variant ? ts_variable_new(ts_scalar_f32(0), "sink") : NULL;
      ts_function *fn = ts_function_new("fuzz_control_flow", body, "a, b");
      ts_function_set_run_eagerly(fn, mode == 0);
      if (mode == 2)
        ts_function_set_device(fn, sim);
      /* twice: the second graph call runs the cached concrete function (on a
       * device: replays the capture) */
      for (int call = 0; call < 2; call++) {
        ts_tensor *t = fuzz_check(ts_function_call(fn, args, 2), MODES[mode]);
        if (t && ts_is_none(t) != none_variant)
          fuzz_finding("%s returned %s", MODES[mode], none_variant ? "a tensor, not None" : "None");
        if (t && none_variant)
          t = fuzz_check(ts_read(sink), "reading the variable the returns assigned");
        if (t && call == 1 && !(result[mode] = mode == 2 ? ts_tensor_to_backend(t, ts_backend_cpu()) : t))
          fuzz_expect_error("copying SIM:0's result to the host");
      }
      if (ts_function_n_concrete(fn) > 0)
        free(ts_graph_to_text(ts_concrete_graph(ts_function_concrete(fn, 0))));
      ts_function_free(fn);
      ts_tensor_unref(sink);
      sink = NULL;
      ts_error_clear();
    }
    if (result[0] && result[1])
      compare(result[0], result[1], "eager and graph");
    if (result[1] && result[2])
      compare(result[1], result[2], "the CPU graph's and SIM:0's");
    if (result[1] && !result[2])
      fuzz_finding("the graph ran on the CPU but failed on SIM:0");
  }
  ts_scope_end(scope);
  ts_release_all();
  ts_error_clear();
  current = NULL;
  return 0;
}
