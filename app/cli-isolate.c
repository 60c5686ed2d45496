/* cli-isolate.c — `run --isolate` (or `--remote HOST`, the worker on HOST
 * through ssh): the calls go to a tracescope-worker
 * process (worker/ts-worker.h), as the app makes them.  What the module
 * prints comes out on our stdout and stderr; a crash is reported the way
 * the app reports it (what happened, the last op, the backtrace) and the
 * CLI exits with status 1. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts-worker.h"

typedef struct {
  const cli_options *o;
  GAsyncResult *result;
} Session;

static void store_result(GObject *source, GAsyncResult *res, gpointer data)
{
  ((Session *)data)->result = g_object_ref(res);
}

/* Runs the main context until the operation started with store_result is done. */
static GAsyncResult *await(Session *s)
{
  while (!s->result)
    g_main_context_iteration(NULL, TRUE);
  GAsyncResult *res = s->result;
  s->result = NULL;
  return res;
}

static void on_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 time, Session *s)
{
  FILE *out = fd == 2 ? stderr : stdout;
  fprintf(out, "%s\n", line);
  fflush(out);
}

static void on_trace(TsWorker *w, TsWorkerTrace *t, Session *s)
{
  if (s->o->trace_log)
    cli_print_trace(t->function, t->signature, t->reason, t->reason_text, t->duration_ns, t->n_concrete,
                    t->error != NULL);
}

static void on_warning(TsWorker *w, guint call_id, guint kind, const char *function,
                       const char *message, const char *arguments, Session *s)
{
  if (s->o->trace_log) {
    printf("[warning] %s\n", message);
  } else {
    fflush(stdout);
    fprintf(stderr, "tracescope-cli: warning: %s\n", message);
  }
}

/* "segv crashed: SIGSEGV (...)" (the module, for a death outside calls:
 * "bad.so crashed while loading the module: ..."), then what the app's
 * console shows. */
static int fail_died(const cli_options *o, const TsWorkerDeath *d)
{
  cli_fail(CLI_EXIT_FAILED, "%s %s", d->call_id ? o->function : o->module, d->summary);
  if (d->last_op)
    fprintf(stderr, "last op started: %s\n", d->last_op);
  if (d->backtrace)
    fprintf(stderr, "backtrace of the worker:\n%s", d->backtrace);
  return CLI_EXIT_FAILED;
}

/* A death is reported once the worker is reaped (cli_run_isolated). */
static int fail_call(GError *error)
{
  if (g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED))
    return CLI_EXIT_FAILED;
  return cli_fail(CLI_EXIT_FAILED, "%s", error->message);
}

/* --arg specs of call c as a NULL-terminated array (borrowed strings). */
static const char **call_args(const cli_options *o, guint c)
{
  GPtrArray *specs = o->calls->len > 0 ? g_ptr_array_index(o->calls, c) : NULL;
  guint n = specs ? specs->len : 0;
  const char **args = g_new0(const char *, n + 1);
  for (guint i = 0; i < n; i++)
    args[i] = g_ptr_array_index(specs, i);
  return args;
}

static int set_signature(Session *s, TsWorker *w)
{
  const cli_options *o = s->o;
  g_autofree const char **specs = g_new0(const char *, o->input_signature->len + 1);
  for (guint i = 0; i < o->input_signature->len; i++)
    specs[i] = g_ptr_array_index(o->input_signature, i);
  ts_worker_set_input_signature_async(w, o->function, specs, NULL, store_result, s);
  g_autoptr(GAsyncResult) res = await(s);
  g_autoptr(GError) error = NULL;
  if (!ts_worker_set_input_signature_finish(w, res, &error))
    return cli_fail(CLI_EXIT_USAGE, "--input-signature: %s", error->message);
  return 0;
}

static int make_calls(Session *s, TsWorker *w, const TsWorkerFunction *fn)
{
  const cli_options *o = s->o;
  guint n_calls = MAX(o->calls->len, 1), id = 0;
  for (guint c = 0; c < n_calls; c++) {
    g_autofree const char **args = call_args(o, c);
    /* a call given no --arg (none at all, or a --call without any): the
     * module's example arguments, if it gives them */
    const char *const *call = !args[0] && fn && fn->examples ? (const char *const *)fn->examples : args;
    for (int64_t r = 0; r < o->repeat; r++) {
      g_autoptr(GError) error = NULL;
      g_autoptr(TsCallResult) result =
        ts_worker_call_sync(w, ++id, o->function, call, 1, o->eager, NULL, NULL, &error);
      if (!result)
        return fail_call(error);
      printf("%s\n", result->value_text);
    }
  }
  return EXIT_SUCCESS;
}

static int run(Session *s, TsWorker *w)
{
  const cli_options *o = s->o;
  g_autoptr(GError) error = NULL;
  ts_worker_start_async(w, NULL, store_result, s);
  g_autoptr(GAsyncResult) started = await(s);
  if (!ts_worker_start_finish(w, started, &error))
    return cli_fail(CLI_EXIT_FAILED, "%s", error->message);
  ts_worker_open_async(w, o->module, NULL, store_result, s);
  g_autoptr(GAsyncResult) opened = await(s);
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  if (!ts_worker_open_finish(w, opened, &title, &path, &functions, &error))
    return fail_call(error);
  int ret;
  if (o->input_signature->len > 0 && (ret = set_signature(s, w)) != 0)
    return ret;
  const TsWorkerFunction *fn = NULL;
  for (guint i = 0; i < functions->len; i++)
    if (strcmp(((TsWorkerFunction *)g_ptr_array_index(functions, i))->name, o->function) == 0)
      fn = g_ptr_array_index(functions, i);
  return make_calls(s, w, fn);
}

static gboolean has_died(gpointer data)
{
  return ts_worker_get_death(data) != NULL;
}

int cli_run_isolated(const cli_options *o)
{
  Session s = { .o = o };
  TsWorker *w = ts_worker_new(0);
  if (o->remote)
    ts_worker_set_remote(w, o->remote);
  g_signal_connect(w, "output", G_CALLBACK(on_output), &s);
  g_signal_connect(w, "trace", G_CALLBACK(on_trace), &s);
  g_signal_connect(w, "warning", G_CALLBACK(on_warning), &s);
  int ret = run(&s, w);
  ts_worker_close(w);
  while (!has_died(w) && ts_worker_get_pid(w))
    g_main_context_iteration(NULL, TRUE); /* its last lines and its end */
  const TsWorkerDeath *d = ts_worker_get_death(w);
  if (d && !d->expected)
    ret = fail_died(o, d);
  g_signal_handlers_disconnect_by_data(w, &s);
  g_object_unref(w);
  return ret;
}
