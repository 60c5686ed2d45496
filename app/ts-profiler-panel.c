/* ts-profiler-panel.c — the op statistics table and the eager-against-graph
 * comparison.  Both tables are GtkColumnViews whose columns come from one
 * table each (title, what a cell shows, where in the row it is); a row is a
 * TsProfileRow holding a copy of a tsp_stat or a tsp_compare_row. */
#include "ts-profiler-panel.h"

#include "ts-call-tree.h"
#include "ts-diff-table.h"
#include "ts-timeline.h"

#include <adwaita.h>
#include <stddef.h>
#include <string.h>

#include "ts-profile-values.h"
#include "ts-timeline.h"

/* ---- rows ----------------------------------------------------------------------------- */

#define TS_TYPE_PROFILE_ROW (ts_profile_row_get_type())
G_DECLARE_FINAL_TYPE(TsProfileRow, ts_profile_row, TS, PROFILE_ROW, GObject)

struct _TsProfileRow {
  GObject parent_instance;
  tsp_stat stat;         /* key and device owned */
  tsp_compare_row cmp;   /* name, op and source owned */
  char *node_name;       /* the traced node's (grouped by node), or NULL */
};

G_DEFINE_FINAL_TYPE(TsProfileRow, ts_profile_row, G_TYPE_OBJECT)

static void ts_profile_row_finalize(GObject *object)
{
  TsProfileRow *r = TS_PROFILE_ROW(object);
  g_free(r->stat.key);
  g_free((char *)r->stat.device);
  g_free(r->cmp.name);
  g_free(r->cmp.op);
  g_free(r->cmp.source);
  g_free(r->node_name);
  G_OBJECT_CLASS(ts_profile_row_parent_class)->finalize(object);
}

static void ts_profile_row_class_init(TsProfileRowClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = ts_profile_row_finalize;
}

static void ts_profile_row_init(TsProfileRow *self) {}

static TsProfileRow *row_of_stat(const tsp_session *s, const tsp_stat *st, tsp_group_by by)
{
  TsProfileRow *r = g_object_new(TS_TYPE_PROFILE_ROW, NULL);
  r->stat = *st;
  r->stat.key = g_strdup(st->key);
  r->stat.device = g_strdup(st->device);
  const tsp_node_info *n = by == TSP_BY_NODE ? tsp_session_node(s, st->node) : NULL;
  r->node_name = n ? g_strdup(n->name) : NULL;
  return r;
}

static TsProfileRow *row_of_compare(const tsp_compare_row *c)
{
  TsProfileRow *r = g_object_new(TS_TYPE_PROFILE_ROW, NULL);
  r->cmp = *c;
  /* an eager op a fused node stands for: under the fused node's row */
  r->cmp.name = c->parent >= 0 ? g_strdup_printf("    ↳ %s", c->name) : g_strdup(c->name);
  r->cmp.op = g_strdup(c->op);
  r->cmp.source = g_strdup(c->source);
  return r;
}

/* ---- columns -------------------------------------------------------------------------- */

typedef enum {
  CELL_TEXT,  /* char * */
  CELL_COUNT, /* uint64_t */
  CELL_NS,    /* double, ns */
  CELL_SHARE, /* double, 0-1 */
  CELL_MODES, /* unsigned tsp_mode bits */
  CELL_CALLS, /* double, per call */
  CELL_RATIO, /* double, or the row's "only" */
  CELL_BARS,  /* eager and graph time drawn */
} CellKind;

typedef struct {
  const char *title;
  CellKind kind;
  size_t offset;
  gboolean expand;
  gboolean compare; /* of the comparison's rows */
  guint priority;   /* which hide first where the table is narrow (STAT_COLUMNS) */
  gboolean device;  /* shown only when some op ran on a device (show_device_columns) */
} Column;

/* priority: 0 always shows; at a width the table does not fit, the
 * columns of the highest priority number hide first (as Sysprof's and
 * Nsight's tables drop theirs), while the Key ellipsizes with its text in a
 * tooltip: the median, Total and Self stay longest. */
static const Column STAT_COLUMNS[] = {
  { "Key", CELL_TEXT, offsetof(tsp_stat, key), TRUE, FALSE, 0, FALSE },
  { "Count", CELL_COUNT, offsetof(tsp_stat, count), FALSE, FALSE, 2, FALSE },
  { "Total", CELL_NS, offsetof(tsp_stat, total_ns), FALSE, FALSE, 0, FALSE },
  { "Self", CELL_NS, offsetof(tsp_stat, self_ns), FALSE, FALSE, 0, FALSE },
  /* one op's time: the median first, min and p95 beside it (a mean moves with one slow run) */
  { "Median", CELL_NS, offsetof(tsp_stat, p50_ns), FALSE, FALSE, 0, FALSE },
  { "Min", CELL_NS, offsetof(tsp_stat, min_ns), FALSE, FALSE, 3, FALSE },
  { "p95", CELL_NS, offsetof(tsp_stat, p95_ns), FALSE, FALSE, 3, FALSE },
  { "Max", CELL_NS, offsetof(tsp_stat, max_ns), FALSE, FALSE, 5, FALSE },
  { "Mean", CELL_NS, offsetof(tsp_stat, mean_ns), FALSE, FALSE, 6, FALSE },
  { "% Wall", CELL_SHARE, offsetof(tsp_stat, share), FALSE, FALSE, 1, FALSE }, /* of the wall time */
  { "Mode", CELL_MODES, offsetof(tsp_stat, modes), FALSE, FALSE, 4, FALSE },
  { "Device", CELL_TEXT, offsetof(tsp_stat, device), FALSE, FALSE, 4, FALSE },
  /* ops on a device: their kernels' time there (the times above are the host's launch) */
  { "Kernels", CELL_NS, offsetof(tsp_stat, device_ns), FALSE, FALSE, 0, TRUE },
  { "Kernel Median", CELL_NS, offsetof(tsp_stat, device_p50_ns), FALSE, FALSE, 2, TRUE },
};
#define STAT_MAX_PRIORITY 6
#define STAT_SORT_COLUMN 2 /* Total, largest first */

static const Column COMPARE_COLUMNS[] = {
  { "Op", CELL_TEXT, offsetof(tsp_compare_row, name), TRUE, TRUE, 0, FALSE },
  { "Type", CELL_TEXT, offsetof(tsp_compare_row, op), FALSE, TRUE, 0, FALSE },
  { "Source", CELL_TEXT, offsetof(tsp_compare_row, source), FALSE, TRUE, 0, FALSE },
  { "Runs/Call", CELL_CALLS, offsetof(tsp_compare_row, graph_count), FALSE, TRUE, 0, FALSE },
  { "Eager", CELL_NS, offsetof(tsp_compare_row, eager_ns), FALSE, TRUE, 0, FALSE },
  { "Graph", CELL_NS, offsetof(tsp_compare_row, graph_ns), FALSE, TRUE, 0, FALSE },
  { "Eager/Graph", CELL_RATIO, offsetof(tsp_compare_row, ratio), FALSE, TRUE, 0, FALSE },
  { "Per Call", CELL_BARS, 0, FALSE, TRUE, 0, FALSE },
  /* on a device Eager and Graph are kernel times: the host's launch beside them */
  { "Eager Host", CELL_NS, offsetof(tsp_compare_row, eager_host_ns), FALSE, TRUE, 0, TRUE },
  { "Graph Host", CELL_NS, offsetof(tsp_compare_row, graph_host_ns), FALSE, TRUE, 0, TRUE },
};

static const void *row_base(const TsProfileRow *r, const Column *c)
{
  return c->compare ? (const void *)&r->cmp : (const void *)&r->stat;
}

#define FIELD(r, c, type) (*(const type *)((const char *)row_base(r, c) + (c)->offset))

static char *cell_text(const TsProfileRow *r, const Column *c)
{
  switch (c->kind) {
  case CELL_TEXT: return g_strdup(FIELD(r, c, char *) ? FIELD(r, c, char *) : "");
  case CELL_COUNT: return g_strdup_printf("%" G_GUINT64_FORMAT, FIELD(r, c, uint64_t));
  case CELL_NS:
    if (c->compare && r->cmp.parent >= 0 && c->offset == offsetof(tsp_compare_row, graph_ns))
      return g_strdup(""); /* an op a fused node stands for: the graph time is the fused row's */
    if (c->device && !c->compare && r->stat.device_count == 0)
      return g_strdup("—"); /* no kernel: a variable read, a view, an op on the CPU */
    return ts_profile_format_ns(FIELD(r, c, double));
  case CELL_SHARE: return g_strdup_printf("%.1f %%", 100 * FIELD(r, c, double));
  case CELL_CALLS: {
    /* the runs per call of the mode that has them */
    double n = r->cmp.graph_count > 0 ? r->cmp.graph_count : r->cmp.eager_count;
    return g_strdup_printf("%.3g", n);
  }
  case CELL_RATIO:
    return r->cmp.only ? g_strdup(r->cmp.only) : g_strdup_printf("%.3g×", FIELD(r, c, double));
  case CELL_MODES: {
    unsigned m = FIELD(r, c, unsigned);
    return g_strdup(m == TSP_MODE_ALL ? "both" : m == TSP_MODE_GRAPH ? "graph" : m == TSP_MODE_EAGER ? "eager" : "");
  }
  case CELL_BARS: return NULL;
  }
  return NULL;
}

static double cell_number(const TsProfileRow *r, const Column *c)
{
  switch (c->kind) {
  case CELL_COUNT: return (double)FIELD(r, c, uint64_t);
  case CELL_NS:
  case CELL_SHARE:
  case CELL_RATIO: return FIELD(r, c, double);
  case CELL_CALLS: return MAX(r->cmp.graph_count, r->cmp.eager_count);
  case CELL_MODES: return FIELD(r, c, unsigned);
  case CELL_BARS: return MAX(r->cmp.eager_ns, r->cmp.graph_ns);
  case CELL_TEXT: break;
  }
  return 0;
}

static int compare_cells(gconstpointer a, gconstpointer b, gpointer data)
{
  const Column *c = data;
  const TsProfileRow *x = a, *y = b;
  if (c->kind == CELL_TEXT)
    return g_strcmp0(FIELD(x, c, char *), FIELD(y, c, char *));
  double u = cell_number(x, c), v = cell_number(y, c);
  return u < v ? GTK_ORDERING_SMALLER : u > v ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

/* ---- the panel ------------------------------------------------------------------------ */

typedef struct _TsProfileShared TsProfileShared;

struct _TsProfilerPanel {
  GtkWidget parent_instance;
  GtkStack *stack, *stats_stack, *compare_stack;
  GtkDropDown *group_dropdown;
  GtkSearchEntry *filter_entry;
  GtkLabel *summary_label;
  GtkInscription *compare_summary;
  GtkSpinButton *calls_spin;
  GtkWidget *compare_button, *devices_button, *page_controls;
  char *device; /* the device runs are made on, NULL for the CPU: the Diff page compares it with the CPU */
  GtkColumnView *stats_view, *compare_view;
  GtkScrolledWindow *stats_scroll;
  GtkWidget *timeline_page;
  GtkRevealer *timeline_search_revealer;
  GtkSearchEntry *timeline_search_entry;
  GtkLabel *timeline_search_status;
  guint fit_id;    /* the tick fitting the statistics' columns to the width */
  guint fit_level; /* the columns of this priority and above are hidden */
  gboolean stats_on_device; /* some op of the statistics ran on a device: its columns may show */
  int fitted_width;
  TsTimeline *timeline;
  TsCallTree *call_tree;
  TsDiffTable *diff_table;

  GListStore *rows, *compare_rows;
  GtkCustomFilter *filter;
  GtkSingleSelection *selection;
  TsProfileShared *shared;          /* the Run's session, NULL if none */
  TsProfileShared *baseline;        /* what the Diff page compares it with, NULL if none */
  char *baseline_label;
  GPtrArray *runs;                  /* RunEntry: every recording set, in order */
  guint run;                        /* the one shown */
  GtkDropDown *run_dropdown;
  GtkStringList *run_names;
  GCancellable *stats_cancellable;  /* the table being made, NULL if none */
  gboolean busy;
  tsp_stats *node_stats;            /* by node, for the graph's colouring */
  uint64_t count;                   /* the session's ops, calls and op time */
  guint n_calls;
  double self_ns, wall_ns;        /* all ops' self time; first op to last */
  tsp_step_split step;              /* a training step's parts, by scope */
  char *label;
  tsp_session *compare_session;
  tsp_compare *compare;
  double compare_max; /* the longest bar, ns */
  tsp_group_by group_by;
  char *node_keys[TSP_BY_SCOPE + 1]; /* a graph node's key under each grouping, or NULL */
  uint64_t range_from, range_to;     /* the timeline's range the table is of; to 0: all */
};

enum { SIGNAL_NODE_SELECTED, SIGNAL_SESSION_READY, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_BUSY, PROP_FITTING, PROP_DEVICE, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsProfilerPanel, ts_profiler_panel, GTK_TYPE_WIDGET)

static void on_cell_setup(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data);
static void on_cell_bind(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data);

/* Fitting the statistics' columns to the table's width: all shown where
 * they fit, else the least important hidden, a priority level a frame
 * (the table's width is measured once laid out: a column hidden does not
 * show in a measure until then). */
static gboolean fit_stat_columns_step(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  TsProfilerPanel *self = data;
  GListModel *columns = gtk_column_view_get_columns(self->stats_view);
  if (self->fit_level > STAT_MAX_PRIORITY + 1) { /* from all of them */
    self->fit_level = STAT_MAX_PRIORITY + 1;
    for (guint i = 0; i < G_N_ELEMENTS(STAT_COLUMNS); i++) {
      g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(columns, i);
      gtk_column_view_column_set_visible(col, !STAT_COLUMNS[i].device || self->stats_on_device);
    }
    return G_SOURCE_CONTINUE;
  }
  int width = gtk_widget_get_width(GTK_WIDGET(self->stats_scroll));
  int need = 0;
  gtk_widget_measure(GTK_WIDGET(self->stats_view), GTK_ORIENTATION_HORIZONTAL, -1, &need, NULL, NULL, NULL);
  if (width > 0 && need > width && self->fit_level > 1) {
    self->fit_level--;
    for (guint i = 0; i < G_N_ELEMENTS(STAT_COLUMNS); i++) {
      g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(columns, i);
      gtk_column_view_column_set_visible(col, (!STAT_COLUMNS[i].device || self->stats_on_device) &&
                                                STAT_COLUMNS[i].priority < self->fit_level);
    }
    return G_SOURCE_CONTINUE;
  }
  self->fit_id = 0;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FITTING]);
  return G_SOURCE_REMOVE;
}

/* Fits the columns again from all of them shown, in the frames to come
 * (the width changes in an allocation, where no column may change). */
static void refit_stat_columns(TsProfilerPanel *self)
{
  if (!gtk_widget_get_mapped(GTK_WIDGET(self->stats_view))) { /* fitted once shown (::map) */
    self->fitted_width = 0;
    return;
  }
  self->fitted_width = gtk_widget_get_width(GTK_WIDGET(self->stats_scroll));
  self->fit_level = STAT_MAX_PRIORITY + 2;
  if (self->fit_id)
    return;
  /* "fitting" meanwhile: a screenshot or a test sees the table fitted */
  self->fit_id = gtk_widget_add_tick_callback(GTK_WIDGET(self->stats_view), fit_stat_columns_step, self, NULL);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FITTING]);
}

static void stop_fitting(TsProfilerPanel *self)
{
  if (!self->fit_id)
    return;
  gtk_widget_remove_tick_callback(GTK_WIDGET(self->stats_view), self->fit_id);
  self->fit_id = 0;
  self->fitted_width = 0;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FITTING]);
}

/* The table's width changed. */
static void on_stats_width(GtkAdjustment *adjustment, GParamSpec *pspec, TsProfilerPanel *self)
{
  if (gtk_widget_get_width(GTK_WIDGET(self->stats_scroll)) != self->fitted_width)
    refit_stat_columns(self);
}

/* Other rows, other widths (a longer key, a bigger count). */
static void on_stats_rows_changed(TsProfilerPanel *self)
{
  refit_stat_columns(self);
}

static void add_columns(TsProfilerPanel *self, GtkColumnView *view, const Column *columns, guint n)
{
  for (guint i = 0; i < n; i++) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(on_cell_setup), (gpointer)&columns[i]);
    g_signal_connect(factory, "bind", G_CALLBACK(on_cell_bind), (gpointer)&columns[i]);
    g_object_set_data(G_OBJECT(factory), "panel", self);
    GtkColumnViewColumn *col = gtk_column_view_column_new(columns[i].title, factory);
    gtk_column_view_column_set_expand(col, columns[i].expand);
    gtk_column_view_column_set_resizable(col, TRUE);
    gtk_column_view_column_set_sorter(col, GTK_SORTER(gtk_custom_sorter_new(compare_cells, (gpointer)&columns[i], NULL)));
    gtk_column_view_append_column(view, col);
    g_object_unref(col);
  }
}

/* The columns of device times (Column.device), shown only when some op of
 * the rows ran on a device: a CPU profile's tables stay as they were. */
static void show_device_columns(GtkColumnView *view, const Column *columns, gboolean shown)
{
  GListModel *cols = gtk_column_view_get_columns(view);
  for (guint i = 0; i < g_list_model_get_n_items(cols); i++) {
    g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(cols, i);
    if (columns[i].device)
      gtk_column_view_column_set_visible(col, shown);
  }
}

/* Two bars, eager over graph, against the longest in the comparison. */
static void draw_bars(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  TsProfilerPanel *self = data;
  TsProfileRow *r = g_object_get_data(G_OBJECT(area), "row");
  if (!r || self->compare_max <= 0)
    return;
  static const double EAGER[3] = { 0.90, 0.55, 0.20 }, GRAPH[3] = { 0.21, 0.52, 0.89 };
  double bar = (height - 3) / 2.0;
  double w[2] = { width * r->cmp.eager_ns / self->compare_max, width * r->cmp.graph_ns / self->compare_max };
  const double *colour[2] = { EAGER, GRAPH };
  for (int k = 0; k < 2; k++) {
    cairo_set_source_rgb(cr, colour[k][0], colour[k][1], colour[k][2]);
    cairo_rectangle(cr, 0, 1 + k * (bar + 1), MAX(w[k], w[k] > 0 ? 1 : 0), bar);
    cairo_fill(cr);
  }
}

static void on_cell_setup(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data)
{
  const Column *c = data;
  if (c->kind == CELL_BARS) {
    GtkWidget *area = gtk_drawing_area_new();
    gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(area), 64);
    gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), 16);
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw_bars, g_object_get_data(G_OBJECT(f), "panel"), NULL);
    gtk_list_item_set_child(item, area);
    return;
  }
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), c->kind == CELL_TEXT || c->kind == CELL_MODES ? 0 : 1);
  gtk_label_set_ellipsize(GTK_LABEL(label), c->kind == CELL_TEXT ? PANGO_ELLIPSIZE_MIDDLE : PANGO_ELLIPSIZE_NONE);
  if (c->kind != CELL_TEXT)
    gtk_widget_add_css_class(label, "numeric");
  else /* the first column names the row and takes the room left; the others' texts are short ("CPU") */
    gtk_label_set_width_chars(GTK_LABEL(label), c->expand ? 14 : 6);
  gtk_list_item_set_child(item, label);
}

static void on_cell_bind(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data)
{
  const Column *c = data;
  TsProfileRow *r = gtk_list_item_get_item(item);
  GtkWidget *child = gtk_list_item_get_child(item);
  if (c->kind == CELL_BARS) {
    g_object_set_data_full(G_OBJECT(child), "row", g_object_ref(r), g_object_unref);
    g_autofree char *eager = ts_profile_format_ns(r->cmp.eager_ns), *graph = ts_profile_format_ns(r->cmp.graph_ns);
    g_autofree char *tip = g_strdup_printf("eager %s (orange) · graph %s (blue) per call", eager, graph);
    gtk_widget_set_tooltip_text(child, tip);
    gtk_widget_queue_draw(child);
    return;
  }
  g_autofree char *text = cell_text(r, c);
  gtk_label_set_label(GTK_LABEL(child), text);
  gtk_widget_set_tooltip_text(child, c->kind == CELL_TEXT ? text : NULL);
}

/* ---- statistics ------------------------------------------------------------------------- */

static gboolean keep_row(gpointer item, gpointer data)
{
  TsProfilerPanel *self = data;
  TsProfileRow *r = item;
  const char *key = self->node_keys[self->group_by];
  if (key && g_strcmp0(r->stat.key, key) != 0)
    return FALSE;
  const char *text = gtk_editable_get_text(GTK_EDITABLE(self->filter_entry));
  if (!text || !*text)
    return TRUE;
  g_autofree char *a = g_utf8_casefold(r->stat.key, -1), *b = g_utf8_casefold(text, -1);
  return strstr(a, b) != NULL;
}

/* ---- the session, shared with the threads that make its tables ------------------------ */

struct _TsProfileShared {
  gatomicrefcount refs;
  tsp_session *session;
};

static TsProfileShared *shared_new(tsp_session *session)
{
  TsProfileShared *sh = g_new(TsProfileShared, 1);
  g_atomic_ref_count_init(&sh->refs);
  sh->session = session;
  return sh;
}

static TsProfileShared *shared_ref(TsProfileShared *sh)
{
  g_atomic_ref_count_inc(&sh->refs);
  return sh;
}

static void shared_unref(TsProfileShared *sh)
{
  if (sh && g_atomic_ref_count_dec(&sh->refs)) {
    tsp_session_free(sh->session);
    g_free(sh);
  }
}

/* A recording kept: every Run (and trace read) of the window, any of which
 * the panel can show again. */
typedef struct {
  TsProfileShared *shared;
  char *label;
} RunEntry;

static void run_entry_free(gpointer p)
{
  RunEntry *run = p;
  shared_unref(run->shared);
  g_free(run->label);
  g_free(run);
}

/* What a thread makes of the session: the rows of one grouping, the
 * totals, and (for a new session) the statistics by node. */
typedef struct {
  TsProfileShared *shared, *baseline;
  char *baseline_label;
  tsp_group_by by;
  tsp_filter filter;
  gboolean by_node;
  GPtrArray *rows; /* TsProfileRow */
  uint64_t count;
  double self_ns, wall_ns;
  tsp_step_split step;
  guint n_calls;
  tsp_stats *node_stats;
  tsp_tree *tree;
  tsp_diff *diff; /* against the baseline, if any */
} StatsJob;

static void stats_job_free(StatsJob *job)
{
  tsp_diff_free(job->diff);
  shared_unref(job->baseline);
  g_free(job->baseline_label);
  shared_unref(job->shared);
  if (job->rows)
    g_ptr_array_unref(job->rows);
  tsp_stats_free(job->node_stats);
  tsp_tree_free(job->tree);
  g_free(job);
}

static void make_stats(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  StatsJob *job = data;
  const tsp_session *s = job->shared->session;
  tsp_stats *st = tsp_stats_compute(s, job->by, &job->filter);
  job->rows = g_ptr_array_new_full((guint)st->n, g_object_unref);
  for (int i = 0; i < st->n; i++)
    g_ptr_array_add(job->rows, row_of_stat(s, &st->rows[i], job->by));
  job->count = st->count;
  job->self_ns = st->self_ns;
  job->wall_ns = st->wall_ns;
  tsp_stats_free(st);
  job->step = tsp_step_split_compute(s, &job->filter);
  job->tree = tsp_tree_compute(s, &job->filter);
  if (job->baseline)
    job->diff = tsp_diff_compute(job->baseline->session, s, job->by);
  GArray *calls = tsp_session_calls(s, &job->filter);
  job->n_calls = calls->len;
  g_array_unref(calls);
  if (job->by_node)
    job->node_stats = tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL);
  g_task_return_boolean(task, TRUE);
}

/* " · step: forward 40%, backward 13%, optimizer 47%" for a training step
 * (some op a gradient's or an optimizer's), with each part's time too
 * ("forward 7.22 ms (40%)") for the tooltip; else "" (owned). */
static char *step_text(const tsp_step_split *sp, gboolean times)
{
  if (!sp->count[TSP_STEP_BACKWARD] && !sp->count[TSP_STEP_OPTIMIZER])
    return g_strdup("");
  GString *text = g_string_new(" · step:");
  for (int p = 0; p < TSP_STEP_N_PARTS; p++) {
    double share = sp->self_total_ns > 0 ? 100 * sp->self_ns[p] / sp->self_total_ns : 0.0;
    g_autofree char *t = ts_profile_format_ns(sp->self_ns[p]);
    g_string_append_printf(text, "%s %s ", p ? "," : "", tsp_step_part_name((tsp_step_part)p));
    if (times)
      g_string_append_printf(text, "%s (%.0f%%)", t, share);
    else
      g_string_append_printf(text, "%.0f%%", share);
  }
  return g_string_free(text, FALSE);
}

/* What the recording could not keep, counted for the summary (the reasons
 * are in its tooltip): "" when nothing was lost. */
static char *losses_text(const tsp_session *s)
{
  tsp_losses lost = tsp_session_losses(s);
  GString *text = g_string_new(NULL);
  if (lost.events)
    g_string_append_printf(text, " · %" G_GUINT64_FORMAT " events lost", lost.events);
  if (lost.device_records)
    g_string_append_printf(text, " · %" G_GUINT64_FORMAT " device records dropped", lost.device_records);
  return g_string_free(text, FALSE);
}

static void update_summary(TsProfilerPanel *self)
{
  if (!self->shared) {
    gtk_label_set_label(self->summary_label, "");
    return;
  }
  g_autofree char *time = ts_profile_format_ns(self->self_ns), *wall = ts_profile_format_ns(self->wall_ns);
  const char *node = self->node_keys[TSP_BY_NODE];
  g_autofree char *range = self->range_to ? ts_profile_format_ns((double)(self->range_to - self->range_from)) : NULL;
  /* another tool's trace has no calls of ours: it says nothing of them */
  g_autofree char *calls = self->n_calls ? g_strdup_printf(" · %u call%s", self->n_calls, self->n_calls == 1 ? "" : "s")
                                         : g_strdup("");
  g_autofree char *losses[2] = { losses_text(self->shared->session),
                                 tsp_session_losses_text(self->shared->session) };
  char *texts[2];
  for (int long_form = 0; long_form < 2; long_form++) {
    g_autofree char *step = step_text(&self->step, long_form);
    /* the Run's label, unless the Run menu beside says it */
    const char *label = self->label && (long_form || self->runs->len <= 1) ? self->label : "";
    g_autofree char *head = g_strdup_printf("%s%s · ", label, calls);
    texts[long_form] = g_strdup_printf(
      "%s%" G_GUINT64_FORMAT " op%s · %s in ops (self time) over %s%s%s%s%s%s%s%s",
      *label ? head : head + strlen(" · "), self->count, self->count == 1 ? "" : "s", time, wall,
      range ? " · in the timeline's range of " : "",
      range ? range : "", step, node ? " · graph selection: " : "", node ? node : "",
      long_form && losses[1] ? " · " : "", long_form ? (losses[1] ? losses[1] : "") : losses[0]);
  }
  gtk_label_set_label(self->summary_label, texts[0]);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->summary_label), texts[1]);
  g_free(texts[0]);
  g_free(texts[1]);
}

static void set_busy(TsProfilerPanel *self, gboolean busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

static void on_stats_made(GObject *source, GAsyncResult *result, gpointer data)
{
  TsProfilerPanel *self = TS_PROFILER_PANEL(source);
  StatsJob *job = g_task_get_task_data(G_TASK(result));
  if (g_cancellable_is_cancelled(g_task_get_cancellable(G_TASK(result))))
    return; /* a newer job, or the panel is going */
  g_clear_object(&self->stats_cancellable);
  g_list_store_splice(self->rows, 0, g_list_model_get_n_items(G_LIST_MODEL(self->rows)), job->rows->pdata,
                      job->rows->len);
  gboolean on_device = FALSE;
  for (guint i = 0; i < job->rows->len && !on_device; i++)
    on_device = ((TsProfileRow *)job->rows->pdata[i])->stat.device_count > 0;
  self->stats_on_device = on_device; /* and the columns fitted again (on_stats_rows_changed) */
  show_device_columns(self->stats_view, STAT_COLUMNS, on_device);
  self->count = job->count;
  self->self_ns = job->self_ns;
  ts_call_tree_set_tree(self->call_tree, g_steal_pointer(&job->tree));
  ts_diff_table_set_diff(self->diff_table, g_steal_pointer(&job->diff), job->baseline_label, self->label);
  self->wall_ns = job->wall_ns;
  self->step = job->step;
  self->n_calls = job->n_calls;
  update_summary(self);
  if (job->by_node) {
    tsp_stats_free(self->node_stats);
    self->node_stats = g_steal_pointer(&job->node_stats);
  }
  set_busy(self, FALSE);
  if (job->by_node)
    g_signal_emit(self, signals[SIGNAL_SESSION_READY], 0);
}

/* The table again, made off the main thread (a newer request cancels an older). */
static void refill(TsProfilerPanel *self, gboolean new_session)
{
  if (self->stats_cancellable)
    g_cancellable_cancel(self->stats_cancellable);
  g_clear_object(&self->stats_cancellable);
  gtk_stack_set_visible_child_name(self->stats_stack, self->shared ? "table" : "empty");
  if (!self->shared) {
    g_list_store_remove_all(self->rows);
    ts_call_tree_set_tree(self->call_tree, NULL);
    ts_diff_table_set_diff(self->diff_table, NULL, NULL, NULL);
    update_summary(self);
    set_busy(self, FALSE);
    if (new_session)
      g_signal_emit(self, signals[SIGNAL_SESSION_READY], 0);
    return;
  }
  self->stats_cancellable = g_cancellable_new();
  StatsJob *job = g_new0(StatsJob, 1);
  job->shared = shared_ref(self->shared);
  /* the Diff page's baseline: a trace read for it, else the Run before this one */
  const RunEntry *previous = self->run > 0 && self->run < self->runs->len ? self->runs->pdata[self->run - 1] : NULL;
  if (self->baseline) {
    job->baseline = shared_ref(self->baseline);
    job->baseline_label = g_strdup(self->baseline_label);
  } else if (previous) {
    job->baseline = shared_ref(previous->shared);
    job->baseline_label = g_strdup_printf("the Run before, %s", previous->label ? previous->label : "");
  }
  job->by = self->group_by;
  job->filter = (tsp_filter){ TSP_MODE_ALL, self->range_from, self->range_to };
  job->by_node = new_session;
  g_autoptr(GTask) task = g_task_new(self, self->stats_cancellable, on_stats_made, NULL);
  g_task_set_task_data(task, job, (GDestroyNotify)stats_job_free);
  set_busy(self, TRUE);
  g_task_run_in_thread(task, make_stats);
}

/* The toolbar holds the Run shown (when there are several) and what the
 * page shown uses: the summary, the grouping (Op Stats, Diff), the filter (Op Stats),
 * the calls and Compare button (Eager vs Graph). */
static void update_toolbar(TsProfilerPanel *self)
{
  const char *page = gtk_stack_get_visible_child_name(self->stack);
  gboolean stats = g_strcmp0(page, "stats") == 0, compare = g_strcmp0(page, "compare") == 0;
  gboolean grouped = stats || g_strcmp0(page, "diff") == 0, runs = self->runs->len > 1;
  gtk_widget_set_visible(GTK_WIDGET(self->run_dropdown), runs);
  gtk_widget_set_visible(GTK_WIDGET(self->group_dropdown), grouped);
  gtk_widget_set_visible(GTK_WIDGET(self->filter_entry), stats);
  gtk_widget_set_visible(GTK_WIDGET(self->summary_label), stats);
  /* the summary fills the line to the controls; without it they keep right */
  gtk_widget_set_halign(self->page_controls, stats ? GTK_ALIGN_FILL : GTK_ALIGN_END);
  gtk_widget_set_visible(GTK_WIDGET(self->calls_spin), compare);
  gtk_widget_set_visible(self->compare_button, compare);
  gboolean devices = self->device && g_strcmp0(page, "diff") == 0;
  gtk_widget_set_visible(self->devices_button, devices);
  /* none: no empty place on the toolbar's line, or a line of its own */
  gtk_widget_set_visible(self->page_controls, runs || grouped || compare || devices);
}

/* ---- the Timeline's Find bar ---------------------------------------------------------- */

/* "N of M", "no match", or nothing before a query. */
static void update_timeline_search_status(TsProfilerPanel *self)
{
  const char *query = gtk_editable_get_text(GTK_EDITABLE(self->timeline_search_entry));
  int n = 0;
  int i = ts_timeline_get_match(self->timeline, &n);
  g_autofree char *text = n > 0 ? g_strdup_printf("%d of %d", i + 1, n) : g_strdup(*query ? "no match" : "");
  gtk_label_set_text(self->timeline_search_status, text);
  if (*query && n == 0)
    gtk_widget_add_css_class(GTK_WIDGET(self->timeline_search_entry), "error");
  else
    gtk_widget_remove_css_class(GTK_WIDGET(self->timeline_search_entry), "error");
}

/* As you type: every span searched, the first match brought into view. */
static void on_timeline_search_changed(TsProfilerPanel *self)
{
  ts_timeline_search(self->timeline, gtk_editable_get_text(GTK_EDITABLE(self->timeline_search_entry)));
  update_timeline_search_status(self);
}

static void on_timeline_search_next(TsProfilerPanel *self)
{
  ts_timeline_search_next(self->timeline, FALSE);
}

static void on_timeline_search_previous(TsProfilerPanel *self)
{
  ts_timeline_search_next(self->timeline, TRUE);
}

/* Escape or the close button: the bar goes, the timeline takes the keys again. */
static void on_timeline_search_stop(TsProfilerPanel *self)
{
  gtk_revealer_set_reveal_child(self->timeline_search_revealer, FALSE);
  gtk_widget_grab_focus(GTK_WIDGET(self->timeline));
}

static void close_timeline_search(TsProfilerPanel *self)
{
  gtk_revealer_set_reveal_child(self->timeline_search_revealer, FALSE);
  gtk_editable_set_text(GTK_EDITABLE(self->timeline_search_entry), "");
}

static void action_timeline_find(GtkWidget *widget, const char *name, GVariant *param)
{
  TsProfilerPanel *self = TS_PROFILER_PANEL(widget);
  gtk_revealer_set_reveal_child(self->timeline_search_revealer, TRUE);
  gtk_widget_grab_focus(GTK_WIDGET(self->timeline_search_entry));
}

static void action_timeline_find_step(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_timeline_search_next(TS_PROFILER_PANEL(widget)->timeline, g_str_equal(name, "profiler.find-previous"));
}

/* Ctrl+F, F3 and Shift+F3 where the focus is in the Timeline's page (the
 * timeline steps on F3 itself when it has the focus). */
static void add_timeline_search_keys(TsProfilerPanel *self)
{
  static const struct {
    guint key;
    GdkModifierType mods;
    const char *action;
  } keys[] = {
    { GDK_KEY_f, GDK_CONTROL_MASK, "profiler.find" },
    { GDK_KEY_F3, 0, "profiler.find-next" },
    { GDK_KEY_F3, GDK_SHIFT_MASK, "profiler.find-previous" },
  };
  GtkEventController *controller = gtk_shortcut_controller_new();
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
    gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(controller),
                                         gtk_shortcut_new(gtk_keyval_trigger_new(keys[i].key, keys[i].mods),
                                                          gtk_named_action_new(keys[i].action)));
  gtk_widget_add_controller(self->timeline_page, controller);
  g_signal_connect_swapped(self->timeline, "match-shown", G_CALLBACK(update_timeline_search_status), self);
}

/* Shows recording i of the runs (none if out of range). */
static void show_run(TsProfilerPanel *self, guint i)
{
  const RunEntry *run = i < self->runs->len ? self->runs->pdata[i] : NULL;
  self->run = i;
  /* the timeline borrows the session: it lets go of the old one first */
  TsProfileShared *old = g_steal_pointer(&self->shared);
  g_clear_pointer(&self->node_stats, tsp_stats_free);
  self->shared = run ? shared_ref(run->shared) : NULL;
  self->range_from = self->range_to = 0;
  ts_timeline_set_session(self->timeline, run ? run->shared->session : NULL);
  g_clear_pointer(&old, shared_unref);
  close_timeline_search(self); /* its matches were the old recording's */
  g_free(self->label);
  self->label = g_strdup(run ? run->label : NULL);
  update_toolbar(self);
  if (run && gtk_drop_down_get_selected(self->run_dropdown) != i)
    gtk_drop_down_set_selected(self->run_dropdown, i);
  refill(self, TRUE);
}

static void on_run_selected(TsProfilerPanel *self)
{
  guint i = gtk_drop_down_get_selected(self->run_dropdown);
  if (i != GTK_INVALID_LIST_POSITION && i != self->run)
    show_run(self, i);
}

void ts_profiler_panel_set_session(TsProfilerPanel *self, tsp_session *session, const char *label)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  if (!session) { /* none: every recording goes */
    show_run(self, G_MAXUINT);
    g_ptr_array_set_size(self->runs, 0);
    gtk_string_list_splice(self->run_names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->run_names)), NULL);
    update_toolbar(self);
    return;
  }
  RunEntry *run = g_new0(RunEntry, 1);
  run->shared = shared_new(session);
  run->label = g_strdup(label);
  g_ptr_array_add(self->runs, run);
  g_signal_handlers_block_by_func(self->run_dropdown, on_run_selected, self); /* not a choice */
  gtk_string_list_append(self->run_names, label ? label : "");
  g_signal_handlers_unblock_by_func(self->run_dropdown, on_run_selected, self);
  show_run(self, self->runs->len - 1);
}

gboolean ts_profiler_panel_get_step_split(TsProfilerPanel *self, tsp_step_split *out)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self) && out, FALSE);
  *out = self->step;
  return self->shared && (self->step.count[TSP_STEP_BACKWARD] || self->step.count[TSP_STEP_OPTIMIZER]);
}

const char *ts_profiler_panel_get_summary(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return gtk_label_get_label(self->summary_label);
}

guint ts_profiler_panel_get_n_runs(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), 0);
  return self->runs->len;
}

void ts_profiler_panel_select_run(TsProfilerPanel *self, guint i)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self) && i < self->runs->len);
  show_run(self, i);
}

guint ts_profiler_panel_get_run(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), 0);
  return self->run;
}

void ts_profiler_panel_show_page(TsProfilerPanel *self, const char *name)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self) && name != NULL);
  gtk_stack_set_visible_child_name(self->stack, name);
}

TsTimeline *ts_profiler_panel_get_timeline(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->timeline;
}

void ts_profiler_panel_set_device(TsProfilerPanel *self, const char *device)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  g_clear_pointer(&self->device, g_free);
  if (device && g_strcmp0(device, "CPU") != 0) {
    self->device = g_strdup(device);
    g_autofree char *label = g_strdup_printf("Compare CPU vs %s", device);
    gtk_button_set_label(GTK_BUTTON(self->devices_button), label);
  }
  update_toolbar(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DEVICE]);
}

void ts_profiler_panel_set_baseline(TsProfilerPanel *self, tsp_session *session, const char *label)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  g_clear_pointer(&self->baseline, shared_unref);
  self->baseline = session ? shared_new(session) : NULL;
  g_free(self->baseline_label);
  self->baseline_label = g_strdup(label);
  refill(self, FALSE);
  if (session)
    gtk_stack_set_visible_child_name(self->stack, "diff");
}

TsDiffTable *ts_profiler_panel_get_diff_table(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->diff_table;
}

TsCallTree *ts_profiler_panel_get_call_tree(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->call_tree;
}

const tsp_session *ts_profiler_panel_get_session(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->shared ? self->shared->session : NULL;
}

const tsp_stats *ts_profiler_panel_get_node_stats(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->node_stats;
}

gboolean ts_profiler_panel_get_busy(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), FALSE);
  return self->busy;
}

gboolean ts_profiler_panel_get_fitting(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), FALSE);
  return self->fit_id != 0;
}

void ts_profiler_panel_set_group_by(TsProfilerPanel *self, tsp_group_by by)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self) && (unsigned)by <= TSP_BY_SCOPE);
  gtk_drop_down_set_selected(self->group_dropdown, (guint)by); /* on_group_selected refills */
}

tsp_group_by ts_profiler_panel_get_group_by(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), TSP_BY_OP);
  return self->group_by;
}

static void on_group_selected(TsProfilerPanel *self)
{
  guint i = gtk_drop_down_get_selected(self->group_dropdown);
  if (i > TSP_BY_SCOPE || (tsp_group_by)i == self->group_by) /* the dropdown lists them in tsp_group_by's order */
    return;
  self->group_by = (tsp_group_by)i;
  refill(self, FALSE);
}

static void on_filter_changed(TsProfilerPanel *self)
{
  gtk_filter_changed(GTK_FILTER(self->filter), GTK_FILTER_CHANGE_DIFFERENT);
}

void ts_profiler_panel_set_filter_text(TsProfilerPanel *self, const char *text)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  gtk_editable_set_text(GTK_EDITABLE(self->filter_entry), text ? text : "");
  on_filter_changed(self); /* now, not after the entry's delay */
}

void ts_profiler_panel_set_node_filter(TsProfilerPanel *self, const ts_node *node)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  for (guint i = 0; i < G_N_ELEMENTS(self->node_keys); i++)
    g_clear_pointer(&self->node_keys[i], g_free);
  if (node) {
    /* the node's key under each grouping, as tsp_stats_compute makes them */
    ts_loc loc = ts_node_loc(node);
    g_autofree char *base = loc.file ? g_path_get_basename(loc.file) : NULL;
    self->node_keys[TSP_BY_OP] = g_strdup(ts_op_name(ts_node_op(node)));
    self->node_keys[TSP_BY_NODE] = ts_node_path(node);
    self->node_keys[TSP_BY_LINE] = base ? g_strdup_printf("%s:%d", base, loc.line) : g_strdup("(no source)");
    self->node_keys[TSP_BY_SCOPE] = g_strdup(*ts_node_scope(node) ? ts_node_scope(node) : "(top)");
  }
  gtk_filter_changed(GTK_FILTER(self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_summary(self);
}

guint ts_profiler_panel_get_n_rows(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), 0);
  return g_list_model_get_n_items(G_LIST_MODEL(self->selection));
}

const tsp_stat *ts_profiler_panel_get_row(TsProfilerPanel *self, guint i)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  g_autoptr(TsProfileRow) r = g_list_model_get_item(G_LIST_MODEL(self->selection), i);
  return r ? &r->stat : NULL; /* the store keeps it */
}

char *ts_profiler_panel_dup_cell_text(TsProfilerPanel *self, guint i, const char *column)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self) && column, NULL);
  g_autoptr(TsProfileRow) r = g_list_model_get_item(G_LIST_MODEL(self->selection), i);
  for (guint c = 0; r && c < G_N_ELEMENTS(STAT_COLUMNS); c++)
    if (strcmp(STAT_COLUMNS[c].title, column) == 0)
      return cell_text(r, &STAT_COLUMNS[c]);
  return NULL;
}

void ts_profiler_panel_select_row(TsProfilerPanel *self, guint i)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  gtk_single_selection_set_selected(self->selection, i);
}

static void on_selection_changed(TsProfilerPanel *self)
{
  TsProfileRow *r = gtk_single_selection_get_selected_item(self->selection);
  if (r && r->node_name)
    g_signal_emit(self, signals[SIGNAL_NODE_SELECTED], 0, r->node_name);
}

/* ---- eager against graph ------------------------------------------------------------------- */

static void update_compare_summary(TsProfilerPanel *self)
{
  const tsp_compare *c = self->compare;
  g_autofree char *eager = ts_profile_format_ns(c->eager_call_ns), *graph = ts_profile_format_ns(c->graph_call_ns);
  g_autofree char *eager_ops = ts_profile_format_ns(c->eager_op_ns), *graph_ops = ts_profile_format_ns(c->graph_op_ns);
  GString *text = g_string_new(NULL);
  g_autofree char *function = g_markup_escape_text(c->function ? c->function : "", -1);
  g_string_append_printf(text, "<b>%s</b>, %d calls each way: eager %s, graph %s per call (median): ", function,
                         c->n_calls, eager, graph);
  if (c->speedup >= 1)
    g_string_append_printf(text, "<b>%.2f× faster as a graph</b>.", c->speedup);
  else if (c->speedup > 0)
    g_string_append_printf(text, "<b>%.2f× slower as a graph</b>.", 1 / c->speedup);
  g_string_append_printf(text, " Op time per call: eager %s, graph %s.", eager_ops, graph_ops);
  if (c->first_call_ns > 0) {
    g_autofree char *first = ts_profile_format_ns(c->first_call_ns), *trace = ts_profile_format_ns(c->trace_ns);
    g_string_append_printf(text, " The first graph call took %s (tracing %s)", first, trace);
    if (c->payback_calls > 0)
      g_string_append_printf(text, ", paid back after %.0f call%s.", c->payback_calls, c->payback_calls == 1 ? "" : "s");
    else
      g_string_append(text, ", never paid back at this speed.");
  } else {
    g_string_append(text, " It was traced before: no trace cost here.");
  }
  gtk_inscription_set_markup(self->compare_summary, text->str);
  gtk_widget_set_tooltip_markup(GTK_WIDGET(self->compare_summary), text->str);
  g_string_free(text, TRUE);
}

void ts_profiler_panel_set_compare(TsProfilerPanel *self, tsp_session *session, tsp_compare *compare)
{
  g_return_if_fail(TS_IS_PROFILER_PANEL(self));
  g_list_store_remove_all(self->compare_rows);
  g_clear_pointer(&self->compare, tsp_compare_free);
  g_clear_pointer(&self->compare_session, tsp_session_free);
  self->compare_session = session;
  self->compare = compare;
  self->compare_max = 0;
  gtk_stack_set_visible_child_name(self->compare_stack, compare ? "table" : "empty");
  if (!compare)
    return;
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
  gboolean on_device = FALSE; /* a time that is not the host's */
  for (int i = 0; i < compare->n_rows; i++) {
    const tsp_compare_row *c = &compare->rows[i];
    g_ptr_array_add(rows, row_of_compare(c));
    self->compare_max = MAX(self->compare_max, MAX(c->eager_ns, c->graph_ns));
    on_device |= c->eager_host_ns != c->eager_ns || c->graph_host_ns != c->graph_ns;
  }
  show_device_columns(self->compare_view, COMPARE_COLUMNS, on_device);
  g_list_store_splice(self->compare_rows, 0, 0, rows->pdata, rows->len);
  update_compare_summary(self);
  gtk_stack_set_visible_child_name(self->stack, "compare");
}

const tsp_compare *ts_profiler_panel_get_compare(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), NULL);
  return self->compare;
}

guint ts_profiler_panel_get_n_compare_rows(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), 0);
  return g_list_model_get_n_items(G_LIST_MODEL(self->compare_rows));
}

guint ts_profiler_panel_get_compare_calls(TsProfilerPanel *self)
{
  g_return_val_if_fail(TS_IS_PROFILER_PANEL(self), 1);
  return (guint)MAX(1, gtk_spin_button_get_value_as_int(self->calls_spin));
}

/* ---- life cycle ------------------------------------------------------------------------------ */

static void ts_profiler_panel_dispose(GObject *object)
{
  TsProfilerPanel *self = TS_PROFILER_PANEL(object);
  if (self->stats_cancellable)
    g_cancellable_cancel(self->stats_cancellable);
  g_clear_object(&self->stats_cancellable);
  if (self->fit_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self->stats_view), self->fit_id);
  self->fit_id = 0; /* no notify: going */
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_PROFILER_PANEL);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->rows);
  g_clear_object(&self->compare_rows);
  g_clear_object(&self->selection);
  G_OBJECT_CLASS(ts_profiler_panel_parent_class)->dispose(object);
}

static void ts_profiler_panel_finalize(GObject *object)
{
  TsProfilerPanel *self = TS_PROFILER_PANEL(object);
  shared_unref(self->shared);
  g_ptr_array_unref(self->runs);
  shared_unref(self->baseline);
  g_free(self->baseline_label);
  g_free(self->device);
  tsp_stats_free(self->node_stats);
  tsp_compare_free(self->compare);
  tsp_session_free(self->compare_session);
  g_free(self->label);
  for (guint i = 0; i < G_N_ELEMENTS(self->node_keys); i++)
    g_free(self->node_keys[i]);
  G_OBJECT_CLASS(ts_profiler_panel_parent_class)->finalize(object);
}

static void ts_profiler_panel_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_BUSY: g_value_set_boolean(value, ts_profiler_panel_get_busy(TS_PROFILER_PANEL(object))); break;
  case PROP_FITTING: g_value_set_boolean(value, ts_profiler_panel_get_fitting(TS_PROFILER_PANEL(object))); break;
  case PROP_DEVICE: g_value_set_string(value, TS_PROFILER_PANEL(object)->device); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_profiler_panel_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_DEVICE: ts_profiler_panel_set_device(TS_PROFILER_PANEL(object), g_value_get_string(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_profiler_panel_class_init(TsProfilerPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_profiler_panel_dispose;
  object_class->finalize = ts_profiler_panel_finalize;
  object_class->get_property = ts_profiler_panel_get_property;
  object_class->set_property = ts_profiler_panel_set_property;
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FITTING] = g_param_spec_boolean("fitting", NULL, NULL, FALSE,
                                                  G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* the device Compare CPU vs runs on (NULL: the CPU); the window's template binds it to the workspace's */
  properties[PROP_DEVICE] = g_param_spec_string("device", NULL, NULL, NULL,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  signals[SIGNAL_SESSION_READY] = g_signal_new("session-ready", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_NODE_SELECTED] = g_signal_new("node-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  g_type_ensure(TS_TYPE_TIMELINE);
  g_type_ensure(TS_TYPE_CALL_TREE);
  g_type_ensure(TS_TYPE_DIFF_TABLE);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-profiler-panel.ui");
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, stack);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, stats_stack);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, compare_stack);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, group_dropdown);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, filter_entry);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, summary_label);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, timeline);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, call_tree);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, diff_table);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, run_dropdown);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, run_names);
  gtk_widget_class_bind_template_callback(widget_class, on_run_selected);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, compare_summary);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, calls_spin);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, compare_button);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, devices_button);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, page_controls);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, stats_view);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, stats_scroll);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, compare_view);
  gtk_widget_class_bind_template_callback(widget_class, on_group_selected);
  gtk_widget_class_bind_template_callback(widget_class, on_filter_changed);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, timeline_page);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, timeline_search_revealer);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, timeline_search_entry);
  gtk_widget_class_bind_template_child(widget_class, TsProfilerPanel, timeline_search_status);
  gtk_widget_class_bind_template_callback(widget_class, on_timeline_search_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_timeline_search_next);
  gtk_widget_class_bind_template_callback(widget_class, on_timeline_search_previous);
  gtk_widget_class_bind_template_callback(widget_class, on_timeline_search_stop);
  gtk_widget_class_install_action(widget_class, "profiler.find", NULL, action_timeline_find);
  gtk_widget_class_install_action(widget_class, "profiler.find-next", NULL, action_timeline_find_step);
  gtk_widget_class_install_action(widget_class, "profiler.find-previous", NULL, action_timeline_find_step);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsprofilerpanel");
}

/* A span clicked in the timeline: its node, as a row selected would. */
static void on_span_selected(TsTimeline *timeline, gpointer event, guint node, TsProfilerPanel *self)
{
  const tsp_node_info *info = self->shared ? tsp_session_node(self->shared->session, node) : NULL;
  if (info)
    g_signal_emit(self, signals[SIGNAL_NODE_SELECTED], 0, info->name);
}

/* A range dragged in the timeline: the table is of that range. */
static void on_range_selected(TsTimeline *timeline, guint64 from_ns, guint64 to_ns, TsProfilerPanel *self)
{
  self->range_from = from_ns;
  self->range_to = to_ns > from_ns ? to_ns : 0;
  refill(self, FALSE);
}

static void ts_profiler_panel_init(TsProfilerPanel *self)
{
  self->runs = g_ptr_array_new_with_free_func(run_entry_free);
  self->run = G_MAXUINT;
  gtk_widget_init_template(GTK_WIDGET(self));
  g_signal_connect_swapped(self->stack, "notify::visible-child-name", G_CALLBACK(update_toolbar), self);
  update_toolbar(self);
  g_signal_connect(self->timeline, "span-selected", G_CALLBACK(on_span_selected), self);
  g_signal_connect(self->timeline, "range-selected", G_CALLBACK(on_range_selected), self);
  add_timeline_search_keys(self);
  self->rows = g_list_store_new(TS_TYPE_PROFILE_ROW);
  self->compare_rows = g_list_store_new(TS_TYPE_PROFILE_ROW);

  add_columns(self, self->stats_view, STAT_COLUMNS, G_N_ELEMENTS(STAT_COLUMNS));
  g_signal_connect(gtk_scrolled_window_get_hadjustment(self->stats_scroll), "notify::page-size",
                   G_CALLBACK(on_stats_width), self);
  g_signal_connect_swapped(self->stats_view, "map", G_CALLBACK(refit_stat_columns), self);
  g_signal_connect_swapped(self->stats_view, "unmap", G_CALLBACK(stop_fitting), self);
  show_device_columns(self->stats_view, STAT_COLUMNS, FALSE);
  self->filter = gtk_custom_filter_new(keep_row, self, NULL);
  GtkFilterListModel *filtered = gtk_filter_list_model_new(G_LIST_MODEL(g_object_ref(self->rows)), GTK_FILTER(self->filter));
  GtkSortListModel *sorted = gtk_sort_list_model_new(G_LIST_MODEL(filtered),
                                                     g_object_ref(gtk_column_view_get_sorter(self->stats_view)));
  self->selection = gtk_single_selection_new(G_LIST_MODEL(sorted));
  gtk_single_selection_set_autoselect(self->selection, FALSE);
  gtk_single_selection_set_can_unselect(self->selection, TRUE);
  gtk_column_view_set_model(self->stats_view, GTK_SELECTION_MODEL(self->selection));
  g_signal_connect_swapped(self->selection, "notify::selected-item", G_CALLBACK(on_selection_changed), self);
  g_signal_connect_swapped(self->selection, "items-changed", G_CALLBACK(on_stats_rows_changed), self);
  GListModel *stat_columns = gtk_column_view_get_columns(self->stats_view);
  g_autoptr(GtkColumnViewColumn) total = g_list_model_get_item(stat_columns, STAT_SORT_COLUMN);
  gtk_column_view_sort_by_column(self->stats_view, total, GTK_SORT_DESCENDING);

  add_columns(self, self->compare_view, COMPARE_COLUMNS, G_N_ELEMENTS(COMPARE_COLUMNS));
  show_device_columns(self->compare_view, COMPARE_COLUMNS, FALSE);
  GtkSortListModel *compare_sorted = gtk_sort_list_model_new(G_LIST_MODEL(g_object_ref(self->compare_rows)),
                                                             g_object_ref(gtk_column_view_get_sorter(self->compare_view)));
  GtkNoSelection *none = gtk_no_selection_new(G_LIST_MODEL(compare_sorted));
  gtk_column_view_set_model(self->compare_view, GTK_SELECTION_MODEL(none));
  g_object_unref(none);
  refill(self, FALSE);
}
