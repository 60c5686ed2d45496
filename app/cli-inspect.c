/* cli-inspect.c — `signatures` (trace for the given calls, print every
 * concrete function's signature) and `graph` (trace one call, print its
 * graph as text or DOT).  Both trace without running. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_trace_inputs(const cli_options *o, const ts_module *module, const ts_function *fn, int n_max,
                     GArray *out)
{
  int n = (int)o->calls->len + (o->concrete->len > 0);
  if (n > n_max)
    return cli_fail(CLI_EXIT_USAGE, "%s traces one call: give its --arg values or its "
                                    "--concrete specs, once", cli_command_name(o->command));
  const char *const *examples = cli_examples(module, fn);
  g_autoptr(GPtrArray) example_specs = g_ptr_array_new();
  for (const char *const *e = examples; e && *e; e++)
    g_ptr_array_add(example_specs, (char *)*e);
  for (guint c = 0; c < o->calls->len; c++) {
    /* a --call given no --arg: the module's example arguments, if it gives them */
    GPtrArray *given = g_ptr_array_index(o->calls, c);
    cli_args a;
    bool ok = cli_args_parse(given->len == 0 && examples ? example_specs : given, &a);
    g_array_append_val(out, a);
    if (!ok)
      return CLI_EXIT_USAGE;
  }
  GPtrArray *specs = o->concrete->len > 0 ? o->concrete
                     : n == 0 && o->input_signature->len > 0 ? o->input_signature
                                                             : NULL;
  if (specs) {
    cli_args a;
    bool ok = cli_concrete_parse(specs, &a);
    g_array_append_val(out, a);
    if (!ok)
      return CLI_EXIT_USAGE;
  }
  /* nothing given: the module's example arguments, if it declares them */
  if (out->len == 0 && examples) {
    cli_args a;
    bool ok = cli_args_parse(example_specs, &a);
    g_array_append_val(out, a);
    if (!ok)
      return CLI_EXIT_USAGE;
  }
  if (out->len == 0) {
    if (ts_function_n_params(fn) > 0)
      return cli_fail(CLI_EXIT_USAGE, "%s needs arguments to trace %s with: --arg values, "
                                      "--concrete specs or an --input-signature",
                      cli_command_name(o->command), ts_function_name(fn));
    g_array_append_val(out, ((cli_args){ g_new0(ts_value, 1), 0 }));
  }
  for (guint i = 0; i < out->len; i++) {
    int ret = cli_check_arity(fn, g_array_index(out, cli_args, i).n,
                              specs && i == out->len - 1 ? "--concrete" : "--arg");
    if (ret != 0)
      return ret;
  }
  return 0;
}

ts_concrete *cli_trace_aside(ts_function *fn, const cli_args *a)
{
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  if (saved >= 0)
    dup2(STDERR_FILENO, STDOUT_FILENO);
  ts_concrete *cf = ts_function_get_concrete(fn, a->v, a->n);
  fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  return cf;
}

/* "# #5 dense/MatMul: fused from MatMul, Add, Relu (dense/MatMul, dense/Add,
 * dense/Relu)" for each node of g (and its subgraphs) the passes made from
 * other nodes than one of its own op. */
static void append_provenance(GString *s, const ts_graph *g)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    int k = ts_node_n_origins(n);
    const ts_node *first = ts_node_origin(n, 0);
    if (k > 1 || ts_node_op(first) != ts_node_op(n)) {
      g_string_append_printf(s, "# #%d %s: %s from ", id, ts_node_name(n),
                             ts_node_op(n) == TS_OP_CONST ? "folded" : k > 1 ? "fused" : "made");
      for (int i = 0; i < k; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", ts_op_name(ts_node_op(ts_node_origin(n, i))));
      g_string_append(s, " (");
      for (int i = 0; i < k; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", ts_node_name(ts_node_origin(n, i)));
      g_string_append(s, ")\n");
    }
    for (int i = 0; i < ts_node_n_subgraphs(n); i++)
      append_provenance(s, ts_node_subgraph(n, i));
  }
}

/* graph --passes (already chosen: cli-options.c): the graph cf runs after
 * them, what its new nodes stand for, its memory plan and one line per
 * pass (on stderr with DOT, which must stay DOT). */
static void print_optimized(const cli_options *o, const ts_concrete *cf)
{
  const ts_graph *g = ts_concrete_optimized_graph(cf);
  bool dot = strcmp(o->format, "dot") == 0;
  char *text = dot ? ts_graph_to_dot(g) : ts_graph_to_text(g);
  GString *notes = g_string_new(NULL);
  if (!dot)
    append_provenance(notes, g);
  printf("%s%s%s", text, g_str_has_suffix(text, "\n") ? "" : "\n", notes->str);
  ts_memory_plan plan;
  char *line = ts_concrete_memory_plan(cf, &plan) ? ts_memory_plan_describe(&plan)
                                                  : strdup("plan: at the first call (unknown dims)");
  char *schedule = ts_concrete_schedule_describe(cf);
  fprintf(dot ? stderr : stdout, "%s\n%s\n%s", line, schedule, ts_concrete_pass_summary(cf));
  free(schedule);
  free(line);
  g_string_free(notes, TRUE);
  free(text);
}

static int inspect(const cli_options *o)
{
  ts_scope *scope = ts_scope_begin();
  GArray *inputs = g_array_new(FALSE, TRUE, sizeof(cli_args));
  ts_module *module = NULL;
  ts_function *fn = NULL;
  bool graph = o->command == CLI_GRAPH;
  int listener = 0;
  int ret = cli_open_function(o, &module, &fn);
  if (ret == 0)
    ret = cli_trace_inputs(o, module, fn, graph ? 1 : G_MAXINT, inputs);
  if (ret == 0) {
    listener = cli_listen(o->trace_log);
    ts_concrete *cf = NULL;
    for (guint i = 0; i < inputs->len && ret == 0; i++) {
      const cli_args *a = &g_array_index(inputs, cli_args, i);
      cf = graph ? cli_trace_aside(fn, a) : ts_function_get_concrete(fn, a->v, a->n);
      if (!cf)
        ret = cli_fail_engine(CLI_EXIT_FAILED);
    }
    if (ret == 0 && graph && o->passes)
      print_optimized(o, cf);
    char *text = ret != 0 || (graph && o->passes) ? NULL
                 : !graph ? ts_function_pretty_printed_concrete_signatures(fn)
                 : strcmp(o->format, "dot") == 0 ? ts_graph_to_dot(ts_concrete_graph(cf))
                                                 : ts_graph_to_text(ts_concrete_graph(cf));
    if (text)
      printf("%s%s", text, g_str_has_suffix(text, "\n") ? "" : "\n");
    free(text);
    ts_listener_remove(listener);
  }
  for (guint i = 0; i < inputs->len; i++)
    cli_args_clear(&g_array_index(inputs, cli_args, i));
  g_array_unref(inputs);
  ts_module_free(module);
  ts_scope_end(scope);
  return ret;
}

int cli_signatures(int argc, char **argv)
{
  return cli_command_main(CLI_SIGNATURES, argc, argv, inspect);
}

int cli_graph(int argc, char **argv)
{
  return cli_command_main(CLI_GRAPH, argc, argv, inspect);
}
