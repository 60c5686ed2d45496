/* rows.c — data parallelism over a batch: runs of steps that treat each
 * row of their batch independently (a model's layers on a batch of
 * inputs), split by rows across the engine's threads.  Each thread runs
 * the whole run of steps on its rows, so a chain of many small layers
 * needs no synchronisation between them (at two threads a batch of 20
 * through 100 Dense layers would otherwise wait 100 times).
 *
 * A row value has static dims and the batch as its first.  A step is a
 * row step when its output is one and every row of it depends on the same
 * row of its row inputs only:
 *   - f32 MatMul and _FusedMatMul (no transpose_a) of a row value by a
 *     matrix (and bias) made outside the run, when the kernel chosen for
 *     the whole batch's shape computes a row as it would in fewer
 *     (ts__gemm_f32_rows_exact: ours do, OpenBLAS may not; the plan's
 *     choices are made before the runs are found);
 *   - elementwise ops and FusedElementwise whose inputs are row values of
 *     the output's rank or broadcast across rows (lower rank, or a first
 *     dim of 1);
 *   - Flatten.
 * Variable reads the run may make itself (executable.c) join a run too:
 * the caller makes them first (they depend on no row).  A run is worth
 * splitting when its batch gives each of two threads TS_MIN_PART_ROWS rows and its
 * steps do HEAVY_WORK (schedule.c's measure) together.
 *
 * What makes it right: each thread's rows of every value it makes are
 * computed by the same kernels as the whole batch would be (GEMMs take
 * the whole batch's kernel choice: kernels.h's ts__tune_rows), so the
 * results are the same bits at every thread count. */
#include "exec.h"
#include "../kernels/kernels.h"

#include <string.h>

/* A value with static dims, at least one, of numbers. */
static bool static_info(const ts_info *info)
{
  return info->shape.rank >= 1 && ts__shape_known(info->shape) && info->dtype != TS_STRING &&
         info->dtype != TS_VARIANT;
}

static bool attr_true(const ts_node *n, const char *name)
{
  const ts_op_def *def = ts__op_def(n->op);
  for (int i = 0; i < def->n_attrs && i < n->n_attrs; i++)
    if (strcmp(def->attrs[i].name, name) == 0)
      return n->attrs[i].b;
  return false;
}

static bool elementwise(ts_op op)
{
  return ts__op_is_elementwise(op) || op == TS_OP_FUSED_ELEMENTWISE;
}

typedef struct finder {
  const ts_graph *g;
  const ts_exec_layout *l;
  const int *step_of;  /* per node id: its step, or -1 */
  int first;           /* the run being grown starts here */
  int64_t rows;        /* its batch */
  bool *row_step;      /* per step */
} finder;

static const ts_info *input_info(const finder *f, const ts_node *n, int i)
{
  return &ts__graph_node(f->g, n->inputs[i].node)->outputs[n->inputs[i].index];
}

/* Is input i of n made by a row step of the run? */
static bool made_in_run(const finder *f, const ts_node *n, int i)
{
  int s = f->step_of[n->inputs[i].node];
  return s >= f->first && f->row_step[s];
}

static bool is_row_value(const ts_info *info, int64_t rows)
{
  return static_info(info) && info->shape.dim[0] == rows;
}

/* Can step n join the run of batch `rows`? */
static bool joins_run(const finder *f, const ts_node *n, int64_t rows)
{
  if (n->n_outputs != 1 || !is_row_value(&n->outputs[0], rows) || n->n_control)
    return false;
  int rank = n->outputs[0].shape.rank;
  switch (n->op) {
  case TS_OP_MATMUL:
  case TS_OP_FUSED_MATMUL:
    if (attr_true(n, "transpose_a") || rank != 2 || n->outputs[0].dtype != TS_F32 ||
        !is_row_value(input_info(f, n, 0), rows))
      return false;
    for (int i = 1; i < n->n_inputs; i++)
      if (made_in_run(f, n, i))
        return false;
    ts_gemm shape = { .m = rows, .n = n->outputs[0].shape.dim[1],
                      .k = input_info(f, n, 0)->shape.dim[1], .tb = attr_true(n, "transpose_b") };
    return ts__gemm_f32_rows_exact(&shape);
  case TS_OP_FLATTEN: /* a Reshape names its batch (or not): it stays out */
    return n->n_inputs >= 1 && is_row_value(input_info(f, n, 0), rows);
  default:
    if (!elementwise(n->op))
      return false;
    for (int i = 0; i < n->n_inputs; i++) {
      const ts_info *in = input_info(f, n, i);
      bool row = is_row_value(in, rows) && in->shape.rank == rank;
      bool broadcast = static_info(in) ? in->shape.rank < rank || in->shape.dim[0] == 1
                                       : in->shape.rank == 0;
      if (made_in_run(f, n, i) ? !row : !(row || broadcast))
        return false;
    }
    return true;
  }
}

/* Ends the run [f->first, end): kept when worth it (one row step alone is
 * split by its own kernel, if at all). */
static void close_run(finder *f, int end, int *rows_end, int64_t *rows_of, double work, int *n_runs)
{
  int n_row = 0;
  for (int s = f->first; s < end; s++)
    n_row += f->row_step[s];
  if (n_row >= 2 && f->rows >= 2 * TS_MIN_PART_ROWS && work >= TS_HEAVY_WORK) {
    rows_end[f->first] = end;
    rows_of[f->first] = f->rows;
    (*n_runs)++;
  } else {
    for (int s = f->first; s < end; s++)
      f->row_step[s] = false;
  }
}

int ts__row_runs(const ts_graph *g, const ts_exec_layout *l, const bool *fast_read, int *rows_end,
                 int64_t *rows_of, bool *row_step)
{
  int n_nodes = (int)g->nodes->len, n_runs = 0;
  int *step_of = g_new(int, n_nodes ? n_nodes : 1);
  for (int id = 0; id < n_nodes; id++)
    step_of[id] = -1;
  for (int s = 0; s < l->n_steps; s++) {
    step_of[l->steps[s]] = s;
    rows_end[s] = 0;
    rows_of[s] = 0;
    row_step[s] = false;
  }
  finder f = { g, l, step_of, -1, 0, row_step };
  double work = 0;
  for (int s = 0, group_end = 0; s < l->n_steps; s++) {
    const ts_node *n = ts__graph_node(g, l->steps[s]);
    group_end = MAX(group_end, l->group_end[s]);
    if (s < group_end) { /* runs at once with others: not in a run */
      if (f.first >= 0)
        close_run(&f, s, rows_end, rows_of, work, &n_runs);
      f.first = -1;
      continue;
    }
    if (fast_read[s]) { /* joins whatever run is open, or waits for one */
      if (f.first < 0)
        f.first = s, f.rows = 0, work = 0;
      continue;
    }
    int64_t rows = n->n_outputs == 1 && static_info(&n->outputs[0]) ? n->outputs[0].shape.dim[0] : -1;
    if (f.first >= 0 && f.rows > 0 && rows == f.rows && joins_run(&f, n, f.rows)) {
      row_step[s] = true;
      work += ts__step_work(g, n);
      continue;
    }
    if (f.first >= 0 && f.rows == 0 && rows > 0 && joins_run(&f, n, rows)) {
      f.rows = rows; /* the reads before it join it */
      row_step[s] = true;
      work = ts__step_work(g, n);
      continue;
    }
    if (f.first >= 0)
      close_run(&f, s, rows_end, rows_of, work, &n_runs);
    f.first = -1;
    if (rows > 0) { /* a new run may start here */
      f.first = s, f.rows = rows;
      if (joins_run(&f, n, rows)) {
        row_step[s] = true;
        work = ts__step_work(g, n);
      } else {
        f.first = -1;
      }
    }
  }
  if (f.first >= 0)
    close_run(&f, l->n_steps, rows_end, rows_of, work, &n_runs);
  g_free(step_of);
  return n_runs;
}
