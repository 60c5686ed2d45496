/* cli-debug.c — `debug`: a step-debugging session on one call, driven by
 * commands from a file or the terminal (the CLI is the controller; the
 * call runs on a thread of its own); and `health`: one call in health
 * mode, naming the first op that made a NaN or an Inf. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-debug.h>
#include <unistd.h>

#define VALUES_CAP 2000 /* characters of `values` output */

/* ---- options ------------------------------------------------------------------------- */

/* Opens the function and parses its arguments (the module's examples when
 * no --arg is given); 0 or an exit status. */
static int open_call(const cli_options *o, ts_module **module, ts_function **fn, cli_args *args)
{
  int ret = cli_open_function(o, module, fn);
  if (ret != 0)
    return ret;
  g_autoptr(GPtrArray) specs = g_ptr_array_new();
  GPtrArray *given = o->calls->len ? g_ptr_array_index(o->calls, 0) : specs;
  const char *const *examples = given->len == 0 ? cli_examples(*module, *fn) : NULL;
  for (const char *const *e = examples; e && *e; e++)
    g_ptr_array_add(specs, (char *)*e);
  if (!cli_args_parse(examples ? specs : given, args))
    return examples ? CLI_EXIT_FAILED : CLI_EXIT_USAGE;
  return cli_check_arity(*fn, args->n, "--arg");
}

/* ---- the debuggee thread ---------------------------------------------------------------- */

typedef struct debuggee {
  ts_debug_session *s;
  ts_function *fn;
  const cli_args *args;
  bool graph;
  const ts_backend *device; /* NULL: the CPU */
  char *result;     /* owned (free()); NULL if the call failed */
  ts_error *error;
} debuggee;

static gpointer debuggee_run(gpointer data)
{
  debuggee *d = data;
  ts_run_functions_eagerly(!d->graph);
  if (d->device)
    ts_device_scope_begin(d->device);
  ts_tensor *out[TS_MAX_RETURNS];
  bool tuple = false;
  int n = ts_debug_call_n(d->s, d->fn, d->args->v, d->args->n, out, TS_MAX_RETURNS, &tuple);
  d->result = n >= 0 ? ts_results_to_string(out, n, tuple) : NULL;
  if (d->device)
    ts_device_scope_end();
  d->error = ts_error_take();
  ts_release_all();
  return NULL;
}

/* ---- what the commands print ------------------------------------------------------------ */

static const char *base_name(const char *file)
{
  const char *slash = file ? strrchr(file, '/') : NULL;
  return slash ? slash + 1 : file ? file : "?";
}

/* "#12 MatMul dense_3/MatMul at seeds.c:397"; a loop body's op by its
 * node's path, "#5 FloorMod While/body/FloorMod at ..."; a gradient's op:
 * "#37 Mul gradients/Mul (gradient of sparse_categorical_crossentropy/Sub) at ..." */
static void print_op(const ts_debug_op *op)
{
  printf("#%" G_GUINT64_FORMAT " %s", op->seq, op->op_name);
  if (op->path || op->node)
    printf(" %s", op->path ? op->path : op->node);
  if (op->origins)
    printf(" [%s]", op->origins);
  if (op->gradient_of)
    printf(" (gradient of %s)", op->gradient_of);
  if (op->file)
    printf(" at %s:%d", base_name(op->file), op->line);
}

static void print_stop(const ts_debug_stop *stop)
{
  print_op(&stop->op);
  printf(" (%s", ts_debug_reason_name(stop->reason));
  if (stop->breakpoint)
    printf(" %d", stop->breakpoint);
  if (stop->reason == TS_DEBUG_ERROR && stop->error)
    printf(": %s", stop->error); /* the op failed: continuing ends the call with it */
  printf("%s)\n", stop->after ? ", after the op" : "");
}

static void print_stats(const char *label, int i, const ts_tensor *t)
{
  char *shape = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
  printf("  %s[%d] %s", label, i, shape);
  free(shape);
  ts_tensor_stats st;
  if (ts_tensor_stats_compute(t, &st))
    printf(" min %g max %g mean %g std %g nan %" G_GINT64_FORMAT " inf %" G_GINT64_FORMAT
           " zeros %" G_GINT64_FORMAT,
           st.min, st.max, st.mean, st.std, st.n_nan, st.n_inf, st.n_zero);
  printf("\n");
}

static void print_values(const char *label, int i, const ts_tensor *t)
{
  char *text = ts_tensor_format_values(t);
  size_t n = text ? strlen(text) : 0;
  printf("  %s[%d] = %.*s%s\n", label, i, (int)(n > VALUES_CAP ? VALUES_CAP : n), text ? text : "?",
         n > VALUES_CAP ? " ..." : "");
  free(text);
}

/* `print`/`values` [in|out] [i] on op (failed: the stop at it is its error's); a word it does not take, or an
 * index the op has not, is said on stderr (the session goes on). */
static void show_tensors(const ts_debug_op *op, bool failed, char **words, int n_words, bool values)
{
  bool in = true, out = true;
  int only = -1;
  for (int w = 1; w < n_words; w++) {
    gint64 index = 0;
    if (strcmp(words[w], "in") == 0)
      out = false;
    else if (strcmp(words[w], "out") == 0)
      in = false;
    else if (g_ascii_string_to_signed(words[w], 10, 0, G_MAXINT, &index, NULL))
      only = (int)index;
    else {
      cli_fail(0, "%s: expected in, out or an index, not '%s'", words[0], words[w]);
      return;
    }
  }
  for (int side = 0; side < 2; side++) {
    if (!(side == 0 ? in : out))
      continue;
    const char *label = side == 0 ? "in" : "out";
    int n = side == 0 ? op->n_inputs : op->n_outputs;
    ts_tensor **t = side == 0 ? op->inputs : op->outputs;
    if (side == 1 && n == 0) {
      printf(failed ? "  out: none (the op failed)\n" : "  out: not computed yet (stopped before the op)\n");
      continue;
    }
    if (only >= n && !(in && out)) /* with neither side named, the other side may have it */
      cli_fail(0, "%s %s %d: %s has %d %s%s", words[0], label, only, op->op_name, n,
               side == 0 ? "input" : "output", n == 1 ? "" : "s");
    for (int i = 0; i < n; i++)
      if (only < 0 || only == i)
        (values ? print_values : print_stats)(label, i, t[i]);
  }
  if (in && out && only >= op->n_inputs && only >= op->n_outputs) {
    g_autofree char *outs = op->n_outputs ? g_strdup_printf(" and %d output%s", op->n_outputs,
                                                            op->n_outputs == 1 ? "" : "s")
                                          : NULL;
    cli_fail(0, "%s %d: %s has %d input%s%s", words[0], only, op->op_name, op->n_inputs,
             op->n_inputs == 1 ? "" : "s", outs ? outs : "");
  }
}

static void show_frames(const ts_debug_op *op)
{
  for (int i = op->n_frames - 1; i >= 0; i--) {
    const ts_debug_frame *f = &op->frames[i];
    printf("  #%d %s", op->n_frames - 1 - i, f->name);
    if (f->file)
      printf(" at %s:%d", base_name(f->file), f->line);
    printf("\n");
  }
}

/* ---- the session ------------------------------------------------------------------------ */

typedef struct controller {
  ts_debug_session *s;
  ts_debug_stop stop;  /* the current stop */
  int cursor;          /* history entries back from the stop; 0 at the stop */
  ts_debug_op shown;   /* the history entry the cursor is on */
  FILE *in;
  char **script;       /* --commands lines, or NULL for `in` */
  int next_line;
  GArray *breaks;      /* breakpoint: the breakpoints set, by when */
} controller;

/* A breakpoint set and whether the call stopped at it. */
typedef struct {
  int id;
  char *spec;
  bool hit;
} breakpoint;

static void add_break(controller *c, const char *spec)
{
  int id = ts_debug_break_add(c->s, spec);
  if (!id) {
    cli_fail_engine(0);
    return;
  }
  printf("breakpoint %d: %s\n", id, spec);
  g_array_append_val(c->breaks, ((breakpoint){ id, g_strdup(spec), false }));
}

static void note_hit(controller *c, int id)
{
  for (guint i = 0; i < c->breaks->len; i++)
    if (g_array_index(c->breaks, breakpoint, i).id == id)
      g_array_index(c->breaks, breakpoint, i).hit = true;
}

/* After a call that ran to its end: a breakpoint it never stopped at is
 * said (a FILE:LINE of a file the module was not built from, an op type
 * it does not run), not left for the user to wonder about. */
static void say_never_hit(controller *c)
{
  for (guint i = 0; i < c->breaks->len; i++) {
    const breakpoint *b = &g_array_index(c->breaks, breakpoint, i);
    if (!b->hit)
      printf("breakpoint %d (%s) was never hit\n", b->id, b->spec);
  }
}

static void clear_break(gpointer data)
{
  g_free(((breakpoint *)data)->spec);
}

/* The next command line (owned), or NULL at the end. */
static char *next_command(controller *c)
{
  if (c->script)
    return c->script[c->next_line] ? g_strdup(c->script[c->next_line++]) : NULL;
  if (isatty(fileno(c->in))) {
    printf("(tracescope) ");
    fflush(stdout);
  }
  char line[4096];
  return fgets(line, sizeof line, c->in) ? g_strdup(line) : NULL;
}

/* The --commands lines that the call's end left unrun, said on stderr
 * (stdin's are not read on: it may be a terminal or a pipe kept open). */
static void say_commands_left(controller *c)
{
  if (!c->script)
    return;
  g_autoptr(GString) left = g_string_new(NULL);
  for (int i = c->next_line; c->script[i]; i++) {
    g_autofree char *command = g_strstrip(g_strdup(c->script[i]));
    if (*command)
      g_string_append_printf(left, "%s%s", left->len ? "; " : "", command);
  }
  if (left->len)
    fprintf(stderr, "note: the call finished before these commands of --commands ran: %s\n", left->str);
}

/* The op the cursor is on: the stop's, or a history entry. */
static const ts_debug_op *cursor_op(controller *c)
{
  return c->cursor == 0 ? &c->stop.op : &c->shown;
}

/* Moves the cursor by delta (positive: back) and prints where it is. */
static void move_cursor(controller *c, int delta)
{
  /* the history ends with the op before the stop's */
  int n = ts_debug_history_n(c->s);
  int to = c->cursor + delta;
  to = to < 0 ? 0 : to > n ? n : to;
  ts_debug_op_clear(&c->shown);
  c->cursor = to;
  if (to > 0)
    ts_debug_history_get(c->s, n - to, &c->shown);
  print_op(cursor_op(c));
  printf(to == 0 ? " (the stop)\n" : " (%d back)\n", to);
}

/* Runs commands until one resumes the debuggee (true) or quits (false). */
static bool run_commands(controller *c, bool *quit)
{
  static const struct {
    const char *names[2];
    ts_debug_action action;
  } RESUME[] = {
    { { "step", "s" }, TS_DEBUG_STEP_INTO },
    { { "next", "n" }, TS_DEBUG_STEP_OVER },
    { { "finish", NULL }, TS_DEBUG_STEP_OUT },
    { { "continue", "c" }, TS_DEBUG_CONTINUE },
  };
  char *line;
  while ((line = next_command(c))) {
    g_auto(GStrv) words = g_strsplit_set(g_strstrip(line), " \t", -1);
    int n = (int)g_strv_length(words);
    const char *w = n > 0 ? words[0] : "";
    const char *rest = strchr(line, ' ') ? g_strstrip(strchr(line, ' ')) : "";
    bool resumed = false, done = false;
    if (!*w || w[0] == '#') {
      /* blank or a comment */
    } else if (strcmp(w, "quit") == 0 || strcmp(w, "q") == 0) {
      *quit = done = true;
    } else if (strcmp(w, "back") == 0 || strcmp(w, "forward") == 0) {
      gint64 k = 1;
      if (n > 1 && !g_ascii_string_to_signed(words[1], 10, 0, G_MAXINT, &k, NULL))
        cli_fail(0, "%s: expected a count of ops, not '%s'", w, words[1]);
      else
        move_cursor(c, strcmp(w, "back") == 0 ? (int)k : -(int)k);
    } else if (strcmp(w, "print") == 0 || strcmp(w, "p") == 0 || strcmp(w, "values") == 0) {
      show_tensors(cursor_op(c), c->cursor == 0 && c->stop.reason == TS_DEBUG_ERROR, words, n,
                   strcmp(w, "values") == 0);
    } else if (strcmp(w, "where") == 0 || strcmp(w, "bt") == 0) {
      show_frames(cursor_op(c));
    } else if (strcmp(w, "break") == 0 || strcmp(w, "b") == 0) {
      add_break(c, rest);
    } else if (strcmp(w, "delete") == 0) {
      int id = n > 1 ? atoi(words[1]) : 0;
      if (n < 2 || !ts_debug_break_remove(c->s, id))
        cli_fail(0, "no breakpoint '%s'", n > 1 ? words[1] : "");
      else
        for (guint i = 0; i < c->breaks->len; i++)
          if (g_array_index(c->breaks, breakpoint, i).id == id)
            g_array_remove_index(c->breaks, i--);
    } else {
      bool known = false;
      for (size_t i = 0; i < G_N_ELEMENTS(RESUME) && !known; i++)
        if (strcmp(w, RESUME[i].names[0]) == 0 ||
            (RESUME[i].names[1] && strcmp(w, RESUME[i].names[1]) == 0)) {
          known = true;
          resumed = ts_debug_resume(c->s, RESUME[i].action);
        }
      if (!known)
        cli_fail(0, "unknown command '%s' (step, next, finish, continue, back, forward, print, "
                    "values, where, break, delete, quit)", w);
    }
    g_free(line);
    if (resumed || done)
      return resumed;
  }
  return false; /* the end of the commands */
}

static int debug(const cli_options *o)
{
  ts_scope *scope = ts_scope_begin();
  ts_module *module = NULL;
  ts_function *fn = NULL;
  cli_args args = { 0 };
  int ret = open_call(o, &module, &fn, &args);
  /* Eagerly, ops know their nodes (names, scopes) when the function is
   * traced for the call.  A trace that fails (an op's shapes refused) is
   * no reason not to debug: the eager call stops where that op fails. */
  if (ret == 0 && o->eager && !cli_trace_aside(fn, &args)) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "note: tracing failed, so ops have no node names: %s\n", e ? e->message : "?");
    ts_error_free(e);
  }
  controller c = { .in = stdin, .breaks = g_array_new(FALSE, FALSE, sizeof(breakpoint)) };
  g_array_set_clear_func(c.breaks, clear_break);
  g_autofree char *script_text = NULL;
  if (ret == 0 && o->commands) {
    GError *error = NULL;
    if (!g_file_get_contents(o->commands, &script_text, NULL, &error)) {
      ret = cli_fail(CLI_EXIT_USAGE, "--commands: %s", error->message);
      g_error_free(error);
    } else {
      c.script = g_strsplit(script_text, "\n", -1);
    }
  }
  if (ret != 0)
    goto out;

  /* With breakpoints the call runs to the first; without, it stops at its first op. */
  ts_debug_options options = { .start = o->breaks->len ? TS_DEBUG_START_RUNNING : TS_DEBUG_START_STOPPED };
  c.s = ts_debug_new(&options);
  for (guint i = 0; i < o->breaks->len; i++)
    add_break(&c, g_ptr_array_index(o->breaks, i));
  debuggee d = { .s = c.s, .fn = fn, .args = &args, .graph = !o->eager, .device = o->device };
  GThread *thread = g_thread_new("debuggee", debuggee_run, &d);
  bool quit = false, finished = false;
  while (!finished) {
    ts_debug_stop_clear(&c.stop);
    ts_debug_wait(c.s, -1, &c.stop);
    if (c.stop.reason == TS_DEBUG_FINISHED) {
      finished = true;
      break;
    }
    print_stop(&c.stop);
    note_hit(&c, c.stop.breakpoint);
    c.cursor = 0;
    ts_debug_op_clear(&c.shown);
    if (!run_commands(&c, &quit))
      break;
  }
  if (quit)
    ts_debug_cancel(c.s);
  /* leaving lets the call run on to its end (or its cancel) */
  ts_debug_stop_clear(&c.stop);
  ts_debug_op_clear(&c.shown);
  ts_debug_free(c.s);
  g_thread_join(thread);
  if (finished)
    say_commands_left(&c);
  if (d.result) {
    printf("finished: %s\n", d.result);
    free(d.result);
    say_never_hit(&c);
  } else if (quit) {
    printf("quit: the call was cancelled\n");
  } else {
    ret = cli_fail(CLI_EXIT_FAILED, "%s", d.error ? d.error->message : "the call failed");
  }
  ts_error_free(d.error);
out:
  g_array_unref(c.breaks);
  g_strfreev(c.script);
  cli_args_clear(&args);
  ts_module_free(module);
  ts_scope_end(scope);
  return ret;
}

int cli_debug(int argc, char **argv)
{
  return cli_command_main(CLI_DEBUG, argc, argv, debug);
}

/* ---- health ------------------------------------------------------------------------------ */

static void print_health_op(const ts_health_op *op, bool stats)
{
  printf("#%" G_GUINT64_FORMAT " %s", op->seq, op->op_name);
  if (op->node)
    printf(" %s", op->node);
  if (op->origins)
    printf(" [%s]", op->origins);
  if (op->file)
    printf(" at %s:%d", base_name(op->file), op->line);
  printf(" (nan %" G_GINT64_FORMAT ", inf %" G_GINT64_FORMAT, op->n_nan, op->n_inf);
  if (stats)
    printf(", min %g max %g mean %g", op->min, op->max, op->mean);
  printf(")\n");
}

static int health(const cli_options *o)
{
  ts_scope *scope = ts_scope_begin();
  ts_module *module = NULL;
  ts_function *fn = NULL;
  cli_args args = { 0 };
  int ret = open_call(o, &module, &fn, &args);
  if (ret == 0) {
    ts_run_functions_eagerly(o->eager);
    ts_health *h = ts_health_start(o->stats ? TS_HEALTH_STATS : TS_HEALTH_COUNTS);
    ts_tensor *results[TS_MAX_RETURNS];
    bool tuple = false;
    int n = ts_function_call_n(fn, args.v, args.n, results, TS_MAX_RETURNS, &tuple);
    ts_health_stop(h);
    char *text = n >= 0 ? ts_results_to_string(results, n, tuple) : NULL;
    if (text)
      printf("%s\n", text);
    free(text);
    if (o->all)
      for (int64_t i = 0; i < ts_health_n_ops(h); i++)
        print_health_op(ts_health_get(h, i), o->stats);
    const ts_health_op *first = ts_health_first_nonfinite(h);
    printf("health: %" G_GINT64_FORMAT " ops, ", ts_health_n_ops(h));
    if (first) {
      printf("first NaN/Inf: ");
      print_health_op(first, o->stats);
    } else {
      printf("no NaN or Inf\n");
    }
    ts_health_free(h);
    if (n < 0)
      ret = cli_fail_engine(CLI_EXIT_FAILED);
  }
  cli_args_clear(&args);
  ts_module_free(module);
  ts_scope_end(scope);
  return ret;
}

int cli_health(int argc, char **argv)
{
  return cli_command_main(CLI_HEALTH, argc, argv, health);
}
