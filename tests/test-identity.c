/* test-identity.c — an op has one identity across modes: every eager op
 * of each seed program maps to the graph node the same op became when the
 * function was traced, graph-mode events name the node they run, and
 * nodes with no eager twin (placeholders, lifted and folded constants,
 * implicit reads, loop counters) say so. */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"
#include <unistd.h>
#include "test-serial-check.h"

typedef struct seen {
  GPtrArray *events; /* ts_op_event copies (OP_END) */
} seen;

static void on_event(const ts_event *ev, void *data)
{
  seen *s = data;
  if (ev->kind == TS_EVENT_OP_END)
    g_ptr_array_add(s->events, g_memdup2(&ev->op, sizeof ev->op));
}

/* Every seed export with arguments that run in both modes. */
static const struct {
  const char *name;
  const char *args[3];
} cases[] = {
  { "simple_nn_layer", { "f32[3,3]:uniform", "f32[3,3]:uniform@2" } },
  { "linear_layer", { "i32[3]=-3,0,3" } },
  { "deep_net", { "i32[3]=1,2,3" } },
  { "function_to_get_faster", { "f32[1,2]=1,2", "f32[2,1]=2,3", "f32[]=4" } },
  { "get_MSE", { "i32[5]=1,4,3,1,3", "i32[5]=0,3,8,0,6" } },
  { "square_if_positive_vectorized", { "i32[4]=-2,-1,1,2" } },
  { "power", { "i32[10,10]:ones", "3" } },
  { "dense_chain", { "f32[2,4,4]:uniform", "3" } },
  { "conv_layer", { "f32[1,4,4,3]:uniform" } },
  { "outer_function", { "f32[1,2]=1,2" } },
  { "square_if_positive", { "i32[]=2" } },
  { "square_if_positive", { "i32[]=-2" } },
  { "sum_even", { "i32[4]=10,12,15,20" } },
  { "fizzbuzz", { "i32[]=6" } },
  { "my_function", { "i32[]=2" } },
  { "simple_relu", { "i32[]=-1" } },
  { "my_relu", { "f32[]=5.5" } },
  { "a_function_with_python_side_effect", { "i32[]=2" } },
  { "shape_retrace", { "f32[3]:ones" } },
  { "poly_func", { "i32[]=1" } },
  { "find_next_odd", { NULL } },
  { "side_effect", { NULL } },
  { "custom_model", { "i32[2]=1,2" } },
  { "square_if_positive_naive", { "i32[4]=-2,-1,1,2" } },
  { "sequential_model", { "f32[2,28,28]:uniform" } },
  { "lstm_fn", { "f32[10,10]:uniform", "f32[10,10]:uniform@2", "f32[10,10]:uniform@3" } },
  { "conv_fn", { "f32[1,5,5,100]:uniform" } },
};

/* Is the source line of loc a TS_INIT_SCOPE block? */
static bool in_init_scope(ts_loc loc)
{
  const char *base = strrchr(loc.file, '/');
  char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "data", "examples",
                                base ? base + 1 : loc.file, NULL);
  char *text = NULL;
  bool found = false;
  if (g_file_get_contents(path, &text, NULL, NULL)) {
    char **lines = g_strsplit(text, "\n", -1);
    found = loc.line > 0 && loc.line <= (int)g_strv_length(lines) &&
            strstr(lines[loc.line - 1], "TS_INIT_SCOPE");
    g_strfreev(lines);
  }
  g_free(text);
  g_free(path);
  return found;
}

/* Is n in g or one of its subgraphs? */
static bool graph_holds(const ts_graph *g, const ts_node *n)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *x = ts_graph_node(g, id);
    if (x == n)
      return true;
    for (int s = 0; s < ts_node_n_subgraphs(x); s++)
      if (graph_holds(ts_node_subgraph(x, s), n))
        return true;
  }
  return false;
}

static void check_twinless(const ts_graph *g)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    unsigned traits = ts_op_traits(ts_node_op(n));
    if (traits & (TS_OP_TRAIT_INPUT | TS_OP_TRAIT_VALUE | TS_OP_TRAIT_CONTROL_FLOW))
      g_assert_false(ts_node_has_eager_twin(n));
    g_assert_cmpint(ts_node_n_origins(n), ==, 1);
    g_assert_true(ts_node_origin(n, 0) == n); /* a traced node stands for itself */
    for (int s = 0; s < ts_node_n_subgraphs(n); s++)
      check_twinless(ts_node_subgraph(n, s));
  }
}

static void test_seeds_match(void)
{
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  seen s = { g_ptr_array_new_with_free_func(g_free) };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_event, &s);
  int matched_total = 0;
  int quiet = test_quiet_begin(); /* the seeds print */
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    ts_scope *scope = ts_scope_begin();
    ts_function *fn = ts_module_lookup(m, cases[c].name);
    g_assert_nonnull(fn);
    ts_value args[3];
    int n = 0;
    for (; n < 3 && cases[c].args[n]; n++)
      g_assert_true(ts_value_parse(cases[c].args[n], &args[n]));

    /* Graph mode first: the first call traces (and may run weights'
     * initialisers eagerly); on the second every op event names its node. */
    ts_run_functions_eagerly(false);
    ts_function_call(fn, args, n);
    g_ptr_array_set_size(s.events, 0);
    ts_function_call(fn, args, n);
    assert_no_error();
    const ts_concrete *cf = ts_function_get_concrete(fn, args, n);
    g_assert_nonnull(cf);
    g_assert_cmpint(ts_function_n_concrete(fn), ==, 1); /* found, not traced again */
    uint64_t run = 0;
    for (guint i = 0; i < s.events->len; i++) {
      const ts_op_event *e = s.events->pdata[i];
      g_assert_nonnull(e->node);
      g_assert_true(cf == e->concrete);
      g_assert_cmpuint(e->run_id, !=, 0);
      g_assert_true(!run || run == e->run_id); /* one call, one run */
      run = e->run_id;
      g_assert_cmpstr(e->device, ==, "CPU");
      if (e->traced) {
        g_assert_cmpint(ts_node_op(e->traced), ==, e->op);
        g_assert_true(graph_holds(ts_concrete_graph(cf), e->traced));
      }
      g_assert_true(e->parent == NULL || e->parent_seq != 0);
    }
    check_twinless(ts_concrete_graph(cf));

    /* Eagerly: every op the user's code called finds its twin. */
    ts_run_functions_eagerly(true);
    g_ptr_array_set_size(s.events, 0);
    ts_function_call(fn, args, n);
    assert_no_error();
    uint64_t eager_run = 0;
    for (guint i = 0; i < s.events->len; i++) {
      const ts_op_event *e = s.events->pdata[i];
      g_assert_null(e->node);
      g_assert_cmpuint(e->run_id, !=, 0);
      g_assert_cmpuint(e->run_id, !=, run);
      g_assert_true(!eager_run || eager_run == e->run_id);
      eager_run = e->run_id;
      g_assert_cmpuint(e->seq, >, 0);
      g_assert_true(e->concrete == cf);
      /* Cast from promotion included: the same dispatch runs in both modes.
       * Ops in a TS_INIT_SCOPE run eagerly while tracing too: no node. */
      if (!e->traced && in_init_scope(e->loc))
        continue;
      if (!e->traced)
        g_error("%s: eager %s at %s:%d has no twin in the graph", cases[c].name, e->op_name,
                e->loc.file, e->loc.line);
      g_assert_cmpint(ts_node_op(e->traced), ==, e->op);
      g_assert_true(ts_node_has_eager_twin(e->traced));
      g_assert_true(graph_holds(ts_concrete_graph(cf), e->traced));
      g_assert_cmpint(ts_node_loc(e->traced).line, ==, e->loc.line);
      matched_total++;
    }
    for (int k = 0; k < n; k++)
      ts_value_clear(&args[k]);
    ts_scope_end(scope);
  }
  test_quiet_end(quiet);
  ts_run_functions_eagerly(false);
  ts_listener_remove(id);
  g_ptr_array_unref(s.events);
  ts_module_free(m);
  g_assert_cmpint(matched_total, >, 500);
}

/* Sequence numbers count the ops of one run in start order. */
static void test_sequence(void)
{
  ts_module *m = ts_module_open("seeds");
  seen s = { g_ptr_array_new_with_free_func(g_free) };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_event, &s);
  ts_function *fn = ts_module_lookup(m, "deep_net");
  ts_value x;
  g_assert_true(ts_value_parse("i32[3]=1,2,3", &x));
  for (int eager = 0; eager < 2; eager++) {
    ts_run_functions_eagerly(eager);
    g_ptr_array_set_size(s.events, 0);
    ts_function_call(fn, &x, 1);
    assert_no_error();
    g_assert_cmpuint(s.events->len, >, 1);
    /* (the first graph call also traces: weights made eagerly then belong to no run) */
    uint64_t run = ((ts_op_event *)s.events->pdata[s.events->len - 1])->run_id, seq = 0;
    int in_run = 0;
    g_assert_cmpuint(run, !=, 0);
    for (guint i = 0; i < s.events->len; i++) {
      const ts_op_event *e = s.events->pdata[i];
      if (e->run_id != run)
        continue;
      g_assert_cmpuint(e->seq, ==, seq + 1); /* ends of sequential ops come in start order */
      seq = e->seq;
      in_run++;
    }
    g_assert_cmpint(in_run, >, 1);
  }
  /* An op outside any function call belongs to no run. */
  g_ptr_array_set_size(s.events, 0);
  ts_add(x.tensor, x.tensor);
  g_assert_cmpuint(s.events->len, ==, 1);
  g_assert_cmpuint(((ts_op_event *)s.events->pdata[0])->run_id, ==, 0);
  g_assert_null(((ts_op_event *)s.events->pdata[0])->traced);
  ts_run_functions_eagerly(false);
  ts_listener_remove(id);
  g_ptr_array_unref(s.events);
  ts_module_free(m);
}

/* The op watch follows the op started last, without events: eagerly its
 * source line, in graph mode also the node being run. */
static void test_op_watch(void)
{
  ts_module *m = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(m, "deep_net");
  ts_value x;
  g_assert_true(ts_value_parse("i32[3]=1,2,3", &x));
  ts_op_watch w = { 0 };
  ts_watch_ops(&w);
  for (int eager = 0; eager < 2; eager++) {
    ts_run_functions_eagerly(eager);
    w = (ts_op_watch){ 0 };
    g_assert_nonnull(ts_function_call(fn, &x, 1));
    assert_no_error();
    g_assert_cmpint(w.op, ==, TS_OP_RELU); /* deep_net's last op */
    g_assert_cmpuint(w.seq, >, 1);
    g_assert_nonnull(w.file);
    g_assert_true(g_str_has_suffix(w.file, "seeds.c"));
    g_assert_cmpint(w.line, >, 0);
    g_assert_cmpstr(w.func, ==, "deep_net");
    if (eager)
      g_assert_null(w.node);
    else
      g_assert_cmpint(ts_node_op(w.node), ==, TS_OP_RELU);
  }
  ts_watch_ops(NULL);
  w = (ts_op_watch){ 0 };
  ts_add(x.tensor, x.tensor);
  g_assert_cmpuint(w.seq, ==, 0); /* no longer kept */
  ts_run_functions_eagerly(false);
  ts_value_clear(&x);
  ts_module_free(m);
}

/* If and While subgraph ops name the control-flow node they run under. */
static void test_parents(void)
{
  ts_module *m = ts_module_open("seeds");
  seen s = { g_ptr_array_new_with_free_func(g_free) };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_event, &s);
  ts_value x;
  g_assert_true(ts_value_parse("i32[4]=10,12,15,20", &x));
  ts_function_call(ts_module_lookup(m, "sum_even"), &x, 1);
  assert_no_error();
  int inside = 0;
  uint64_t while_seq = 0;
  for (guint i = 0; i < s.events->len; i++) {
    const ts_op_event *e = s.events->pdata[i];
    if (e->op == TS_OP_WHILE)
      while_seq = e->seq;
  }
  g_assert_cmpuint(while_seq, !=, 0);
  for (guint i = 0; i < s.events->len; i++) {
    const ts_op_event *e = s.events->pdata[i];
    if (!e->parent)
      continue;
    inside++;
    g_assert_true(ts_op_traits(ts_node_op(e->parent)) & TS_OP_TRAIT_CONTROL_FLOW);
    g_assert_cmpuint(e->parent_seq, >=, while_seq); /* the While or an If in its body */
    g_assert_cmpuint(e->seq, >, e->parent_seq);
  }
  g_assert_cmpint(inside, >, 4);
  ts_listener_remove(id);
  g_ptr_array_unref(s.events);
  ts_module_free(m);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/identity/seeds-match", test_seeds_match);
  g_test_add_func("/identity/sequence", test_sequence);
  g_test_add_func("/identity/parents", test_parents);
  g_test_add_func("/identity/op-watch", test_op_watch);
  return g_test_run();
}
