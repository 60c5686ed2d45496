/* cli-profile.c — `profile`: times every op of a function's calls (the
 * profiler's CPU collector), prints the top ops and, with --mode both,
 * eager against graph op by op; writes a Chrome trace and CSV. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-profiler.h>

#define TOP_ROWS 20

int cli_group_by(const char *by)
{
  return strcmp(by, "node") == 0 ? TSP_BY_NODE
         : strcmp(by, "line") == 0 ? TSP_BY_LINE
         : strcmp(by, "scope") == 0 ? TSP_BY_SCOPE
                                    : TSP_BY_OP;
}

/* The median, min and p95 are of one op's total time; share is of the wall time. */
void cli_print_op_table(const tsp_stats *st, const char *title, const char *by, int limit)
{
  printf("\n%s\n", title);
  printf("  %-40s %7s %11s %11s %10s %10s %10s %7s\n", by, "count", "total µs", "self µs",
         "median µs", "min µs", "p95 µs", "share");
  for (int i = 0; i < st->n && (!limit || i < limit); i++) {
    const tsp_stat *r = &st->rows[i];
    char key[64];
    printf("  %-40.40s %7" G_GUINT64_FORMAT " %10.2f %10.2f %10.3f %10.3f %10.3f %6.1f%%\n",
           cli_fit(key, r->key, 40), r->count, r->total_ns / 1e3, r->self_ns / 1e3, r->p50_ns / 1e3,
           r->min_ns / 1e3, r->p95_ns / 1e3, 100 * r->share);
  }
  if (limit && st->n > limit)
    printf("  (%d more)\n", st->n - limit);
  printf("  %-40s %7" G_GUINT64_FORMAT " %10s %10.2f %32s %6.1f%%\n", "total (self)", st->count, "",
         st->self_ns / 1e3, "", st->wall_ns > 0 ? 100 * st->self_ns / st->wall_ns : 0.0);
  printf("  %-40s %7s %10s %10.2f\n", "wall", "", "", st->wall_ns / 1e3);
}

void cli_print_step_split(const tsp_session *s, const tsp_filter *f, const char *mode)
{
  tsp_step_split sp = tsp_step_split_compute(s, f);
  if (!sp.count[TSP_STEP_BACKWARD] && !sp.count[TSP_STEP_OPTIMIZER])
    return; /* not a training step */
  printf("\nTraining step (%s; by name scope: gradients backward, the optimizer's scope, the rest forward)\n",
         mode);
  printf("  %-12s %7s %11s %7s\n", "part", "ops", "self µs", "share");
  for (int p = 0; p < TSP_STEP_N_PARTS; p++)
    printf("  %-12s %7" G_GUINT64_FORMAT " %10.2f %6.1f%%\n", tsp_step_part_name((tsp_step_part)p),
           sp.count[p], sp.self_ns[p] / 1e3,
           sp.self_total_ns > 0 ? 100 * sp.self_ns[p] / sp.self_total_ns : 0.0);
}

static void print_calls(const tsp_session *s, const tsp_filter *window, const char *mode,
                        uint64_t first_from)
{
  tsp_filter all = { TSP_MODE_ALL, first_from, window->to_ns };
  GArray *cs = tsp_call_stats_compute(s, &all);
  for (guint i = 0; i < cs->len; i++) {
    const tsp_call_stat *c = &g_array_index(cs, tsp_call_stat, i);
    if (strcmp(mode, c->mode == TSP_MODE_GRAPH ? "graph" : "eager") != 0)
      continue;
    printf("%s %s: %" G_GUINT64_FORMAT " calls: first %.3f ms", c->function, mode, c->count,
           c->first_ns / 1e6);
    if (c->first_trace_ns > 0)
      printf(" (tracing %.3f ms)", c->first_trace_ns / 1e6);
    printf(", then %.2f µs per call (median; min %.2f, max %.2f)\n", c->steady_p50_ns / 1e3,
           c->steady_min_ns / 1e3, c->steady_max_ns / 1e3);
  }
  g_array_unref(cs);
}

const char *cli_fit(char buf[64], const char *name, int width)
{
  size_t n = name ? strlen(name) : 0;
  if (!name || width < 4 || width > 63 || n <= (size_t)width)
    return name ? name : "";
  const char *tail = name + n - (width - 3);
  while (tail > name && (*tail & 0xC0) == 0x80) /* not inside a UTF-8 character */
    tail--;
  g_snprintf(buf, 64, "...%s", tail);
  return buf;
}

void cli_ratio_text(char text[16], const char *only, double ratio)
{
  if (only)
    g_strlcpy(text, only, 16);
  else
    g_snprintf(text, 16, "%.2fx", ratio);
}

static void print_compare(const tsp_compare *c)
{
  printf("\nEager against graph, op by op (per call: the median run's self time times the runs)\n");
  printf("  %-32s %-14s %-22s %11s %11s %8s\n", "op identity", "op", "source", "eager µs",
         "graph µs", "ratio");
  for (int i = 0; i < c->n_rows; i++) {
    const tsp_compare_row *r = &c->rows[i];
    char ratio[16], name[64];
    cli_ratio_text(ratio, r->only, r->ratio);
    if (r->parent >= 0) /* an op the fused row above stands for: its time is in that row's */
      printf("    %-30.30s %-14.14s %-22.22s %10.2f %10s %10s\n", cli_fit(name, r->name, 30), r->op,
             r->source, r->eager_ns / 1e3, "", ratio);
    else
      printf("  %-32.32s %-14.14s %-22.22s %10.2f %10.2f %10s\n", cli_fit(name, r->name, 32), r->op,
             r->source, r->eager_ns / 1e3, r->graph_ns / 1e3, ratio);
  }
  printf("  %-32s %-14s %-22s %10.2f %10.2f\n", "ops total", "", "", c->eager_op_ns / 1e3,
         c->graph_op_ns / 1e3);
  printf("  %-32s %-14s %-22s %10.2f %10.2f %9.2fx\n", "call (median)", "", "",
         c->eager_call_ns / 1e3, c->graph_call_ns / 1e3, c->speedup);
  if (c->first_call_ns > 0) {
    printf("Tracing %.3f ms; the first graph call took %.3f ms; ", c->trace_ns / 1e6,
           c->first_call_ns / 1e6);
    if (c->payback_calls >= 0)
      printf("graph mode pays that back after %.0f calls\n", c->payback_calls);
    else
      printf("graph mode is not faster here, so it never pays that back\n");
  }
}

static bool call(tsp_session *s, ts_function *fn, const cli_args *a, bool eager)
{
  ts_run_functions_eagerly(eager);
  ts_scope *scope = ts_scope_begin();
  uint64_t t0 = tsp_call_begin(s);
  ts_tensor *out[TS_MAX_RETURNS]; /* every result of a tuple: timed, not shown */
  int n = ts_function_call_n(fn, a->v, a->n, out, TS_MAX_RETURNS, NULL);
  tsp_call_end(s, t0, ts_function_name(fn), eager ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
  ts_scope_end(scope);
  return n >= 0;
}

/* One mode: a warm-up call (which traces in graph mode), then the timed calls. */
static int profile_one(const cli_options *o, tsp_session *s, ts_function *fn, const cli_args *a,
                       tsp_filter *window, uint64_t *first)
{
  GError *error = NULL;
  /* Eager ops take their names and scopes from their traced twins: trace
   * first (not recorded); a function that does not trace profiles unnamed. */
  if (o->eager) {
    ts_scope *scope = ts_scope_begin();
    if (!ts_function_get_concrete(fn, a->v, a->n))
      ts_error_clear();
    ts_scope_end(scope);
  }
  if (!tsp_session_start(s, &error)) {
    int ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
    g_error_free(error);
    return ret;
  }
  *first = ts_now_ns();
  bool ok = call(s, fn, a, o->eager);
  uint64_t from = ts_now_ns();
  for (int64_t i = 0; ok && i < o->repeat; i++)
    ok = call(s, fn, a, o->eager);
  *window = (tsp_filter){ TSP_MODE_ALL, from, ts_now_ns() };
  tsp_session_stop(s);
  return ok ? 0 : cli_fail_engine(CLI_EXIT_FAILED);
}

static int write_files(const cli_options *o, const tsp_session *s, const tsp_stats *const *st,
                       int n)
{
  GError *error = NULL;
  if (o->out && !tsp_chrome_export(s, o->out, &error))
    return cli_fail(CLI_EXIT_FAILED, "%s", error->message);
  if (o->csv && !tsp_stats_write_csv(st, n, o->csv, &error))
    return cli_fail(CLI_EXIT_FAILED, "%s", error->message);
  return 0;
}

static void print_device_table(const tsp_session *s, const tsp_filter *window, const char *mode);

/* --against: the same calls on the other device, in a session of their
 * own, then both op by op (the other device as A). */
static int profile_against(const cli_options *o, const tsp_session *s, ts_function *fn,
                           const cli_args *a)
{
  tsp_session *other = tsp_session_new();
  tsp_filter window;
  uint64_t first = 0;
  int ret = 0;
  TS_DEVICE_SCOPE(o->against) { ret = profile_one(o, other, fn, a, &window, &first); }
  if (ret == 0) {
    const char *here = o->device ? ts_backend_name(o->device) : ts_backend_name(ts_backend_cpu());
    const char *there = ts_backend_name(o->against);
    printf("\nOn %s against %s, the same %" G_GINT64_FORMAT " calls after warm-up\n", here, there,
           o->repeat);
    tsp_diff *d = tsp_diff_compute(other, s, (tsp_group_by)cli_group_by(o->by));
    cli_print_diff(d, o->by, there, here);
    tsp_diff_free(d);
  }
  tsp_session_free(other);
  return ret;
}

static int profile(const cli_options *o)
{
  cli_args a = { 0 };
  ts_module *module = NULL;
  ts_function *fn = NULL;
  ts_scope *scope = ts_scope_begin();
  GPtrArray *none = g_ptr_array_new();
  tsp_session *s = tsp_session_new();
  if (o->memory) /* opt-in: it costs about as much again as the ops */
    tsp_session_add_collector(s, &tsp_memory_collector, NULL);
  int ret = CLI_EXIT_USAGE;
  if (o->calls->len > 1) {
    ret = cli_fail(CLI_EXIT_USAGE, "profile makes one call (with --arg), --repeat times");
    goto out;
  }
  if (o->against && o->both) {
    ret = cli_fail(CLI_EXIT_USAGE, "--against compares one mode on two devices: not with --mode both");
    goto out;
  }
  if (!cli_args_parse(o->calls->len ? g_ptr_array_index(o->calls, 0) : none, &a))
    goto out;
  if ((ret = cli_open_function(o, &module, &fn)) != 0)
    goto out;
  const char *const *examples = o->calls->len == 0 ? cli_examples(module, fn) : NULL;
  if (examples) {
    g_autoptr(GPtrArray) specs = g_ptr_array_new();
    for (const char *const *e = examples; *e; e++)
      g_ptr_array_add(specs, (char *)*e);
    cli_args_clear(&a);
    if (!cli_args_parse(specs, &a)) {
      ret = CLI_EXIT_FAILED;
      goto out;
    }
  }
  if ((ret = cli_check_arity(fn, a.n, "--arg")) != 0)
    goto out;

  int listener = cli_listen(false);
  tsp_group_by by = (tsp_group_by)cli_group_by(o->by);
  if (o->both) {
    tsp_compare *c = tsp_compare_run(s, fn, a.v, a.n, (int)MIN(o->repeat, INT_MAX));
    if (!c) {
      ret = cli_fail_engine(CLI_EXIT_FAILED);
    } else {
      printf("Profile of %s, eager and graph, %" G_GINT64_FORMAT " calls each after warm-up\n",
             ts_function_name(fn), o->repeat);
      const tsp_stats *st[2] = { tsp_stats_compute(s, by, &c->eager_window),
                                 tsp_stats_compute(s, by, &c->graph_window) };
      print_calls(s, &c->eager_window, "eager", 0);
      print_calls(s, &c->graph_window, "graph", 0);
      for (int m = 0; m < 2; m++) {
        g_autofree char *title = g_strdup_printf("Top ops by total time (%s, by %s)",
                                                 m ? "graph" : "eager", o->by);
        cli_print_op_table(st[m], title, o->by, TOP_ROWS);
      }
      cli_print_step_split(s, &c->eager_window, "eager");
      cli_print_step_split(s, &c->graph_window, "graph");
      print_compare(c);
      print_device_table(s, &c->eager_window, "eager");
      print_device_table(s, &c->graph_window, "graph");
      ret = write_files(o, s, st, 2);
      tsp_stats_free((tsp_stats *)st[0]);
      tsp_stats_free((tsp_stats *)st[1]);
      tsp_compare_free(c);
    }
  } else {
    tsp_filter window;
    uint64_t first = 0;
    const char *mode = o->eager ? "eager" : "graph";
    if ((ret = profile_one(o, s, fn, &a, &window, &first)) == 0) {
      printf("Profile of %s, %s, %" G_GINT64_FORMAT " calls after warm-up\n", ts_function_name(fn),
             mode, o->repeat);
      const tsp_stats *st = tsp_stats_compute(s, by, &window);
      print_calls(s, &window, mode, first);
      g_autofree char *title = g_strdup_printf("Top ops by total time (%s, by %s)", mode, o->by);
      cli_print_op_table(st, title, o->by, TOP_ROWS);
      cli_print_step_split(s, &window, mode);
      ret = write_files(o, s, &st, 1);
      print_device_table(s, &window, mode);
      tsp_stats_free((tsp_stats *)st);
      if (ret == 0 && o->against)
        ret = profile_against(o, s, fn, &a);
    }
  }
  char *lost = tsp_session_losses_text(s);
  if (lost)
    fprintf(stderr, "tracescope-cli: warning: %s\n", lost);
  g_free(lost);
  ts_listener_remove(listener);
out:
  tsp_session_free(s);
  ts_module_free(module);
  cli_args_clear(&a);
  g_ptr_array_unref(none);
  ts_scope_end(scope);
  return ret;
}

/* Per op, the time its kernels took on the devices (DEVICE events, one
 * track per device stream) in the runs of the window's ops: kernels run
 * after their launch, perhaps after the window. */
static void print_device_table(const tsp_session *s, const tsp_filter *window, const char *mode)
{
  GHashTable *runs = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && e->run_id &&
          (window->modes & (e->node ? TSP_MODE_GRAPH : TSP_MODE_EAGER)) &&
          e->start_ns >= window->from_ns && (!window->to_ns || e->start_ns < window->to_ns))
        g_hash_table_add(runs, (gpointer)&e->run_id);
  }
  GHashTable *by_op = g_hash_table_new(g_str_hash, g_str_equal); /* name -> row */
  GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
  uint64_t total = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind != TSP_EVENT_DEVICE || !g_hash_table_contains(runs, &e->run_id))
        continue;
      const char *name = tsp_event_op_name(s, e);
      uint64_t *row = g_hash_table_lookup(by_op, name);
      if (!row) {
        row = g_new0(uint64_t, 3);
        row[2] = (uint64_t)(uintptr_t)name;
        g_hash_table_insert(by_op, (char *)name, row);
        g_ptr_array_add(rows, row);
      }
      row[0]++;
      row[1] += e->end_ns - e->start_ns;
      total += e->end_ns - e->start_ns;
    }
  }
  if (rows->len) {
    printf("\nDevice time by op (%s, kernels on the device's stream)\n", mode);
    printf("  %-32s %7s %11s %10s %7s\n", "op", "count", "device µs", "mean µs", "share");
    for (guint i = 0; i < rows->len; i++) {
      const uint64_t *row = rows->pdata[i];
      char name[64];
      printf("  %-32.32s %7" G_GUINT64_FORMAT " %10.2f %10.3f %6.1f%%\n",
             cli_fit(name, (const char *)(uintptr_t)row[2], 32), row[0], row[1] / 1e3, row[1] / 1e3 / (double)row[0],
             total ? 100.0 * (double)row[1] / (double)total : 0);
    }
  }
  g_ptr_array_unref(rows);
  g_hash_table_unref(by_op);
  g_hash_table_unref(runs);
}

int cli_profile(int argc, char **argv)
{
  return cli_command_main(CLI_PROFILE, argc, argv, profile);
}
