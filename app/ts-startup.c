/* ts-startup.c — the command line of `tracescope` and the script it asks
 * the first window to play. */
#include "ts-startup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts-debug-panel.h"
#include "ts-graph-pane.h"
#include "ts-screenshot.h"

#define SCREENSHOT_FRAMES 3 /* frames drawn settled before the window is captured */
#define SCREENSHOT_GIVE_UP_S 120 /* a safety net: the window never settled */

struct _TsStartupScript {
  GApplication *app;      /* quit once the screenshot is saved */
  const TsStartup *startup;
  TsWindow *window;       /* weak */
  gboolean module_requested, function_selected, panel_shown, compare_shown, expanded, shot_requested;
  gboolean debug_ended; /* the debug call ended (::finished): that settles the window too */
  guint next_call;
  guint step_id;
  int frames;
  gint64 shot_deadline;
  GtkSettings *settings;  /* animations off for a screenshot, as they were again when done */
  gboolean animations;
};

/* ---- the command line ----------------------------------------------------------------- */

void ts_startup_free(TsStartup *s)
{
  if (!s)
    return;
  g_free(s->module);
  g_free(s->remote);
  g_free(s->function);
  if (s->calls)
    g_ptr_array_unref(s->calls);
  g_free(s->mode);
  g_strfreev(s->breakpoints);
  g_free(s->panel);
  g_free(s->colour);
  g_free(s->device);
  g_free(s->screenshot);
  g_free(s);
}

static gboolean on_call_option(const char *name, const char *value, gpointer data, GError **error)
{
  TsStartup *s = data;
  g_ptr_array_add(s->calls, g_new0(char *, 1));
  return TRUE;
}

static gboolean on_arg_option(const char *name, const char *value, gpointer data, GError **error)
{
  TsStartup *s = data;
  if (s->calls->len == 0)
    g_ptr_array_add(s->calls, g_new0(char *, 1));
  char ***call = (char ***)&s->calls->pdata[s->calls->len - 1];
  guint n = g_strv_length(*call);
  *call = g_renew(char *, *call, n + 2);
  (*call)[n] = g_strdup(value);
  (*call)[n + 1] = NULL;
  return TRUE;
}

static gboolean on_size_option(const char *name, const char *value, gpointer data, GError **error)
{
  TsStartup *s = data;
  if (sscanf(value, "%dx%d", &s->width, &s->height) != 2 || s->width < 200 || s->height < 200) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--size takes WIDTHxHEIGHT (at least 200x200), got '%s'", value);
    return FALSE;
  }
  return TRUE;
}

/* " (did you mean '--module'?)" for the first --NAME in args that is none of
 * entries' long names, when one is near it; "" otherwise. */
static char *nearest_option_hint(char **args, const GOptionEntry *entries)
{
  const char *names[32] = { NULL }; /* NULL-terminated */
  size_t n = 0;
  for (const GOptionEntry *e = entries; e->long_name && n + 1 < G_N_ELEMENTS(names); e++)
    names[n++] = e->long_name;
  for (char **a = args; a && *a; a++) {
    if (!g_str_has_prefix(*a, "--") || !(*a)[2])
      continue;
    g_autofree char *name = g_strndup(*a + 2, strcspn(*a + 2, "="));
    if (g_strv_contains(names, name) || g_str_has_prefix(name, "help"))
      continue;
    const char *near = ts_nearest_name(name, names, n);
    return near ? g_strdup_printf(" (did you mean '--%s'?)", near) : g_strdup("");
  }
  return g_strdup("");
}

TsStartup *ts_startup_parse(int *argc, char ***argv, GError **error)
{
  g_autoptr(TsStartup) s = g_new0(TsStartup, 1);
  s->calls = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  s->compare[0] = s->compare[1] = -1;
  g_autofree char *compare = NULL;
  const GOptionEntry entries[] = {
    { "module", 'm', 0, G_OPTION_ARG_FILENAME, &s->module, "Open MODULE (a .so, or seeds for the bundled examples)", "MODULE" },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &s->remote, "Run the module on HOST, in its tracescope-worker through ssh (MODULE is a path there)", "[USER@]HOST[:PORT]" },
    { "function", 'f', 0, G_OPTION_ARG_STRING, &s->function, "Select FUNCTION", "FUNCTION" },
    { "arg", 'a', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_arg_option, "An argument of the call, as tracescope-cli takes it (f32[3]:uniform, i32[2]=1,2, npy:x.npy, 2)", "SPEC" },
    { "call", 'c', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_call_option, "Start another call (its --arg options follow)", NULL },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &s->mode, "Run in graph or eager mode, or debug the call op by op", "graph|eager|debug" },
    { "break", 0, 0, G_OPTION_ARG_STRING_ARRAY, &s->breakpoints, "With --mode=debug: stop before the ops SPEC matches, as the debugger's breakpoint entry takes it (an op MatMul, a node dense_1/*, a line seeds.c:400, nan, a value test 'max > 1e6'); without one the call stops before its first op", "SPEC" },
    { "panel", 0, 0, G_OPTION_ARG_STRING, &s->panel, "Show the trace-log, console, profiler or debugger panel", "trace-log|console|profiler|debugger" },
    { "profile", 0, 0, G_OPTION_ARG_NONE, &s->profile, "Turn Profile on: the calls record op timings", NULL },
    { "colour", 0, 0, G_OPTION_ARG_STRING, &s->colour, "Colour graph nodes by op type, device or compute time", "op-type|device|compute-time" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &s->device, "Run the calls on DEVICE (CPU, SIM:0 with TRACESCOPE_DEVICES=sim, CUDA:0): one of the device menu's", "DEVICE" },
    { "compare", 0, 0, G_OPTION_ARG_STRING, &compare, "Show concrete functions I and J of FUNCTION side by side", "I,J" },
    { "expand-all", 0, 0, G_OPTION_ARG_NONE, &s->expand_all, "Open every group of the graph shown", NULL },
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, &s->screenshot, "Save the window as PNG FILE once the calls are made, then quit", "FILE" },
    { "size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_size_option, "Window size for --screenshot", "WIDTHxHEIGHT" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &s->version, "Print the version and exit", NULL },
    { 0 },
  };
  g_autoptr(GOptionContext) context = g_option_context_new("[FILE]");
  g_option_context_set_summary(context, "Tracescope: run traced tensor programs in graph or eager mode and see why they retrace.");
  g_option_context_set_description(
    context, "FILE is one of:\n"
             "  MODULE.so            a module built against libtracescope (as --module),\n"
             "                       or `seeds` for the bundled examples\n"
             "  MODEL.onnx           an ONNX model: one function per output\n"
             "  SESSION.json         a saved session (main menu, Save Session): its module,\n"
             "                       selection, arguments and trace log\n"
             "  TRACE.json[.gz]      a Chrome trace: tracescope-cli profile --out, PyTorch's\n"
             "                       profiler, any tool's trace events; shown in the\n"
             "                       Profiler panel's Timeline\n"
             "--screenshot works with each (tracescope --screenshot t.png TRACE.json).\n"
             "\n"
             "Examples:\n"
             "  tracescope seeds\n"
             "  tracescope --module ./my_module.so --function f --call --arg 'f32[3]:ones'\n"
             "  tracescope --module seeds --function power --mode debug --break MatMul --call\n"
             "  xvfb-run -a tracescope --screenshot shot.png --module seeds --function deep_net --call\n");
  GOptionGroup *group = g_option_group_new("tracescope", "Tracescope", "Tracescope options", s, NULL);
  g_option_group_add_entries(group, entries);
  g_option_context_set_main_group(context, group);
  g_auto(GStrv) given = g_strdupv(*argv); /* parsing takes what it knows out */
  if (!g_option_context_parse(context, argc, argv, error)) {
    if (g_error_matches(*error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION)) {
      g_autofree char *hint = nearest_option_hint(given, entries);
      g_autofree char *message = g_strconcat((*error)->message, hint, NULL);
      g_free((*error)->message);
      (*error)->message = g_steal_pointer(&message);
    }
    return NULL;
  }
  /* tracescope --remote HOST MODULE: the module is a path there, not a file here */
  if (s->remote && !s->module && *argc == 2) {
    s->module = g_strdup((*argv)[1]);
    (*argv)[1] = NULL;
    *argc = 1;
  }
  if (s->mode && !g_strv_contains((const char *const[]){ "graph", "eager", "debug", NULL }, s->mode)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--mode takes graph, eager or debug, got '%s'",
                s->mode);
    return NULL;
  }
  gboolean debug = g_strcmp0(s->mode, "debug") == 0;
  if (s->breakpoints && !debug) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--break needs --mode=debug");
    return NULL;
  }
  if (debug && s->calls->len > 1) {
    /* a debug call stops; a second would continue it, not start its own */
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--mode=debug debugs one call, %u given with --call", s->calls->len);
    return NULL;
  }
  if (compare && (sscanf(compare, "%d,%d", &s->compare[0], &s->compare[1]) != 2 ||
                  s->compare[0] < 0 || s->compare[1] < 0 || !s->function)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--compare takes two concrete function indexes I,J and needs --function, got '%s'", compare);
    return NULL;
  }
  if (s->panel && !g_strv_contains((const char *const[]){ "trace-log", "console", "profiler", "debugger", NULL },
                                    s->panel)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--panel takes trace-log, console, profiler or debugger, got '%s'", s->panel);
    return NULL;
  }
  if (s->colour && !g_strv_contains((const char *const[]){ "op-type", "device", "compute-time", NULL }, s->colour)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--colour takes op-type, device or compute-time, got '%s'", s->colour);
    return NULL;
  }
  if ((s->function || s->calls->len) && !s->module) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--function and --arg need --module");
    return NULL;
  }
  if (s->calls->len && !s->function) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--arg needs --function");
    return NULL;
  }
  return g_steal_pointer(&s);
}

gboolean ts_startup_has_script(const TsStartup *s)
{
  return s && (s->module || s->screenshot || s->mode || s->panel || s->profile || s->colour || s->device);
}

/* ---- the script ------------------------------------------------------------------------- */


static void script_step(TsStartupScript *self);

/* Whether the window shows, in full, what the script asked for: nothing is
 * running (a trace file being read included), and a module's graph that is
 * to be seen is laid out and drawn (a trace alone has none).  After
 * graph-mode calls that traced the function, its graph must be what the
 * graph pane shows (never "Not Traced Yet"). */
static gboolean window_settled(TsStartupScript *self)
{
  const TsStartup *s = self->startup;
  TsWindow *w = self->window;
  if (!gtk_widget_get_mapped(GTK_WIDGET(w)) || ts_window_get_busy(w))
    return FALSE;
  if (ts_window_get_module(w) && !ts_window_get_graph_drawn(w))
    return FALSE;
  if (ts_window_get_comparing(w))
    return TRUE;
  if (g_strcmp0(s->mode, "debug") == 0 && s->calls->len > 0) {
    /* stopped in the call, or past its end */
    return self->debug_ended || ts_debug_panel_get_stopped(ts_window_get_debug_panel(w));
  }
  TsGraphPane *pane = ts_window_get_graph_pane(w);
  TsLoadedModule *module = ts_window_get_module(w);
  TsModuleFunction *fn = module && s->function ? ts_loaded_module_lookup(module, s->function) : NULL;
  gboolean eager = g_strcmp0(s->mode, "eager") == 0;
  if (fn && !eager && s->calls->len > 0 && fn->concrete->len > 0 &&
      !ts_graph_pane_get_concrete(pane))
    return FALSE;
  return TRUE;
}

static gboolean save_when_settled(GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  TsStartupScript *self = user_data;
  if (g_get_monotonic_time() > self->shot_deadline) {
    g_printerr("tracescope: screenshot: the window did not settle in %d s\n", SCREENSHOT_GIVE_UP_S);
    exit(EXIT_FAILURE);
  }
  if (!window_settled(self)) {
    self->frames = 0; /* count the frames drawn once settled */
    return G_SOURCE_CONTINUE;
  }
  if (++self->frames < SCREENSHOT_FRAMES) {
    gtk_widget_queue_draw(widget);
    return G_SOURCE_CONTINUE;
  }
  g_autoptr(GError) error = NULL;
  if (!ts_screenshot_save(widget, self->startup->screenshot, &error)) {
    /* not drawn yet: try on the next frames (until the deadline) */
    gtk_widget_queue_draw(widget);
    return G_SOURCE_CONTINUE;
  }
  g_application_quit(self->app);
  return G_SOURCE_REMOVE;
}

static gboolean script_step_idle(gpointer user_data)
{
  TsStartupScript *self = user_data;
  self->step_id = 0;
  script_step(self);
  return G_SOURCE_REMOVE;
}

static void on_debug_finished(TsDebugPanel *panel, const char *result, const char *error, TsStartupScript *self)
{
  self->debug_ended = TRUE;
}

static void on_window_busy(TsWindow *window, GParamSpec *pspec, TsStartupScript *self)
{
  if (!ts_window_get_busy(window) && !self->step_id)
    self->step_id = g_idle_add(script_step_idle, self);
}

/* Whether the call's --arg options fit FUNCTION's parameters: none (its
 * arguments as they are) or one per parameter, as tracescope-cli takes them.
 * A call that does not fit is not made: the run panel says why, or with
 * --screenshot the app says it and fails, as for a module that does not open. */
static gboolean call_fits(TsStartupScript *self, const char *const *args)
{
  TsLoadedModule *module = ts_window_get_module(self->window);
  TsModuleFunction *fn = module ? ts_loaded_module_lookup(module, self->startup->function) : NULL;
  guint n_args = g_strv_length((char **)args);
  if (!fn || n_args == 0 || fn->n_params == 0 || n_args == (guint)fn->n_params)
    return TRUE;
  g_autofree char *params = g_strjoinv(", ", fn->params);
  g_autofree char *what = g_strdup_printf("%s(%s) takes %d argument%s, %u given with --arg", fn->name,
                                          params, fn->n_params, fn->n_params == 1 ? "" : "s", n_args);
  if (self->startup->screenshot) {
    g_printerr("tracescope: %s\n", what);
    exit(EXIT_FAILURE);
  }
  ts_run_panel_show_error(ts_window_get_run_panel(self->window), what);
  return FALSE;
}

/* Does the next thing the command line asked for; returns while the window works. */
static void script_step(TsStartupScript *self)
{
  const TsStartup *s = self->startup;
  TsWindow *w = self->window;
  if (!w || ts_window_get_busy(w)) /* closed: nothing left to do */
    return;
  if (s->module && !self->module_requested) {
    self->module_requested = TRUE;
    ts_window_open_module(w, s->module);
    return;
  }
  if (s->screenshot && ts_window_get_error(w)) {
    g_printerr("tracescope: %s\n", ts_window_get_error(w));
    exit(EXIT_FAILURE);
  }
  if (!self->function_selected) {
    self->function_selected = TRUE;
    if (s->mode)
      gtk_widget_activate_action(GTK_WIDGET(w), "win.mode", "s", s->mode);
    for (char **spec = s->breakpoints; spec && *spec; spec++) {
      g_autoptr(GError) error = NULL;
      if (!ts_debug_panel_add_breakpoint(ts_window_get_debug_panel(w), *spec, &error)) {
        g_printerr("tracescope: --break: %s\n", error->message);
        exit(EXIT_FAILURE);
      }
    }
    /* for this window: a scripted run changes no saved setting */
    if (s->profile)
      ts_window_set_profiling_once(w, TRUE);
    if (s->colour)
      ts_graph_pane_set_colour_mode(ts_window_get_graph_pane(w), s->colour);
    g_autoptr(GError) error = NULL;
    if (s->device && !ts_window_set_device(w, s->device, &error)) {
      g_printerr("tracescope: --device: %s\n", error->message);
      exit(EXIT_FAILURE);
    }
    /* without a screenshot to take, a toast says it */
    TsLoadedModule *module = ts_window_get_module(w);
    if (s->screenshot && s->function && module && !ts_loaded_module_lookup(module, s->function)) {
      g_autofree char *message = ts_loaded_module_missing_function(module, s->function);
      g_printerr("tracescope: --function: %s\n", message);
      exit(EXIT_FAILURE);
    }
    if (s->function)
      gtk_widget_activate_action(GTK_WIDGET(w), "win.select-function", "s", s->function);
  }
  if (s->function && self->next_call < s->calls->len) {
    const char *const *args = s->calls->pdata[self->next_call++];
    if (!call_fits(self, args)) {
      script_step(self);
      return;
    }
    ts_run_panel_set_args(ts_window_get_run_panel(w), args);
    gtk_widget_activate_action(GTK_WIDGET(w), "win.run", NULL);
    if (!ts_window_get_busy(w)) /* it did not start (bad arguments): go on */
      script_step(self);
    return;
  }
  if (!self->panel_shown) {
    self->panel_shown = TRUE;
    if (s->panel)
      gtk_widget_activate_action(GTK_WIDGET(w), "win.show-panel", "s", s->panel);
  }
  if (s->compare[0] >= 0 && !self->compare_shown) {
    self->compare_shown = TRUE;
    gtk_widget_activate_action(GTK_WIDGET(w), "win.compare-concrete", "(sii)", s->function,
                               s->compare[0], s->compare[1]);
  }
  if (s->expand_all && !self->expanded) {
    self->expanded = TRUE;
    gtk_widget_activate_action(GTK_WIDGET(ts_window_get_graph_pane(w)), "graph.expand-all", NULL);
  }
  if (s->screenshot && !self->shot_requested) {
    self->shot_requested = TRUE;
    self->shot_deadline = g_get_monotonic_time() + SCREENSHOT_GIVE_UP_S * G_USEC_PER_SEC;
    gtk_widget_add_tick_callback(GTK_WIDGET(w), save_when_settled, self, NULL);
  }
}

TsStartupScript *ts_startup_script_new(GApplication *app, const TsStartup *startup, TsWindow *window)
{
  g_return_val_if_fail(G_IS_APPLICATION(app) && startup != NULL && TS_IS_WINDOW(window), NULL);
  TsStartupScript *self = g_new0(TsStartupScript, 1);
  self->app = app;
  self->startup = startup;
  self->window = window;
  g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&self->window);
  if (startup->screenshot) {
    /* the theme's transitions (a tab's background fades over 200 ms) would
     * be caught half way: a screenshot shows where each one ends */
    self->settings = g_object_ref(gtk_widget_get_settings(GTK_WIDGET(window)));
    g_object_get(self->settings, "gtk-enable-animations", &self->animations, NULL);
    g_object_set(self->settings, "gtk-enable-animations", FALSE, NULL);
  }
  g_signal_connect(window, "notify::busy", G_CALLBACK(on_window_busy), self);
  g_signal_connect(ts_window_get_debug_panel(window), "finished", G_CALLBACK(on_debug_finished), self);
  script_step(self);
  return self;
}

void ts_startup_script_free(TsStartupScript *self)
{
  if (!self)
    return;
  g_clear_handle_id(&self->step_id, g_source_remove);
  if (self->window) {
    g_signal_handlers_disconnect_by_data(self->window, self);
    g_signal_handlers_disconnect_by_data(ts_window_get_debug_panel(self->window), self);
    g_object_remove_weak_pointer(G_OBJECT(self->window), (gpointer *)&self->window);
  }
  if (self->settings) {
    g_object_set(self->settings, "gtk-enable-animations", self->animations, NULL);
    g_object_unref(self->settings);
  }
  g_free(self);
}
