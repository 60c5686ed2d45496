/* test-timeline.c — TsTimeline in a window (under Xvfb; skipped with no
 * display): zooming keeps the time under the pointer where it is, a
 * selected range is emitted and its statistics are that range's, a click
 * on a span emits it with its node, a search finds a span outside the view
 * and brings it in, select_node reveals a node's spans; a real recording of
 * a seed model (eager and graph, with memory) draws; the widget is freed
 * whole.  TS_TIMELINE_SCREENSHOT=file.png saves the real recording's frame,
 * TS_TIMELINE_LINKS_SCREENSHOT=file.png a graph call's launch links on SIM:0. */
#include <gtk/gtk.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <tracescope-profiler.h>
#include <tracescope.h>

#include "test-quiet.h"
#include "test-wait.h"
#include "ts-timeline-render.h"
#include "ts-timeline.h"

static bool have_display;

#define T0 1000000000ull /* the synthetic session starts at 1 s */
#define N_OPS 100

/* Thread "main": a call over 0-100 µs holding 100 ops of 500 ns, one a µs,
 * nodes dense_0 ... dense_99 (MatMul, or Add every third); thread "worker":
 * ten Relu ops.  Times from T0. */
typedef struct synth {
  tsp_session *s;
  const tsp_event *ops[N_OPS];
  uint32_t nodes[N_OPS];
} synth;

static void synth_init(synth *x)
{
  tsp_session *s = x->s = tsp_session_new_empty();
  int main_t = tsp_session_add_thread(s, "main", 1), worker = tsp_session_add_thread(s, "worker", 2);
  uint32_t loc = tsp_intern_loc(s, "/src/model.c", "model", 12);
  for (int i = 0; i < N_OPS; i++) {
    char name[32];
    g_snprintf(name, sizeof name, "dense_%d/MatMul", i);
    tsp_node_info info = { .name = name, .scope = "model", .shape = "f32[20,64]",
                           .op = i % 3 == 2 ? TS_OP_ADD : TS_OP_MATMUL };
    x->nodes[i] = tsp_add_node(s, &info);
    tsp_event e = { .start_ns = T0 + 1000 * (uint64_t)(i + 1), .end_ns = T0 + 1000 * (uint64_t)(i + 1) + 500,
                    .run_id = 1, .seq = (uint32_t)i + 1, .node = x->nodes[i], .loc = loc, .op = (uint16_t)info.op,
                    .kind = TSP_EVENT_OP };
    tsp_record_on(s, main_t, &e);
  }
  for (int i = 0; i < 10; i++) {
    tsp_event e = { .start_ns = T0 + 5000 * (uint64_t)i, .end_ns = T0 + 5000 * (uint64_t)i + 2000,
                    .op = TS_OP_RELU, .kind = TSP_EVENT_OP };
    tsp_record_on(s, worker, &e);
  }
  tsp_event call = { .start_ns = T0, .end_ns = T0 + 102000, .run_id = 1,
                     .node = tsp_intern_string(s, "model"), .op = TSP_MODE_GRAPH, .kind = TSP_EVENT_CALL };
  tsp_record_on(s, main_t, &call);
  tsp_iter it;
  tsp_iter_init(&it, s, main_t);
  for (int i = 0; i < N_OPS; i++)
    x->ops[i] = tsp_iter_next(&it);
}

typedef struct fixture {
  synth x;
  GtkWindow *window;
  TsTimeline *view;
  int n_spans, n_ranges;
  const tsp_event *last_event;
  guint last_node;
  guint64 from, to;
  int want_width; /* waited for: the timeline's width after a resize */
} fixture;

static void on_span_selected(TsTimeline *view, gpointer event, guint node, fixture *f)
{
  f->n_spans++;
  f->last_event = event;
  f->last_node = node;
}

static void on_range_selected(TsTimeline *view, guint64 from, guint64 to, fixture *f)
{
  f->n_ranges++;
  f->from = from;
  f->to = to;
}

static gboolean allocated(gpointer data)
{
  return gtk_widget_get_width(data) > 400 && gtk_widget_get_mapped(data);
}

static void fixture_show(fixture *f, const tsp_session *s, int width, int height)
{
  f->window = GTK_WINDOW(gtk_window_new());
  gtk_window_set_default_size(f->window, width, height);
  f->view = TS_TIMELINE(ts_timeline_new());
  g_object_ref(f->view);
  g_signal_connect(f->view, "span-selected", G_CALLBACK(on_span_selected), f);
  g_signal_connect(f->view, "range-selected", G_CALLBACK(on_range_selected), f);
  gtk_window_set_child(f->window, GTK_WIDGET(f->view));
  ts_timeline_set_session(f->view, s);
  gtk_window_present(f->window);
  test_wait_for(allocated, f->view, "the timeline to be shown");
}

/* The synthetic session in a window width x height; false (the test
 * skipped) without a display. */
static bool fixture_synth(fixture *f, int width, int height)
{
  if (!have_display) {
    g_test_skip("no display");
    return false;
  }
  synth_init(&f->x);
  fixture_show(f, f->x.s, width, height);
  return true;
}

static void fixture_free(fixture *f)
{
  gtk_window_destroy(f->window);
  g_assert_finalize_object(f->view);
  if (f->x.s)
    tsp_session_free(f->x.s);
}

static void action(fixture *f, const char *name, double a, double b)
{
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f->view), name, "(dd)", a, b));
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_zoom_keeps_pointer(void)
{
  fixture f = { 0 };
  if (!fixture_synth(&f, 1000, 400))
    return;
  /* fitted: the whole session in view */
  g_assert_cmpfloat(ts_timeline_time_at(f.view, TS_TIMELINE_GUTTER), <=, T0);
  g_assert_cmpfloat(ts_timeline_time_at(f.view, gtk_widget_get_width(GTK_WIDGET(f.view))), >=, T0 + 102000);
  const double xs[] = { 300, 777.5, TS_TIMELINE_GUTTER + 1 };
  const double factors[] = { 4, 2.5, 0.5 };
  for (size_t i = 0; i < G_N_ELEMENTS(xs); i++) {
    double t = ts_timeline_time_at(f.view, xs[i]), r = ts_timeline_get_ns_per_px(f.view);
    action(&f, "timeline.zoom-at", xs[i], factors[i]);
    g_assert_cmpfloat(fabs(ts_timeline_get_ns_per_px(f.view) - r / factors[i]), <, 1e-9 * r);
    g_assert_cmpfloat(fabs(ts_timeline_time_at(f.view, xs[i]) - t), <, 1e-3);
  }
  /* keys zoom too; 0 fits again */
  double r = ts_timeline_get_ns_per_px(f.view);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "timeline.zoom-in", NULL));
  g_assert_cmpfloat(ts_timeline_get_ns_per_px(f.view), <, r);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "timeline.zoom-fit", NULL));
  g_assert_cmpfloat(ts_timeline_time_at(f.view, TS_TIMELINE_GUTTER), <=, T0);
  fixture_free(&f);
}

static gboolean width_is(gpointer data)
{
  fixture *f = data;
  return gtk_widget_get_width(GTK_WIDGET(f->view)) == f->want_width;
}

/* The whole recording stays in view as the window is resized, until the
 * user zooms or pans; then the view is theirs. */
static void test_fit_follows_width(void)
{
  fixture f = { 0 };
  if (!fixture_synth(&f, 700, 300))
    return;
  const int widths[] = { 1100, 800 };
  for (size_t i = 0; i < G_N_ELEMENTS(widths); i++) {
    gtk_window_set_default_size(f.window, widths[i], 300);
    f.want_width = widths[i];
    test_wait_for(width_is, &f, "the window's new width");
    g_assert_cmpfloat(ts_timeline_time_at(f.view, TS_TIMELINE_GUTTER), <=, T0);
    g_assert_cmpfloat(ts_timeline_time_at(f.view, widths[i]), >=, T0 + 102000);
    g_assert_cmpfloat(ts_timeline_time_at(f.view, widths[i]), <=, T0 + 102000 * 1.05); /* fitted, not just covered */
  }
  action(&f, "timeline.zoom-at", 400, 4);
  double r = ts_timeline_get_ns_per_px(f.view);
  gtk_window_set_default_size(f.window, 1000, 300);
  f.want_width = 1000;
  test_wait_for(width_is, &f, "the window's new width");
  g_assert_cmpfloat(ts_timeline_get_ns_per_px(f.view), ==, r);
  fixture_free(&f);
}

static void test_range_statistics(void)
{
  fixture f = { 0 };
  if (!fixture_synth(&f, 1000, 400))
    return;
  double x0 = ts_timeline_x_at(f.view, T0 + 20000), x1 = ts_timeline_x_at(f.view, T0 + 40000);
  action(&f, "timeline.select-range", x1, x0); /* dragged right to left */
  g_assert_cmpint(f.n_ranges, ==, 1);
  double r = ts_timeline_get_ns_per_px(f.view);
  g_assert_cmpfloat(fabs((double)f.from - (T0 + 20000)), <=, r);
  g_assert_cmpfloat(fabs((double)f.to - (T0 + 40000)), <=, r);
  guint64 from, to;
  g_assert_true(ts_timeline_get_range(f.view, &from, &to));
  g_assert_cmpuint(from, ==, f.from);
  g_assert_cmpuint(to, ==, f.to);
  /* the range's statistics: the ops starting in it */
  tsp_filter window = { TSP_MODE_ALL, f.from, f.to };
  tsp_stats *st = tsp_stats_compute(f.x.s, TSP_BY_OP, &window);
  uint64_t want = 0;
  double want_ns = 0;
  for (int t = 0; t < 2; t++) {
    tsp_iter it;
    tsp_iter_init(&it, f.x.s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && e->start_ns >= f.from && e->start_ns < f.to)
        want++, want_ns += (double)(e->end_ns - e->start_ns);
  }
  g_assert_cmpuint(want, >=, 20);
  g_assert_cmpuint(st->count, ==, want);
  double total = 0;
  for (int i = 0; i < st->n; i++)
    total += st->rows[i].total_ns;
  g_assert_cmpfloat(total, ==, want_ns);
  tsp_stats_free(st);
  /* Escape clears it */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "timeline.unselect", NULL));
  g_assert_false(ts_timeline_get_range(f.view, &from, &to));
  fixture_free(&f);
}

static void test_click_selects(void)
{
  fixture f = { 0 };
  if (!fixture_synth(&f, 1200, 400))
    return;
  for (int i = 10; i < N_OPS; i += 37) {
    graphene_rect_t area;
    g_assert_true(ts_timeline_get_span_area(f.view, f.x.ops[i], &area));
    action(&f, "timeline.click-at", area.origin.x + area.size.width / 2, area.origin.y + area.size.height / 2);
    g_assert_true(f.last_event == f.x.ops[i]);
    g_assert_cmpuint(f.last_node, ==, f.x.nodes[i]);
    g_assert_true(ts_timeline_get_selected(f.view) == f.x.ops[i]);
  }
  /* the call, one row up: no node */
  graphene_rect_t area;
  g_assert_true(ts_timeline_get_span_area(f.view, f.x.ops[50], &area));
  action(&f, "timeline.click-at", area.origin.x, area.origin.y - TS_TIMELINE_ROW / 2);
  g_assert_cmpint(f.last_event->kind, ==, TSP_EVENT_CALL);
  g_assert_cmpuint(f.last_node, ==, 0);
  /* nothing there: the selection is cleared */
  int n = f.n_spans;
  action(&f, "timeline.click-at", area.origin.x, gtk_widget_get_height(GTK_WIDGET(f.view)) - 2);
  g_assert_cmpint(f.n_spans, ==, n + 1);
  g_assert_null(f.last_event);
  fixture_free(&f);
}

static bool in_view(fixture *f, const tsp_event *e)
{
  double x0 = ts_timeline_x_at(f->view, (double)e->start_ns), x1 = ts_timeline_x_at(f->view, (double)e->end_ns);
  return x1 > TS_TIMELINE_GUTTER && x0 < gtk_widget_get_width(GTK_WIDGET(f->view));
}

static void test_search_outside_view(void)
{
  fixture f = { 0 };
  if (!fixture_synth(&f, 1000, 400))
    return;
  action(&f, "timeline.zoom-at", TS_TIMELINE_GUTTER, 20); /* the first few µs */
  g_assert_false(in_view(&f, f.x.ops[77]));
  g_assert_cmpint(ts_timeline_search(f.view, "DENSE_77/"), ==, 1);
  g_assert_true(ts_timeline_get_found(f.view) == f.x.ops[77]);
  g_assert_true(in_view(&f, f.x.ops[77]));
  /* several matches: next and previous wrap */
  g_assert_cmpint(ts_timeline_search(f.view, "dense_1"), ==, 11); /* 1, 10-19 */
  g_assert_true(ts_timeline_get_found(f.view) == f.x.ops[1]);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "timeline.search-previous", NULL));
  g_assert_true(ts_timeline_get_found(f.view) == f.x.ops[19]);
  g_assert_true(in_view(&f, f.x.ops[19]));
  g_assert_true(ts_timeline_search_next(f.view, FALSE));
  g_assert_true(ts_timeline_get_found(f.view) == f.x.ops[1]);
  g_assert_cmpint(ts_timeline_search(f.view, "no such op"), ==, 0);
  g_assert_null(ts_timeline_get_found(f.view));
  /* select_node brings a node's span into view */
  action(&f, "timeline.zoom-at", TS_TIMELINE_GUTTER, 4);
  g_assert_false(in_view(&f, f.x.ops[90]) && in_view(&f, f.x.ops[5]));
  const tsp_event *target = in_view(&f, f.x.ops[90]) ? f.x.ops[5] : f.x.ops[90];
  ts_timeline_select_node(f.view, target == f.x.ops[5] ? f.x.nodes[5] : f.x.nodes[90]);
  g_assert_true(in_view(&f, target));
  fixture_free(&f);
}

/* Ruler units, and what a tooltip says (no display needed). */
static void test_text(void)
{
  const struct {
    double ns;
    const char *text;
  } units[] = { { 0, "0 ns" }, { 830, "830 ns" }, { 1500, "1.5 µs" }, { 1250000, "1.25 ms" },
                { 20e6, "20 ms" }, { 2.5e9, "2.5 s" }, { 125e9, "125 s" } };
  for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
    char *t = ts_timeline_format_ns(units[i].ns);
    g_assert_cmpstr(t, ==, units[i].text);
    g_free(t);
  }
  synth x;
  synth_init(&x);
  tsp_lod *lod = tsp_lod_build(x.s);
  tsp_lod_span sp = { x.ops[10]->start_ns, x.ops[10]->end_ns, x.ops[10], 1, x.ops[10]->op, 1 };
  char *t = ts_timeline_describe(lod, &sp);
  g_assert_nonnull(strstr(t, "MatMul"));
  g_assert_nonnull(strstr(t, "dense_10/MatMul"));
  g_assert_nonnull(strstr(t, "500 ns"));
  g_assert_nonnull(strstr(t, "f32[20,64]"));
  g_assert_nonnull(strstr(t, "scope model"));
  g_assert_nonnull(strstr(t, "model.c:12 in model"));
  g_free(t);
  sp.count = 40; /* a summary */
  sp.busy = 0.5f;
  t = ts_timeline_describe(lod, &sp);
  g_assert_nonnull(strstr(t, "40 ops"));
  g_assert_nonnull(strstr(t, "50 % busy"));
  g_free(t);
  tsp_lod_free(lod);
  tsp_session_free(x.s);
}

/* The colour at (x, y) of an ARGB32 surface, as 0xRRGGBB. */
static guint32 pixel_at(cairo_surface_t *surface, double x, double y)
{
  cairo_surface_flush(surface);
  const guint8 *row = cairo_image_surface_get_data(surface) + (int)y * cairo_image_surface_get_stride(surface);
  return ((const guint32 *)(const void *)row)[(int)x] & 0xffffff;
}

/* Another tool's op names (the engine knows none of them) get colours by
 * name, not all the one grey of an unknown op: the same name the same
 * colour, different names different ones, and none an engine op's colour
 * (drawn after them: a span of every op the engine has). */
static void test_foreign_colours(void)
{
  const char *foreign[] = { "aten::addmm", "aten::relu", "aten::addmm" };
  int n = G_N_ELEMENTS(foreign) + TS_OP_COUNT;
  GString *json = g_string_new("[");
  for (int i = 0; i < n; i++)
    g_string_append_printf(json, "%s{\"ph\":\"X\",\"name\":\"%s\",\"tid\":1,\"ts\":%d,\"dur\":100}", i ? "," : "",
                           i < (int)G_N_ELEMENTS(foreign) ? foreign[i] : ts_op_name(i - (int)G_N_ELEMENTS(foreign)),
                           i * 100);
  g_string_append(json, "]");
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json->str, json->len, &error);
  g_assert_no_error(error);
  g_string_free(json, TRUE);
  tsp_lod *lod = tsp_lod_build(s);
  ts_timeline_view v = { .lod = lod, .width = TS_TIMELINE_GUTTER + 20 * n, .height = 200 };
  v.ns_per_px = 5e3; /* a span 20 px */
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, v.width, v.height);
  cairo_t *cr = cairo_create(surface);
  ts_timeline_render(cr, &v);
  double y = ts_timeline_row_y(&v, 0, 0) + 4;
  g_autofree guint32 *c = g_new(guint32, n);
  for (int i = 0; i < n; i++)
    c[i] = pixel_at(surface, ts_timeline_x_of(&v, i * 100e3) + 3, y);
  g_assert_cmphex(c[0], ==, c[2]);
  g_assert_cmphex(c[0], !=, c[1]);
  for (int op = 0; op < TS_OP_COUNT; op++) {
    guint32 engine = c[G_N_ELEMENTS(foreign) + op];
    if (engine == c[0] || engine == c[1])
      g_error("a foreign name has %s's colour %06x", ts_op_name(op), engine);
  }
  g_assert_cmphex(c[G_N_ELEMENTS(foreign) + TS_OP_ADD], !=, c[G_N_ELEMENTS(foreign) + TS_OP_MATMUL]);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* The ruler's labels are whole or not there: at any width, the one a
 * tick near the right edge would start is left out rather than cut
 * ("3500 µs" read "35"), so no label's ink reaches the last columns. */
static void test_ruler_labels_whole(void)
{
  synth x;
  synth_init(&x);
  tsp_lod *lod = tsp_lod_build(x.s);
  g_autoptr(GString) cut = g_string_new(NULL);
  for (int width = 300; width < 420; width++) {
    ts_timeline_view v = { .lod = lod, .width = width, .height = 60, .ns_per_px = 10 };
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, v.width, v.height);
    cairo_t *cr = cairo_create(surface);
    ts_timeline_render(cr, &v);
    guint32 back = pixel_at(surface, 2, 2); /* the ruler's background */
    for (int y = 0; y < TS_TIMELINE_RULER - 9; y++) /* the labels' rows, above the tick lines */
      for (int col = width - 2; col < width; col++)
        if (pixel_at(surface, col, y) != back) {
          g_string_append_printf(cut, "width %d: ink at (%d, %d)\n", width, col, y);
          y = (int)TS_TIMELINE_RULER;
          break;
        }
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
  tsp_lod_free(lod);
  tsp_session_free(x.s);
  if (cut->len)
    g_error("ruler labels cut at the right edge:\n%s", cut->str);
}

/* ---- a real recording ------------------------------------------------------------------------ */

static gboolean drawn_once(gpointer data)
{
  return *(int *)data > 0;
}

static void on_frame_drawn(GdkFrameClock *clock, int *frames)
{
  (*frames)++;
}

static void save_png(GtkWidget *w, const char *path)
{
  int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
  /* the widget's own snapshot, as GTK takes it for a frame */
  GtkSnapshot *snap = gtk_snapshot_new();
  GTK_WIDGET_GET_CLASS(w)->snapshot(w, snap);
  GskRenderNode *node = gtk_snapshot_free_to_node(snap);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surface);
  if (node)
    gsk_render_node_draw(node, cr);
  cairo_destroy(cr);
  g_assert_cmpint(cairo_surface_write_to_png(surface, path), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy(surface);
  g_clear_pointer(&node, gsk_render_node_unref);
}

/* The text of every span at depth d of track t, one line each. */
static char *depth_text(const tsp_lod *lod, int t, int d)
{
  uint64_t first, last;
  tsp_lod_range(lod, &first, &last);
  GArray *buf = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  tsp_lod_query(lod, t, d, first, last + 1, 1, buf);
  GString *text = g_string_new(NULL);
  for (guint i = 0; i < buf->len; i++) {
    char *one = ts_timeline_describe(lod, &g_array_index(buf, tsp_lod_span, i));
    g_string_append_printf(text, "%s\n", one);
    g_free(one);
  }
  g_array_unref(buf);
  return g_string_free(text, FALSE);
}

/* The first graph call of each function is explained on a track of its
 * own: its trace, holding the optimizer's passes and the plan, which
 * holds the kernel choice. */
static void assert_phase_track(const tsp_session *s, const tsp_lod *lod)
{
  int t = -1;
  for (int i = 0; i < tsp_session_n_threads(s); i++)
    if (g_str_equal(tsp_session_thread(s, i)->name, TSP_PHASE_TRACK))
      t = i;
  g_assert_cmpint(t, >, 0); /* below the thread that traced */
  g_assert_cmpint(tsp_lod_n_depths(lod, t), >=, 3);
  g_autofree char *traces = depth_text(lod, t, 0);
  g_assert_nonnull(strstr(traces, "trace sequential_model: (x: f32[20,28,28])"));
  g_assert_nonnull(strstr(traces, "trace sum_even"));
  g_autofree char *steps = depth_text(lod, t, 1);
  g_assert_nonnull(strstr(steps, "optimize"));
  g_assert_nonnull(strstr(steps, "plan"));
  g_autofree char *inner = depth_text(lod, t, 2);
  g_assert_nonnull(strstr(inner, "pass fuse: fused "));
  g_assert_nonnull(strstr(inner, "tune kernels"));
}

/* The recorded events of a thread, in order (borrowed). */
static int thread_events(const tsp_session *s, int thread, const tsp_event **out, int max)
{
  tsp_iter it;
  tsp_iter_init(&it, s, thread);
  int n = 0;
  for (const tsp_event *e; n < max && (e = tsp_iter_next(&it));)
    out[n++] = e;
  return n;
}

static int links_of(ts_timeline_view *v, int track, const tsp_event *e, GArray *links)
{
  v->selected = (ts_timeline_mark){ e, track, tsp_lod_depth_of(v->lod, track, e) };
  g_array_set_size(links, 0);
  return ts_timeline_launch_links(v, links);
}

/* Launch links: a selected op links to each span its device ran for it (a
 * kernel, a copy: same run, same sequence number) on the stream's track,
 * a selected device span to its op; from the op span's foot down to the
 * device span's head; none for device work out of view, an uncharged copy
 * or a call. */
static void test_launch_links(void)
{
  tsp_session *s = tsp_session_new_empty();
  int host = tsp_session_add_thread(s, "main", 1), stream = tsp_session_add_thread(s, "SIM:0 stream", 2);
  uint8_t dev = tsp_intern_device(s, "SIM:0");
  const struct { int thread; uint64_t start, end, run; uint32_t seq; uint8_t kind; uint16_t op; } spec[] = {
    { host, 0, 9500, 1, 0, TSP_EVENT_CALL, TSP_MODE_EAGER },
    { host, 1000, 1500, 1, 1, TSP_EVENT_OP, TS_OP_MATMUL },      /* A: two kernels */
    { host, 2000, 2500, 1, 2, TSP_EVENT_OP, TS_OP_RELU },        /* B: a copy */
    { host, 2600, 2700, 2, 1, TSP_EVENT_OP, TS_OP_ADD },         /* C: a kernel at 9 µs */
    { stream, 3000, 3400, 1, 1, TSP_EVENT_DEVICE, TS_OP_MATMUL },
    { stream, 3500, 3600, 1, 1, TSP_EVENT_DEVICE, TS_OP_MATMUL },
    { stream, 4000, 4100, 1, 2, TSP_EVENT_DEVICE, TSP_OP_OTHER },
    { stream, 4200, 4300, 0, 0, TSP_EVENT_DEVICE, TSP_OP_OTHER }, /* a copy of no op's */
    { stream, 9000, 9100, 2, 1, TSP_EVENT_DEVICE, TS_OP_ADD },
    { host, 5000, 5000, 3, 1, TSP_EVENT_OP, TS_OP_MUL },         /* D, E: instants at one time, */
    { host, 5000, 5000, 3, 2, TSP_EVENT_OP, TS_OP_SUB },         /* as a replayed graph's ops */
    { stream, 6000, 6100, 3, 1, TSP_EVENT_DEVICE, TS_OP_MUL },
    { stream, 6500, 6600, 3, 2, TSP_EVENT_DEVICE, TS_OP_SUB },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(spec); i++) {
    tsp_event e = { .start_ns = T0 + spec[i].start, .end_ns = T0 + spec[i].end, .run_id = spec[i].run,
                    .seq = spec[i].seq, .kind = spec[i].kind, .op = spec[i].op, .device = dev };
    tsp_record_on(s, spec[i].thread, &e);
  }
  const tsp_event *h[6], *d[7];
  g_assert_cmpint(thread_events(s, host, h, 6), ==, 6);
  g_assert_cmpint(thread_events(s, stream, d, 7), ==, 7);
  const tsp_event *call = NULL, *a = NULL, *b = NULL, *c = NULL, *de[2] = { NULL, NULL };
  for (int i = 0; i < 6; i++) {
    const tsp_event *e = h[i];
    if (e->kind == TSP_EVENT_CALL)
      call = e;
    else if (e->run_id == 3)
      de[e->seq - 1] = e;
    else
      *(e->seq == 2 ? &b : e->run_id == 2 ? &c : &a) = e;
  }
  tsp_lod *lod = tsp_lod_build(s);
  /* 10 ns a pixel from T0: 800 px show 8 µs, C's kernel beyond */
  ts_timeline_view v = { .lod = lod, .start_ns = T0, .ns_per_px = 10, .width = 800, .height = 300 };
  GArray *links = g_array_new(FALSE, FALSE, sizeof(ts_timeline_link));
  g_assert_cmpint(links_of(&v, host, a, links), ==, 2);
  for (guint i = 0; i < 2; i++) {
    const ts_timeline_link *l = &g_array_index(links, ts_timeline_link, i);
    g_assert_true(l->op == a && l->device == d[i]);
    g_assert_cmpfloat(l->x0, ==, ts_timeline_x_of(&v, (double)a->start_ns) + 2);
    g_assert_cmpfloat(l->x1, ==, ts_timeline_x_of(&v, (double)d[i]->start_ns) + 2);
    g_assert_cmpfloat(l->y1, >, l->y0); /* down to the stream's track */
    g_assert_cmpfloat(l->y1, >=, ts_timeline_row_y(&v, stream, 0));
  }
  g_assert_cmpint(links_of(&v, stream, d[2], links), ==, 1); /* the copy, from B */
  g_assert_true(g_array_index(links, ts_timeline_link, 0).op == b);
  g_assert_true(g_array_index(links, ts_timeline_link, 0).device == d[2]);
  /* instants at one time: each kernel finds its own op, each op its own kernel */
  for (int k = 0; k < 2; k++) {
    const tsp_event *kernel = d[5 + k]; /* recorded after C's */
    g_assert_cmpint(links_of(&v, stream, kernel, links), ==, 1);
    g_assert_true(g_array_index(links, ts_timeline_link, 0).op == de[k]);
    g_assert_cmpint(links_of(&v, host, de[k], links), ==, 1);
    g_assert_true(g_array_index(links, ts_timeline_link, 0).device == kernel);
  }
  g_assert_cmpint(links_of(&v, host, c, links), ==, 0); /* its kernel is out of view */
  v.width = 1000;
  g_assert_cmpint(links_of(&v, host, c, links), ==, 1);
  g_assert_cmpint(links_of(&v, stream, d[3], links), ==, 0); /* no op's */
  g_assert_cmpint(links_of(&v, host, call, links), ==, 0);
  /* and drawn: the frame renders with a selection that has links */
  links_of(&v, host, a, links);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, v.width, v.height);
  cairo_t *cr = cairo_create(surface);
  ts_timeline_render(cr, &v);
  g_assert_cmpint(cairo_status(cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  g_array_unref(links);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

static ts_tensor *dense_relu(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  return ts_relu(ts_matmul(x, ts_transpose(x, TS_INTS(1, 0))));
}

/* A recording on SIM:0, eager and graph calls: each MatMul run there (a
 * _FusedMatMul in the graph) links
 * to its kernel on the "SIM:0 stream" track (the op's event and the
 * device's share the run and the sequence number, also for a replayed
 * graph's nodes). */
static void test_launch_links_recorded(void)
{
  const ts_backend *sim = ts_backend_by_name("SIM:0");
  if (!sim) {
    g_test_skip("no SIM:0 (TRACESCOPE_DEVICES=sim)");
    return;
  }
  ts_function *fn = ts_function_new("dense_relu", dense_relu, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(8, 8), -1, 1, 3));
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  for (int i = 0; i < 4; i++) {
    ts_scope *scope = ts_scope_begin();
    ts_run_functions_eagerly(i < 2);
    uint64_t t = tsp_call_begin(s);
    TS_DEVICE_SCOPE(sim) g_assert_nonnull(ts_function_call(fn, &arg, 1));
    tsp_call_end(s, t, "dense_relu", i < 2 ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
    ts_scope_end(scope);
  }
  ts_run_functions_eagerly(false);
  tsp_session_stop(s);
  tsp_lod *lod = tsp_lod_build(s);
  GArray *links = g_array_new(FALSE, FALSE, sizeof(ts_timeline_link));
  int matmuls = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      /* MatMul eagerly, _FusedMatMul (with its Relu) in the graph */
      if (e->kind != TSP_EVENT_OP || !g_str_has_suffix(tsp_event_op_name(s, e), "MatMul") ||
          strcmp(tsp_session_device(s, e->device), "SIM:0"))
        continue;
      matmuls++;
      /* 1 ns a pixel from the op on, to the end of the session */
      uint64_t from, to;
      tsp_lod_range(lod, &from, &to);
      ts_timeline_view v = { .lod = lod, .start_ns = (double)e->start_ns, .ns_per_px = 1,
                             .width = (int)MIN(to - e->start_ns + 1, INT_MAX), .height = 400 };
      g_assert_cmpint(links_of(&v, t, e, links), >=, 1);
      for (guint i = 0; i < links->len; i++) {
        const ts_timeline_link *l = &g_array_index(links, ts_timeline_link, i);
        g_assert_true(l->op == e);
        g_assert_cmpint(l->device->kind, ==, TSP_EVENT_DEVICE);
        g_assert_cmpint(l->device->run_id, ==, e->run_id);
        g_assert_cmpint(l->device->seq, ==, e->seq);
        g_assert_cmpfloat(l->y1, >, l->y0);
      }
    }
  }
  g_assert_cmpint(matmuls, ==, 4);
  const char *path = g_getenv("TS_TIMELINE_LINKS_SCREENSHOT");
  if (path && links->len) { /* the last graph call's links, 40 µs around them */
    const ts_timeline_link *l = &g_array_index(links, ts_timeline_link, 0);
    ts_timeline_view v = { .lod = lod, .start_ns = (double)l->op->start_ns - 10000, .ns_per_px = 40,
                           .width = 1000, .height = 260,
                           .selected = { l->op, 0, tsp_lod_depth_of(lod, 0, l->op) } };
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, v.width, v.height);
    cairo_t *cr = cairo_create(surface);
    ts_timeline_render(cr, &v);
    cairo_destroy(cr);
    g_assert_cmpint(cairo_surface_write_to_png(surface, path), ==, CAIRO_STATUS_SUCCESS);
    cairo_surface_destroy(surface);
  }
  g_array_unref(links);
  tsp_lod_free(lod);
  tsp_session_free(s);
  ts_function_free(fn);
}

static void test_real_recording(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  ts_module *m = ts_module_open("seeds");
  g_assert_nonnull(m);
  ts_function *fn = ts_module_lookup(m, "sequential_model");
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(20, 28, 28), 0, 1, 1);
  ts_value arg = TS_TENSOR_VALUE(x);
  tsp_session *s = tsp_session_new();
  tsp_session_add_collector(s, &tsp_memory_collector, NULL);
  GError *error = NULL;
  g_assert_true(tsp_session_start(s, &error));
  int quiet = test_quiet_begin();
  for (int i = 0; i < 4; i++) {
    ts_scope *scope = ts_scope_begin();
    bool eager = i % 2 == 1;
    ts_run_functions_eagerly(eager);
    uint64_t t = tsp_call_begin(s);
    g_assert_nonnull(ts_function_call(fn, &arg, 1));
    tsp_call_end(s, t, "sequential_model", eager ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
    ts_scope_end(scope);
  }
  /* and a loop with a branch inside: While > If > ops */
  ts_function *loop = ts_module_lookup(m, "sum_even");
  ts_value items;
  g_assert_true(ts_value_parse("i32[6]=10,12,15,20,3,8", &items));
  for (int i = 0; i < 3; i++) {
    ts_run_functions_eagerly(i == 2);
    uint64_t t = tsp_call_begin(s);
    g_assert_nonnull(ts_function_call(loop, &items, 1));
    tsp_call_end(s, t, "sum_even", i == 2 ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
  }
  ts_run_functions_eagerly(false);
  test_quiet_end(quiet);
  tsp_session_stop(s);

  fixture f = { 0 };
  fixture_show(&f, s, 1600, 560);
  const tsp_lod *lod = ts_timeline_get_lod(f.view);
  g_assert_cmpint(tsp_lod_n_depths(lod, 0), >=, 4); /* calls, While, If, the ops inside */
  /* tensors, and the arenas of the graph calls' memory plans: the first
   * arena allocated is sequential_model's, its plan's size */
  g_assert_cmpint(tsp_lod_n_memory(lod), ==, 2);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 0), ==, TS_MEMORY_TENSORS);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 1), ==, TS_MEMORY_ARENA);
  ts_memory_plan plan;
  g_assert_true(ts_concrete_memory_plan(ts_function_get_concrete(fn, &arg, 1), &plan));
  g_assert_cmpint(plan.peak_bytes, >, 0);
  g_autoptr(GArray) arena = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
  uint64_t from, to;
  tsp_lod_range(lod, &from, &to);
  g_assert_cmpint(tsp_lod_memory_query(lod, 1, from, to + 1, 1.0, arena), >, 0);
  g_assert_cmpint(g_array_index(arena, tsp_lod_level, 0).live_bytes, ==, plan.peak_bytes);
  g_assert_cmpint(tsp_lod_memory_peak(lod, 1), >=, plan.peak_bytes);
  int n_traces;
  tsp_lod_traces(lod, 0, &n_traces);
  g_assert_cmpint(n_traces, ==, 2); /* each function's first graph call traced */
  assert_phase_track(s, lod);
  int frames = 0;
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(f.view));
  gulong id = g_signal_connect(clock, "after-paint", G_CALLBACK(on_frame_drawn), &frames);
  gtk_widget_queue_draw(GTK_WIDGET(f.view));
  test_wait_for(drawn_once, &frames, "a frame");
  g_signal_handler_disconnect(clock, id);
  const char *path = g_getenv("TS_TIMELINE_SCREENSHOT");
  if (path) {
    ts_timeline_search(f.view, "dense_3/MatMul");
    ts_timeline_zoom_to_fit(f.view);
    graphene_rect_t area;
    /* select the second call (eager): its flows show */
    GArray *calls = tsp_lod_search(lod, "sequential_model");
    for (guint i = 0; i < calls->len; i++) {
      const tsp_lod_hit *h = &g_array_index(calls, tsp_lod_hit, i);
      if (h->event->kind == TSP_EVENT_CALL && h->event->op == TSP_MODE_EAGER &&
          ts_timeline_get_span_area(f.view, h->event, &area)) {
        action(&f, "timeline.click-at", area.origin.x + 2, area.origin.y + area.size.height / 2);
        break;
      }
    }
    g_array_unref(calls);
    save_png(GTK_WIDGET(f.view), path);
  }
  fixture_free(&f);
  tsp_session_free(s);
  ts_module_free(m);
  ts_release_all();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  have_display = gtk_init_check();
  if (have_display)
    g_object_set(gtk_settings_get_default(), "gtk-enable-animations", FALSE, NULL);
  g_test_add_func("/timeline/text", test_text);
  g_test_add_func("/timeline/foreign-colours", test_foreign_colours);
  g_test_add_func("/timeline/ruler-labels-whole", test_ruler_labels_whole);
  g_test_add_func("/timeline/zoom-keeps-pointer", test_zoom_keeps_pointer);
  g_test_add_func("/timeline/fit-follows-width", test_fit_follows_width);
  g_test_add_func("/timeline/range-statistics", test_range_statistics);
  g_test_add_func("/timeline/click-selects", test_click_selects);
  g_test_add_func("/timeline/search-outside-view", test_search_outside_view);
  g_test_add_func("/timeline/launch-links", test_launch_links);
  g_test_add_func("/timeline/launch-links-recorded", test_launch_links_recorded);
  g_test_add_func("/timeline/real-recording", test_real_recording);
  int ret = g_test_run();
  ts_release_all();
  return ret;
}
