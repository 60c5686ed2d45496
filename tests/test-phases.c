/* test-phases.c — phase events: tracing, each pass that runs, planning and
 * kernel tuning are reported as spans (PHASE_BEGIN/PHASE_END), nested on
 * the thread as they ran, once per trace and never on a call that reuses
 * its concrete function. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

typedef struct seen {
  gboolean end;
  ts_phase_event phase;
  char *name, *detail;
} seen;

static void clear_seen(gpointer p)
{
  seen *s = p;
  g_free(s->name);
  g_free(s->detail);
}

static void on_phase(const ts_event *ev, void *data)
{
  seen s = { .end = ev->kind == TS_EVENT_PHASE_END, .phase = ev->phase,
             .name = g_strdup(ev->phase.name), .detail = g_strdup(ev->phase.detail) };
  g_array_append_val((GArray *)data, s);
}

static GArray *listen_phases(int *id)
{
  GArray *a = g_array_new(FALSE, TRUE, sizeof(seen));
  g_array_set_clear_func(a, clear_seen);
  *id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PHASE_BEGIN) | TS_EVENT_MASK(TS_EVENT_PHASE_END),
                        on_phase, a);
  g_assert_cmpint(*id, >, 0);
  return a;
}

static ts_tensor *dense(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *w = ts_ones(TS_F32, TS_SHAPE(17, 19));
  return ts_relu(ts_add(ts_matmul(x, w), ts_scalar_f32(1.0f)));
}

/* Begins and ends pair up as a stack: each end closes the latest open
 * begin, with its kind, name, depth and start. */
static void assert_nested(GArray *a)
{
  g_autoptr(GPtrArray) open = g_ptr_array_new();
  for (guint i = 0; i < a->len; i++) {
    seen *s = &g_array_index(a, seen, i);
    if (!s->end) {
      g_assert_cmpint(s->phase.depth, ==, (int)open->len);
      g_assert_cmpuint(s->phase.end_ns, ==, 0);
      g_ptr_array_add(open, s);
      continue;
    }
    g_assert_cmpuint(open->len, >, 0);
    seen *b = g_ptr_array_steal_index(open, open->len - 1);
    g_assert_cmpint(s->phase.phase, ==, b->phase.phase);
    g_assert_cmpstr(s->name, ==, b->name);
    g_assert_cmpint(s->phase.depth, ==, b->phase.depth);
    g_assert_cmpuint(s->phase.start_ns, ==, b->phase.start_ns);
    g_assert_cmpuint(s->phase.end_ns, >=, s->phase.start_ns);
  }
  g_assert_cmpuint(open->len, ==, 0);
}

/* The index of the first begin of kind (and name, unless NULL) from i on; -1 if none. */
static int find_begin(GArray *a, guint from, ts_phase_kind kind, const char *name)
{
  for (guint i = from; i < a->len; i++) {
    seen *s = &g_array_index(a, seen, i);
    if (!s->end && s->phase.phase == kind && (!name || g_strcmp0(s->name, name) == 0))
      return (int)i;
  }
  return -1;
}

static void test_first_call(void)
{
  int id;
  GArray *a = listen_phases(&id);
  ts_function *fn = ts_function_new("dense", dense, "x");
  ts_scope *scope = ts_scope_begin();
  ts_value x = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(13, 17)));
  g_assert_nonnull(ts_function_call(fn, &x, 1));
  assert_nested(a);

  /* trace dense { optimize { pass ... } plan { tune kernels { tune matmul } } } */
  g_assert_cmpuint(a->len, >, 0);
  seen *first = &g_array_index(a, seen, 0), *last = &g_array_index(a, seen, a->len - 1);
  g_assert_cmpint(first->phase.phase, ==, TS_PHASE_TRACE);
  g_assert_cmpstr(first->name, ==, "dense");
  g_assert_true(last->end && last->phase.phase == TS_PHASE_TRACE);
  g_assert_cmpstr(last->detail, ==, "(x: f32[13,17])");

  int optimize = find_begin(a, 0, TS_PHASE_OPTIMIZE, "optimize");
  int plan = find_begin(a, 0, TS_PHASE_PLAN, "plan");
  g_assert_cmpint(optimize, >, 0);
  g_assert_cmpint(plan, >, optimize);
  g_assert_cmpint(g_array_index(a, seen, optimize).phase.depth, ==, 1);
  g_assert_cmpint(g_array_index(a, seen, plan).phase.depth, ==, 1);
  /* fuse ran (a MatMul with a bias and Relu): its span says what it did */
  int fuse = find_begin(a, optimize, TS_PHASE_PASS, "fuse");
  g_assert_cmpint(fuse, >, optimize);
  g_assert_cmpint(fuse, <, plan);
  g_assert_cmpint(g_array_index(a, seen, fuse).phase.depth, ==, 2);
  gboolean fuse_said = FALSE;
  for (guint i = (guint)fuse; i < a->len; i++) {
    seen *s = &g_array_index(a, seen, i);
    if (s->end && s->phase.phase == TS_PHASE_PASS && g_strcmp0(s->name, "fuse") == 0) {
      g_assert_true(g_str_has_prefix(s->detail, "fused "));
      fuse_said = TRUE;
      break;
    }
  }
  g_assert_true(fuse_said);
  /* the plan chose the product's kernel by measuring it, a shape new to the process */
  int kernels = find_begin(a, plan, TS_PHASE_TUNE, "kernels");
  g_assert_cmpint(kernels, >, plan);
  g_assert_cmpint(g_array_index(a, seen, kernels).phase.depth, ==, 2);
  int matmul = find_begin(a, kernels, TS_PHASE_TUNE, "matmul 13x17x19");
  g_assert_cmpint(matmul, >, kernels);
  g_assert_cmpint(g_array_index(a, seen, matmul).phase.depth, ==, 3);

  /* a call reusing the concrete function prepares nothing */
  g_array_set_size(a, 0);
  g_assert_nonnull(ts_function_call(fn, &x, 1));
  g_assert_cmpuint(a->len, ==, 0);
  /* a new shape traces again */
  ts_value y = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(3, 17)));
  g_assert_nonnull(ts_function_call(fn, &y, 1));
  g_assert_cmpint(find_begin(a, 0, TS_PHASE_TRACE, "dense"), ==, 0);
  assert_nested(a);

  ts_scope_end(scope);
  ts_listener_remove(id);
  g_array_unref(a);
  ts_function_free(fn);
}

/* A model's weights, made on its first trace (tf.function's singleton variables). */
static ts_tensor *weights;

static ts_tensor *dense_with_weights(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!weights)
    TS_INIT_SCOPE {
      weights = ts_variable_new(ts_ones(TS_F32, TS_SHAPE(17, 19)), "w");
    }
  return ts_relu(ts_matmul(x, ts_read(weights)));
}

static int count_begins(GArray *a, ts_phase_kind kind)
{
  int n = 0;
  for (int i = find_begin(a, 0, kind, NULL); i >= 0; i = find_begin(a, (guint)i + 1, kind, NULL))
    n++;
  return n;
}

/* A first trace that makes variables runs twice (tf.function), but only the
 * trace kept is optimized and planned. */
static void test_traced_twice_planned_once(void)
{
  int id;
  GArray *a = listen_phases(&id);
  ts_function *fn = ts_function_new("dense_with_weights", dense_with_weights, "x");
  ts_scope *scope = ts_scope_begin();
  ts_value x = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(13, 17)));
  g_assert_nonnull(ts_function_call(fn, &x, 1));
  assert_nested(a);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 2); /* tf.function's count: both traces */
  g_assert_cmpint(count_begins(a, TS_PHASE_TRACE), ==, 1);
  g_assert_cmpint(count_begins(a, TS_PHASE_OPTIMIZE), ==, 1);
  g_assert_cmpint(count_begins(a, TS_PHASE_PLAN), ==, 1);
  ts_scope_end(scope);
  ts_listener_remove(id);
  g_array_unref(a);
  ts_function_free(fn);
  g_clear_pointer(&weights, ts_tensor_unref);
}

/* The kinds' names, as tools show them. */
static void test_names(void)
{
  g_assert_cmpstr(ts_phase_kind_name(TS_PHASE_TRACE), ==, "trace");
  g_assert_cmpstr(ts_phase_kind_name(TS_PHASE_TUNE), ==, "tune");
  g_assert_cmpstr(ts_phase_kind_name(TS_PHASE_KIND_COUNT), ==, "?");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/phases/first-call", test_first_call);
  g_test_add_func("/phases/traced-twice-planned-once", test_traced_twice_planned_once);
  g_test_add_func("/phases/names", test_names);
  int status = g_test_run();
  ts_release_all();
  return status;
}
