/* cli-render.c — `render`: traces one call and draws its graph as the
 * viewer does (name scopes folded, series, dots), to an SVG, PNG or PDF
 * file, with no display; or writes its DOT text. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts-graph-render.h"

static int item_named(const ts_view_model *model, const char *name)
{
  for (int i = 0; i < ts_view_model_n_items(model); i++)
    if (strcmp(ts_view_item_name(model, i), name) == 0)
      return i;
  return -1;
}

/* "dense_1, dense_2, ..." : the scopes one can name, for the error. */
static char *top_scopes(const ts_view_model *model)
{
  GString *names = g_string_new(NULL);
  for (int c = 0; c < ts_view_item_n_children(model, TS_VIEW_ROOT); c++) {
    int child = ts_view_item_child(model, TS_VIEW_ROOT, c);
    if (!ts_view_item_is_expandable(model, child))
      continue;
    if (names->len > 60) {
      g_string_append(names, ", ...");
      break;
    }
    g_string_append_printf(names, "%s%s", names->len ? ", " : "", ts_view_item_name(model, child));
  }
  return g_string_free(names, FALSE);
}

/* Applies the --expand words in order; 0 or an exit status. */
static int expand(const cli_options *o, ts_view_model *model)
{
  for (guint i = 0; i < o->expand->len; i++) {
    const char *what = g_ptr_array_index(o->expand, i);
    if (strcmp(what, "all") == 0) {
      ts_view_model_expand_all(model);
      continue;
    }
    if (strcmp(what, "none") == 0) {
      ts_view_model_collapse_all(model);
      continue;
    }
    int item = item_named(model, what);
    if (item < 0 || !ts_view_item_is_expandable(model, item)) {
      g_autofree char *scopes = top_scopes(model);
      return cli_fail(CLI_EXIT_USAGE, "--expand: %s '%s' in the graph of %s (top-level scopes: %s)",
                      item < 0 ? "no scope" : "nothing to open in", what, o->function,
                      *scopes ? scopes : "none");
    }
    ts_view_model_reveal(model, item);
    ts_view_model_set_expanded(model, item, true);
  }
  return 0;
}

static int write_dot(const cli_options *o, const ts_graph *g)
{
  char *dot = ts_graph_to_dot(g);
  GError *error = NULL;
  int ret = 0;
  if (!ts_render_write_file(o->out, dot, dot ? strlen(dot) : 0, &error)) {
    ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
    g_error_free(error);
  }
  free(dot);
  return ret;
}

static int draw(const cli_options *o, const ts_graph *g)
{
  ts_view_model *model = ts_view_model_new(g, NULL);
  int ret = expand(o, model);
  if (ret != 0) {
    ts_view_model_unref(model);
    return ret;
  }
  ts_view_layout_options options = ts_render_layout_options();
  ts_view_layouter *layouter = ts_view_layouter_new(model, &options);
  GError *error = NULL;
  ts_view_layout *layout = ts_view_layouter_run(layouter, NULL, &error);
  if (layout) {
    ts_render *render = ts_render_new();
    ts_render_set_dark(render, o->dark);
    ts_render_set_layout(render, model, layout);
    if (!ts_render_export(render, o->out, NULL, o->scale, &error))
      ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
    ts_render_free(render);
  } else {
    ret = cli_fail(CLI_EXIT_FAILED, "%s", error->message);
  }
  g_clear_error(&error);
  ts_view_layout_free(layout);
  ts_view_layouter_free(layouter);
  ts_view_model_unref(model);
  return ret;
}

static int render(const cli_options *o)
{
  ts_scope *scope = ts_scope_begin();
  GArray *inputs = g_array_new(FALSE, TRUE, sizeof(cli_args));
  ts_module *module = NULL;
  ts_function *fn = NULL;
  int ret = cli_open_function(o, &module, &fn);
  if (ret == 0)
    ret = cli_trace_inputs(o, module, fn, 1, inputs);
  if (ret == 0) {
    int listener = cli_listen(false);
    ts_concrete *cf = cli_trace_aside(fn, &g_array_index(inputs, cli_args, 0));
    if (!cf)
      ret = cli_fail_engine(CLI_EXIT_FAILED);
    else if (!ts_render_format_for_path(o->out, NULL)) /* --out took .dot as the one other */
      ret = write_dot(o, ts_concrete_graph(cf));
    else
      ret = draw(o, ts_concrete_graph(cf));
    ts_listener_remove(listener);
  }
  for (guint i = 0; i < inputs->len; i++)
    cli_args_clear(&g_array_index(inputs, cli_args, i));
  g_array_unref(inputs);
  ts_module_free(module);
  ts_scope_end(scope);
  return ret;
}

int cli_render(int argc, char **argv)
{
  return cli_command_main(CLI_RENDER, argc, argv, render);
}
