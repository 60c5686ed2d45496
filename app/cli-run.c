/* cli-run.c — `run`: calls a function once per --call group (in graph
 * mode, eagerly, or through one concrete function), printing each result
 * (all of a tuple's);
 * and the trace log every command can show. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* What kind of change made the trace, as the log names it. */
static const char *const REASONS[TS_TRACE_REASON_COUNT] = {
  [TS_TRACE_FIRST_CALL] = "first call",
  [TS_TRACE_SHAPE] = "shape",
  [TS_TRACE_DTYPE] = "dtype",
  [TS_TRACE_HOST_VALUE] = "host value",
  [TS_TRACE_STRUCTURE] = "structure",
  [TS_TRACE_EXPLICIT] = "get_concrete_function",
};

/* One line per event, in the order they happen:
 *   [trace] f(x: 2): traced (first call) [0.041 ms, 1 concrete function]
 *   [trace] f(x: 3): retraced (host value): arg 0 (x): host value 3 differs from 2 [...]
 *   [warning] f: 5 of the last 5 calls traced a new graph because ... */
static void on_event(const ts_event *ev, void *user_data)
{
  bool trace_log = GPOINTER_TO_INT(user_data);
  if (ev->kind == TS_EVENT_WARNING) {
    if (trace_log) {
      printf("[warning] %s\n", ev->warning.message);
    } else {
      fflush(stdout);
      fprintf(stderr, "tracescope-cli: warning: %s\n", ev->warning.message);
    }
    return;
  }
  const ts_trace_event *t = &ev->trace;
  cli_print_trace(t->function_name, t->signature, t->reason, t->reason_text, t->duration_ns,
                  t->n_concrete, t->error != NULL);
}

void cli_print_trace(const char *function, const char *signature, ts_trace_reason reason,
                     const char *reason_text, uint64_t duration_ns, int n_concrete, bool failed)
{
  bool first = reason == TS_TRACE_FIRST_CALL || reason == TS_TRACE_EXPLICIT;
  const char *why = (unsigned)reason < TS_TRACE_REASON_COUNT ? REASONS[reason] : "?";
  /* a failed trace's error follows as the command's error */
  const char *what = failed ? "tracing failed" : first ? "traced" : "retraced";
  printf("[trace] %s%s: %s (%s)", function, signature, what, why);
  if (!first)
    printf(": %s", reason_text);
  printf(" [%.3f ms, %d concrete function%s]\n", (double)duration_ns / 1e6, n_concrete,
         n_concrete == 1 ? "" : "s");
}

int cli_listen(bool trace_log)
{
  uint32_t mask = TS_EVENT_MASK(TS_EVENT_WARNING);
  if (trace_log)
    mask |= TS_EVENT_MASK(TS_EVENT_TRACE);
  return ts_listener_add(mask, on_event, GINT_TO_POINTER(trace_log));
}

/* --kernels: the CPU, the BLAS and the kernel chosen per shape the calls
 * met, on stderr beside the trace log (stdout keeps the results). */
static void print_kernels(void)
{
  char *choices = ts_kernel_choices();
  fprintf(stderr, "[kernels] CPU: %s\n[kernels] BLAS: %s\n", ts_cpu_description(),
          ts_blas_description());
  g_auto(GStrv) lines = g_strsplit(choices ? choices : "", "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      fprintf(stderr, "[kernels] %s\n", *l);
  free(choices);
}

/* --save: result k (from 1) as DIR/FUNCTION-k.npy, or, for a function
 * returning a tuple, its tensor j (from 1) as DIR/FUNCTION-k-j.npy; the
 * line to print ("saved PATH: f32[20,10]"), or NULL after an error. */
static char *save_result(const cli_options *o, ts_function *fn, int k, int j,
                         const ts_tensor *out)
{
  if (g_mkdir_with_parents(o->save, 0755) != 0) {
    cli_fail(CLI_EXIT_FAILED, "--save: cannot make '%s': %s", o->save, g_strerror(errno));
    return NULL;
  }
  g_autofree char *name = j ? g_strdup_printf("%s-%d-%d.npy", ts_function_name(fn), k, j)
                            : g_strdup_printf("%s-%d.npy", ts_function_name(fn), k);
  g_autofree char *path = g_build_filename(o->save, name, NULL);
  if (!ts_npy_save(path, out)) {
    cli_fail_engine(CLI_EXIT_FAILED);
    return NULL;
  }
  char *type = ts_shape_dtype_string(ts_tensor_dtype(out), ts_tensor_shape(out));
  char *line = g_strdup_printf("saved %s: %s", path, type);
  free(type);
  return line;
}

/* --save: every result of call k, one line each; NULL after an error. */
static char *save_results(const cli_options *o, ts_function *fn, int k, ts_tensor *const *out,
                          int n)
{
  GString *lines = g_string_new(NULL);
  for (int j = 0; j < n; j++) {
    char *line = save_result(o, fn, k, n > 1 ? j + 1 : 0, out[j]);
    if (!line)
      return g_string_free(lines, TRUE);
    g_string_append_printf(lines, "%s%s", j ? "\n" : "", line);
    g_free(line);
  }
  return g_string_free(lines, FALSE);
}

/* Makes every call of o, `repeat` times each, printing each result (all
 * of a tuple's, as Python prints a tuple; None) or, with --save, writing
 * each as a .npy file and printing where. */
static int call_all(const cli_options *o, ts_function *fn, const cli_args *calls, int n_calls,
                    const cli_args *concrete)
{
  ts_concrete *cf = NULL;
  if (concrete && !(cf = ts_function_get_concrete(fn, concrete->v, concrete->n)))
    return cli_fail_engine(CLI_EXIT_FAILED);
  int k = 0;
  for (int c = 0; c < n_calls; c++) {
    for (int64_t r = 0; r < o->repeat; r++) {
      ts_scope *scope = ts_scope_begin();
      ts_tensor *out[TS_MAX_RETURNS];
      bool tuple = false;
      int n = cf ? ts_concrete_call_n(cf, calls[c].v, calls[c].n, out, TS_MAX_RETURNS, &tuple)
                 : ts_function_call_n(fn, calls[c].v, calls[c].n, out, TS_MAX_RETURNS, &tuple);
      /* None (n == 0) prints as Python prints it, --save or not: nothing to save */
      char *text = n == 0 || (n > 0 && !o->save) ? ts_results_to_string(out, n, tuple) : NULL;
      char *saved = n > 0 && o->save ? save_results(o, fn, ++k, out, n) : NULL;
      ts_scope_end(scope);
      if (!text && !saved)
        return n > 0 && o->save ? CLI_EXIT_FAILED : cli_fail_engine(CLI_EXIT_FAILED);
      printf("%s\n", text ? text : saved);
      free(text);
      g_free(saved);
    }
  }
  return EXIT_SUCCESS;
}

static int run_here(const cli_options *o)
{
  int n_calls = o->calls->len > 0 ? (int)o->calls->len : 1;
  cli_args *calls = g_new0(cli_args, n_calls);
  cli_args concrete = { 0 };
  GPtrArray *none = g_ptr_array_new();
  ts_module *module = NULL;
  ts_function *fn = NULL;
  ts_scope *scope = ts_scope_begin();
  int ret = CLI_EXIT_USAGE;
  for (int c = 0; c < n_calls; c++)
    if (!cli_args_parse(o->calls->len > 0 ? g_ptr_array_index(o->calls, c) : none, &calls[c]))
      goto out;
  if (o->concrete->len > 0 && !cli_concrete_parse(o->concrete, &concrete))
    goto out;
  if ((ret = cli_open_function(o, &module, &fn)) != 0)
    goto out;
  if (o->concrete->len > 0 && (ret = cli_check_arity(fn, concrete.n, "--concrete")) != 0)
    goto out;
  /* a call given no --arg (none at all, or a --call without any): the
   * module's example arguments, if it gives them */
  const char *const *examples = cli_examples(module, fn);
  for (int c = 0; examples && c < n_calls; c++) {
    if (o->calls->len > 0 && ((GPtrArray *)g_ptr_array_index(o->calls, c))->len > 0)
      continue;
    g_autoptr(GPtrArray) specs = g_ptr_array_new();
    for (const char *const *e = examples; *e; e++)
      g_ptr_array_add(specs, (char *)*e);
    cli_args_clear(&calls[c]);
    if (!cli_args_parse(specs, &calls[c])) {
      ret = CLI_EXIT_FAILED;
      goto out;
    }
  }
  for (int c = 0; c < n_calls; c++)
    if ((ret = cli_check_arity(fn, calls[c].n, "--arg")) != 0)
      goto out;

  ts_run_functions_eagerly(o->eager);
  ts_function_set_check_eagerly(fn, o->check_eagerly);
  int listener = cli_listen(o->trace_log);
  ret = call_all(o, fn, calls, n_calls, o->concrete->len > 0 ? &concrete : NULL);
  ts_listener_remove(listener);
  if (o->kernels)
    print_kernels();
out:
  ts_module_free(module);
  for (int c = 0; c < n_calls; c++)
    cli_args_clear(&calls[c]);
  g_free(calls);
  cli_args_clear(&concrete);
  g_ptr_array_unref(none);
  ts_scope_end(scope);
  return ret;
}

/* In this process, or (--isolate) through a worker. */
static int run(const cli_options *o)
{
  return o->isolate ? cli_run_isolated(o) : run_here(o);
}

int cli_run(int argc, char **argv)
{
  return cli_command_main(CLI_RUN, argc, argv, run);
}
