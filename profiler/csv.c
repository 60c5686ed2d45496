/* csv.c — op statistics as CSV (RFC 4180 quoting), times in ns. */
#include "profiler-private.h"

#include <errno.h>
#include <string.h>

static void put_field(FILE *out, const char *s)
{
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static const char *mode_name(unsigned modes)
{
  return modes == TSP_MODE_EAGER ? "eager" : modes == TSP_MODE_GRAPH ? "graph" : "both";
}

void tsp_stats_print_csv(const tsp_stats *const *st, int n, FILE *out)
{
  fputs("key,op,mode,device,count,total_ns,self_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,share\n", out);
  for (int t = 0; t < n; t++) {
    for (int i = 0; i < st[t]->n; i++) {
      const tsp_stat *r = &st[t]->rows[i];
      put_field(out, r->key);
      fputc(',', out);
      put_field(out, r->op >= 0 && r->op != TSP_OP_OTHER ? ts_op_name((ts_op)r->op) : "");
      fprintf(out, ",%s,", mode_name(r->modes));
      put_field(out, r->device);
      fprintf(out, ",%" G_GUINT64_FORMAT ",%.0f,%.0f,%.1f,%.0f,%.0f,%.0f,%.0f,%.6f\n", r->count,
              r->total_ns, r->self_ns, r->mean_ns, r->min_ns, r->max_ns, r->p50_ns, r->p95_ns,
              r->share);
    }
  }
}

bool tsp_stats_write_csv(const tsp_stats *const *st, int n, const char *path, GError **error)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot write '%s': %s", path, g_strerror(errno));
    return false;
  }
  tsp_stats_print_csv(st, n, f);
  bool ok = !ferror(f);
  int err = errno;
  if (fclose(f) != 0 || !ok) {
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot write '%s': %s", path,
                g_strerror(err ? err : EIO));
    return false;
  }
  return true;
}
