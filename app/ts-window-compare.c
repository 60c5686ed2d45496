/* ts-window-compare.c — the graph area's compare page: two concrete
 * functions of a function side by side (win.compare-concrete), or the
 * graph pane's one before and after the optimizer's passes
 * (win.compare-passes, its optimized graph asked of the worker the first
 * time); win.close-compare goes back to one graph. */
#include "ts-window-private.h"

#include "ts-graph-view.h"
#include "ts-worker-optimized.h"

void _ts_window_close_compare(TsWindow *self)
{
  gboolean was = ts_window_get_comparing(self);
  gtk_stack_set_visible_child_name(self->graph_stack, "single");
  ts_compare_pane_clear(self->compare_pane);
  if (was) /* the details show the single graph's selection again */
    ts_node_focus_show_graph_selection(self->focus);
}

static void action_close_compare(GtkWidget *widget, const char *name, GVariant *param)
{
  _ts_window_close_compare(TS_WINDOW(widget));
}

static void action_compare_concrete(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function;
  int left, right;
  g_variant_get(param, "(&sii)", &function, &left, &right);
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  TsModuleFunction *fn = module ? ts_loaded_module_lookup(module, function) : NULL;
  int n = fn ? (int)fn->concrete->len : 0;
  if (left < 0 || left >= n || right < 0 || right >= n) {
    g_autofree char *text = g_strdup_printf("%s has no concrete functions %d and %d to compare",
                                            function, left, right);
    _ts_window_toast(self, text);
    return;
  }
  /* shown first, so that the views have their size when the layouts are fitted */
  gtk_stack_set_visible_child_name(self->graph_stack, "compare");
  ts_compare_pane_show(self->compare_pane, module, ts_module_function_concrete(fn, left),
                       ts_module_function_concrete(fn, right));
}

static void show_passes(TsWindow *self, TsConcreteInfo *cf)
{
  /* shown first, so that the views have their size when the layouts are fitted */
  gtk_stack_set_visible_child_name(self->graph_stack, "compare");
  ts_compare_pane_show_passes(self->compare_pane, cf);
}

typedef struct {
  TsWindow *self;
  TsConcreteInfo *cf;
} PassesRequest;

static void on_optimized(GObject *source, GAsyncResult *result, gpointer user_data)
{
  PassesRequest *req = user_data;
  TsWindow *self = req->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsWorkerOptimized) o = ts_worker_get_optimized_finish(TS_WORKER(source), result, &error);
  self->fetching--;
  if (o && !req->cf->optimized) /* kept with the concrete function: asked for once */
    ts_concrete_info_set_optimized(req->cf, g_steal_pointer(&o->graph), g_steal_pointer(&o->origins),
                                   o->pass_summary);
  if (!o) {
    g_autofree char *text = g_strdup_printf("Cannot show the optimized graph: %s", error->message);
    _ts_window_toast(self, text);
  } else if (ts_graph_pane_get_concrete(self->graph_pane) == req->cf) {
    show_passes(self, req->cf);
  }
  _ts_window_notify_busy(self);
  ts_concrete_info_unref(req->cf);
  g_object_unref(self);
  g_free(req);
}

static void action_compare_passes(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  if (!cf || !cf->graph) {
    _ts_window_toast(self, "Select a traced concrete function first");
    return;
  }
  if (cf->optimized) {
    show_passes(self, cf);
    return;
  }
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  TsModuleFunction *fn = module ? ts_loaded_module_lookup(module, cf->function) : NULL;
  TsWorker *worker = ts_engine_worker_get_worker(self->worker);
  if (!fn || ts_module_function_concrete(fn, cf->index) != cf || !worker) {
    _ts_window_toast(self, "The worker that traced this graph has ended: run the function again to see its optimized graph");
    return;
  }
  PassesRequest *req = g_new0(PassesRequest, 1);
  req->self = g_object_ref(self);
  req->cf = ts_concrete_info_ref(cf);
  self->fetching++;
  ts_worker_get_optimized_async(worker, cf->function, cf->signature, cf->graph, NULL, on_optimized, req);
  _ts_window_notify_busy(self);
}

gboolean ts_window_get_comparing(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  return g_strcmp0(gtk_stack_get_visible_child_name(self->graph_stack), "compare") == 0;
}

gboolean ts_window_get_graph_drawn(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  if (gtk_stack_get_transition_running(self->graph_stack))
    return FALSE;
  if (!ts_window_get_comparing(self))
    return ts_graph_pane_get_drawn(self->graph_pane);
  return ts_graph_view_get_drawn(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->compare_pane, FALSE))) &&
         ts_graph_view_get_drawn(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->compare_pane, TRUE)));
}

void _ts_window_class_add_compare_actions(GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action(widget_class, "win.compare-concrete", "(sii)", action_compare_concrete);
  gtk_widget_class_install_action(widget_class, "win.close-compare", NULL, action_close_compare);
  gtk_widget_class_install_action(widget_class, "win.compare-passes", NULL, action_compare_passes);
}
