/* diverge_report.c — the divergence finder's report (diverge.c) as text,
 * and freeing it. */
#include "diverge-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const EXPECTED_NAMES[TS_EXPECTED_KIND_COUNT] = {
  [TS_EXPECTED_NONE] = "none",
  [TS_EXPECTED_PRINT] = "print",
  [TS_EXPECTED_FOLDED] = "folded",
  [TS_EXPECTED_PRUNED] = "pruned",
  [TS_EXPECTED_NO_TWIN] = "no graph twin",
  [TS_EXPECTED_STATE_ORDER] = "state order",
  [TS_EXPECTED_FOLLOWS] = "follows",
  [TS_EXPECTED_FUSED] = "fused",
  [TS_EXPECTED_SIMPLIFIED] = "simplified",
};

const char *ts_diverge_expected_name(ts_diverge_expected why)
{
  return (unsigned)why < TS_EXPECTED_KIND_COUNT ? EXPECTED_NAMES[why] : "?";
}

const char *ts__diverge_base_name(const char *path)
{
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path ? path : "?";
}

static void op_clear(ts_diverge_op *d)
{
  g_free(d->node);
  g_free(d->graph_node);
  g_free(d->note);
  ts_tensor_unref(d->eager);
  ts_tensor_unref(d->graph);
}

void ts_diverge_report_free(ts_diverge_report *rep)
{
  if (!rep)
    return;
  g_free(rep->function);
  g_free(rep->signature);
  g_free(rep->cause);
  if (rep->first) {
    op_clear(rep->first);
    g_free(rep->first);
  }
  op_clear(&rep->result);
  for (int i = 0; i < rep->n_expected; i++)
    op_clear(&rep->expected[i]);
  g_free(rep->expected);
  g_free(rep);
}

/* ---- the report as text ---------------------------------------------------------------- */

static void append_index(GString *s, ts_shape index)
{
  g_string_append_c(s, '[');
  for (int k = 0; k < index.rank; k++)
    g_string_append_printf(s, "%s%" PRId64, k ? ", " : "", index.dim[k]);
  g_string_append_c(s, ']');
}

/* "max |eager-graph| = 3 at [2] (eager 5, graph 2)" and the like. */
static void append_difference(GString *s, const ts_diverge_op *d)
{
  char a[TS_INFO_STR], b[TS_INFO_STR];
  switch (d->kind) {
  case TS_DIVERGE_VALUE:
    g_string_append_printf(s, "max |eager-graph| = %.6g at ", d->max_abs);
    append_index(s, d->worst_index);
    g_string_append_printf(s, " (eager %.9g, graph %.9g)", d->eager_value, d->graph_value);
    break;
  case TS_DIVERGE_SHAPE:
  case TS_DIVERGE_DTYPE:
    g_string_append_printf(s, "%s differ: eager %s, graph %s",
                           d->kind == TS_DIVERGE_SHAPE ? "shapes" : "dtypes",
                           ts__info_str(a, d->eager->dtype, d->eager->shape),
                           ts__info_str(b, d->graph->dtype, d->graph->shape));
    break;
  case TS_DIVERGE_NOT_RUN:
    g_string_append_printf(s, "ran eagerly (run %d of its node) but not in the graph",
                           d->occurrence + 1);
    break;
  default: g_string_append(s, "equal"); break;
  }
}

/* "op #12 Add 'add_1' at model.c:34", and the node it was compared with
 * when a pass rewrote it: " (in the graph: FusedElementwise 'add_1' standing
 * for Mul, Add)" (an expected difference's note says it instead). */
static void append_op(GString *s, const ts_diverge_op *d)
{
  g_string_append_printf(s, "op #%" PRIu64 " %s", d->seq, d->op_name);
  if (d->node)
    g_string_append_printf(s, " '%s'", d->node);
  if (d->loc.file)
    g_string_append_printf(s, " at %s:%d", ts__diverge_base_name(d->loc.file), d->loc.line);
  if (d->graph_node && d->expected == TS_EXPECTED_NONE)
    g_string_append_printf(s, " (in the graph: %s)", d->graph_node);
}

/* Values of small tensors in full; of bigger ones, dtype and shape (the
 * worst element is on the line above; the tensors are in the report). */
#define SHOW_VALUES_MAX 24

static void append_value(GString *s, const char *label, const ts_tensor *t)
{
  if (!t)
    return;
  if (ts_tensor_size(t) > SHOW_VALUES_MAX) {
    char info[TS_INFO_STR];
    g_string_append_printf(s, "  %s: %s\n", label,
                           ts__info_str(info, ts_tensor_dtype(t), ts_tensor_shape(t)));
    return;
  }
  char *text = ts_tensor_format_values(t);
  g_string_append_printf(s, "  %s: %s\n", label, text ? text : "?");
  free(text);
}

/* The first line after the title: the first divergence, or that there is none. */
void ts__diverge_append_verdict(GString *s, const ts_diverge_report *rep)
{
  if (rep->first) {
    g_string_append(s, "first divergence: ");
    append_op(s, rep->first);
    g_string_append(s, ": ");
    append_difference(s, rep->first);
  } else if (rep->result.kind != TS_DIVERGE_NONE) {
    g_string_append(s, "the results differ, though no op does: ");
    append_difference(s, &rep->result);
  } else {
    g_string_append(s, "no divergence");
  }
}

char *ts_diverge_report_format(const ts_diverge_report *rep)
{
  TS_CHECK_ARG(rep != NULL, NULL);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "eager vs graph: %s%s (atol %g, rtol %g)\n", rep->function,
                         rep->signature, rep->options.atol, rep->options.rtol);
  ts__diverge_append_verdict(s, rep);
  g_string_append_c(s, '\n');
  const ts_diverge_op *f = rep->first;
  if (f) {
    if (f->occurrence > 0 || f->loop_depth > 0)
      g_string_append_printf(s, "  run %d of its node%s\n", f->occurrence + 1,
                             f->loop_depth > 0 ? " (inside an If/While body)" : "");
    if (f->kind == TS_DIVERGE_VALUE)
      g_string_append_printf(s, "  output %d, max relative difference %.6g\n", f->output,
                             f->max_rel);
    append_value(s, "eager", f->eager);
    append_value(s, "graph", f->graph);
    if (rep->cause)
      g_string_append_printf(s, "  likely cause: %s\n", rep->cause);
  }
  if (rep->n_results > 1)
    g_string_append_printf(s, "result (output %d of %d): ", rep->result.output, rep->n_results);
  else
    g_string_append(s, "result: ");
  if (rep->n_results == 0 && rep->result.kind == TS_DIVERGE_NONE)
    g_string_append(s, "None in both runs"); /* nothing returned to compare */
  else
    append_difference(s, &rep->result);
  g_string_append_c(s, '\n');
  if (rep->result.kind != TS_DIVERGE_NONE) {
    append_value(s, "eager", rep->result.eager);
    append_value(s, "graph", rep->result.graph);
  }
  g_string_append_printf(s,
                         "ops: %d eager, %d graph; %d matched, %d compared, %d differ, "
                         "%d expected difference%s, %d graph-only\n",
                         rep->n_eager, rep->n_graph, rep->n_matched, rep->n_compared,
                         rep->n_differ, rep->n_expected, rep->n_expected == 1 ? "" : "s",
                         rep->n_graph_only);
  if (rep->n_expected)
    g_string_append(s, "expected differences:\n");
  for (int i = 0; i < rep->n_expected; i++) {
    const ts_diverge_op *e = &rep->expected[i];
    g_string_append(s, "  ");
    append_op(s, e);
    g_string_append_printf(s, ": %s: %s\n", ts_diverge_expected_name(e->expected),
                           e->note ? e->note : "");
  }
  char *text = strdup(s->str);
  g_string_free(s, TRUE);
  return text;
}
