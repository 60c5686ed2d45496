/* cli-trace.c — `stats`, `top` and `diff`: Chrome trace files (ours,
 * PyTorch's, any tool's, plain or gzipped) read with the profiler's
 * importer, their op statistics printed as profile prints them. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-profiler.h>

#define TOP_ROWS 20

static tsp_session *open_trace(const char *path, int *ret)
{
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import(path, &error);
  if (!s) {
    *ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
    g_error_free(error);
  }
  return s;
}

/* "trace.json: 3 threads, 1234 ops, 16.7 ms from the first op to the last" */
static void print_summary(const char *path, const tsp_session *s, const tsp_stats *st)
{
  int n = tsp_session_n_threads(s);
  printf("%s: %d thread%s, %" G_GUINT64_FORMAT " ops over %.3f ms; %.3f ms in ops (self time)\n",
         path, n, n == 1 ? "" : "s", st->count, st->wall_ns / 1e6, st->self_ns / 1e6);
}

static int cmp_self(const void *a, const void *b)
{
  const tsp_stat *x = a, *y = b;
  if (x->self_ns != y->self_ns)
    return x->self_ns < y->self_ns ? 1 : -1;
  return strcmp(x->key, y->key);
}

static int stats_or_top(const cli_options *o, int limit)
{
  int ret = 0;
  tsp_session *s = open_trace(o->traces[0], &ret);
  if (!s)
    return ret;
  tsp_stats *st = tsp_stats_compute(s, (tsp_group_by)cli_group_by(o->by), &TSP_FILTER_ALL);
  if (limit && st->n > 1) /* top: by self time, where the time went */
    qsort(st->rows, (size_t)st->n, sizeof *st->rows, cmp_self);
  print_summary(o->traces[0], s, st);
  g_autofree char *title = g_strdup_printf(limit ? "Top %ss by self time" : "%ss by total time", o->by);
  title[0] = g_ascii_toupper(title[0]);
  cli_print_op_table(st, title, o->by, limit);
  cli_print_step_split(s, &TSP_FILTER_ALL, "all calls");
  GError *error = NULL;
  const tsp_stats *tables[] = { st };
  if (o->csv && !tsp_stats_write_csv(tables, 1, o->csv, &error)) {
    ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
    g_error_free(error);
  }
  tsp_stats_free(st);
  tsp_session_free(s);
  return ret;
}

static int stats(const cli_options *o)
{
  return stats_or_top(o, 0);
}

static int top(const cli_options *o)
{
  return stats_or_top(o, TOP_ROWS);
}

void cli_print_diff(const tsp_diff *d, const char *by, const char *a, const char *b)
{
  const char *side[2] = { a, b };
  char head[10][32];
  for (int k = 0; k < 2; k++) {
    g_snprintf(head[k], sizeof head[k], "%s runs", side[k]);
    g_snprintf(head[2 + k], sizeof head[2 + k], "%s median µs", side[k]);
    g_snprintf(head[4 + k], sizeof head[4 + k], "%s min µs", side[k]);
    g_snprintf(head[6 + k], sizeof head[6 + k], "%s launch µs", side[k]);
    g_snprintf(head[8 + k], sizeof head[8 + k], "%s on", side[k]);
  }
  char ratio_head[40];
  g_snprintf(ratio_head, sizeof ratio_head, "%s/%s", b, a);
  printf("\nBy %s, largest change first (one op's time: median and min; on a device its\n"
         "kernel's, the host's launch median beside it)\n", by);
  printf("  %-32s %9s %9s %15s %15s %13s %13s %11s  %-8s %-8s %15s %15s\n", by, head[0], head[1],
         head[2], head[3], head[4], head[5], ratio_head, head[8], head[9], head[6], head[7]);
  for (int i = 0; i < d->n; i++) {
    const tsp_diff_row *r = &d->rows[i];
    char ratio[16], launch[2][16], only[16], key[64];
    g_snprintf(only, sizeof only, "only %s", r->count[0] ? a : b); /* "only in A" */
    cli_ratio_text(ratio, r->only ? only : NULL, r->ratio);
    for (int k = 0; k < 2; k++) /* the host's time beside a device's kernel time */
      g_snprintf(launch[k], sizeof launch[k], "%.3f", r->host_p50_ns[k] / 1e3);
    printf("  %-32.32s %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %15.3f %15.3f %13.3f %13.3f %11s  %-8.8s %-8.8s %15s %15s\n",
           cli_fit(key, r->key, 32), r->count[0], r->count[1], r->p50_ns[0] / 1e3, r->p50_ns[1] / 1e3,
           r->min_ns[0] / 1e3, r->min_ns[1] / 1e3, ratio, r->device[0] ? r->device[0] : "-",
           r->device[1] ? r->device[1] : "-", r->device_ran[0] ? launch[0] : "-",
           r->device_ran[1] ? launch[1] : "-");
  }
}

/* Two recordings group by group: median and min of one op's time in each
 * (on a device its kernels', the host's launch beside it), B's median over
 * A's (above 1: slower in B).  A profile on the CPU against one on a device
 * compares them op by op. */
static int diff(const cli_options *o)
{
  int ret = 0;
  tsp_session *s[2] = { NULL, NULL };
  for (int i = 0; i < 2 && ret == 0; i++)
    s[i] = open_trace(o->traces[i], &ret);
  if (ret == 0) {
    tsp_diff *d = tsp_diff_compute(s[0], s[1], (tsp_group_by)cli_group_by(o->by));
    printf("A: %s: %.3f ms in ops over %.3f ms\n", o->traces[0], d->self_ns[0] / 1e6, d->wall_ns[0] / 1e6);
    printf("B: %s: %.3f ms in ops over %.3f ms\n", o->traces[1], d->self_ns[1] / 1e6, d->wall_ns[1] / 1e6);
    cli_print_diff(d, o->by, "A", "B");
    tsp_diff_free(d);
  }
  tsp_session_free(s[0]);
  tsp_session_free(s[1]);
  return ret;
}

int cli_stats(int argc, char **argv)
{
  return cli_command_main(CLI_STATS, argc, argv, stats);
}

int cli_top(int argc, char **argv)
{
  return cli_command_main(CLI_TOP, argc, argv, top);
}

int cli_diff(int argc, char **argv)
{
  return cli_command_main(CLI_DIFF, argc, argv, diff);
}
