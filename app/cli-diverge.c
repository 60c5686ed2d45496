/* cli-diverge.c — `diverge`: runs a function eagerly and as a graph on the
 * same arguments and prints the divergence report (ts_diverge).  Exit
 * status 0: no divergence, 1: divergence, 2: error of any kind. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { DIVERGE_NONE = 0, DIVERGE_FOUND = 1, DIVERGE_ERROR = 2 };

/* ts_diverge with what the C code prints sent to stderr: stdout has the report. */
static bool diverge_aside(ts_function *fn, const cli_args *a, const ts_diverge_options *opt,
                          ts_diverge_report **rep)
{
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  if (saved >= 0)
    dup2(STDERR_FILENO, STDOUT_FILENO);
  bool ok = ts_diverge(fn, a->v, a->n, opt, rep);
  fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  return ok;
}

static int diverge(const cli_options *o)
{
  GPtrArray *none = g_ptr_array_new();
  cli_args args = { 0 };
  ts_module *module = NULL;
  ts_function *fn = NULL;
  ts_scope *scope = ts_scope_begin();
  int ret = DIVERGE_ERROR;
  if (!cli_args_parse(o->calls->len ? g_ptr_array_index(o->calls, 0) : none, &args))
    goto out;
  if (cli_open_function(o, &module, &fn) != 0)
    goto out;
  /* no --arg at all: the module's example arguments, if it gives them */
  const char *const *examples = o->calls->len == 0 ? cli_examples(module, fn) : NULL;
  if (examples) {
    g_autoptr(GPtrArray) specs = g_ptr_array_new();
    for (const char *const *e = examples; *e; e++)
      g_ptr_array_add(specs, (char *)*e);
    cli_args_clear(&args);
    if (!cli_args_parse(specs, &args))
      goto out;
  }
  if (cli_check_arity(fn, args.n, "--arg") != 0)
    goto out;

  ts_diverge_options opt = { .atol = o->atol, .rtol = o->rtol, .nan_differs = o->nan_differs };
  ts_diverge_report *rep = NULL;
  int listener = cli_listen(false);
  bool ok = diverge_aside(fn, &args, &opt, &rep);
  ts_listener_remove(listener);
  if (!ok) {
    cli_fail_engine(DIVERGE_ERROR);
    goto out;
  }
  char *text = ts_diverge_report_format(rep);
  fputs(text, stdout);
  free(text);
  ret = rep->diverged ? DIVERGE_FOUND : DIVERGE_NONE;
  ts_diverge_report_free(rep);
out:
  ts_module_free(module);
  cli_args_clear(&args);
  g_ptr_array_unref(none);
  ts_scope_end(scope);
  return ret;
}

int cli_diverge(int argc, char **argv)
{
  return cli_command_main(CLI_DIVERGE, argc, argv, diverge);
}
