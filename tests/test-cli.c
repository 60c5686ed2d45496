/* test-cli.c — tracescope-cli ($TRACESCOPE_CLI) run as a user runs it. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <tracescope.h>

typedef struct cli_result {
  int status; /* exit status */
  char *out, *err;
} cli_result;

static void cli_result_clear(cli_result *r)
{
  g_free(r->out);
  g_free(r->err);
}

/* Runs the CLI with the arguments in args (NULL-terminated). */
static cli_result cli_v(const char *const *args)
{
  const char *exe = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(exe);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)exe);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (char *)*a);
  g_ptr_array_add(argv, NULL);

  cli_result r = { 0 };
  int wait_status;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out,
                             &r.err, &wait_status, &error));
  g_assert_no_error(error);
  g_ptr_array_unref(argv);
  if (!g_spawn_check_wait_status(wait_status, &error)) {
    g_assert_true(error->domain == G_SPAWN_EXIT_ERROR); /* exited, not killed by a signal */
    r.status = error->code;
    g_error_free(error);
  }
  return r;
}

/* Runs the CLI with the NULL-terminated arguments. */
static cli_result cli(const char *first, ...)
{
  GPtrArray *args = g_ptr_array_new();
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a; a = va_arg(ap, const char *))
    g_ptr_array_add(args, (char *)a);
  va_end(ap);
  g_ptr_array_add(args, NULL);
  cli_result r = cli_v((const char *const *)args->pdata);
  g_ptr_array_unref(args);
  return r;
}

/* A successful run printing exactly `expected` on stdout and nothing on stderr. */
static void expect_output(cli_result r, const char *expected)
{
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, expected);
  cli_result_clear(&r);
}

/* A failed run: exit status `status`, nothing on stdout, exactly one stderr
 * line "tracescope-cli: error: ..." holding `fragment`. */
static void expect_failure(cli_result r, int status, const char *fragment)
{
  g_assert_cmpint(r.status, ==, status);
  g_assert_cmpstr(r.out, ==, "");
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: error: "));
  g_assert_true(g_str_has_suffix(r.err, "\n"));
  g_assert_true(strchr(r.err, '\n') == r.err + strlen(r.err) - 1); /* one line */
  if (!strstr(r.err, fragment))
    g_error("stderr '%s' lacks '%s'", r.err, fragment);
  cli_result_clear(&r);
}

/* --threads: the same printed results at any count, also through a worker
 * (a mean of 300001 values: split across threads). */
static void test_threads(void)
{
  const char *argv[] = { "run", "seeds", "get_MSE", "--arg", "f64[300001]:uniform", "--arg",
                         "f64[300001]:uniform@2", "--threads", "1", NULL, NULL };
  cli_result one = cli_v(argv);
  g_assert_cmpint(one.status, ==, 0);
  g_assert_true(g_str_has_prefix(one.out, "Calculating MSE!\nTensor("));
  argv[8] = "3";
  for (int i = 0; i < 2; i++) {
    argv[9] = i ? "--isolate" : NULL;
    cli_result r = cli_v(argv);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.out, ==, one.out);
    cli_result_clear(&r);
  }
  cli_result_clear(&one);
  expect_failure(cli("run", "seeds", "deep_net", "--threads", "-1", NULL), 2,
                 "--threads needs a count from 0 (every core) to 256, not '-1'");
  expect_failure(cli("graph", "seeds", "deep_net", "--threads", "2", NULL), 2,
                 "--threads is not an option of graph");
}

/* run --isolate: the same results through a worker; a crash there is
 * reported with its cause and backtrace, and the CLI exits 1. */
static void test_isolate(void)
{
  expect_output(cli("run", "seeds", "deep_net", "--isolate", "--call", "--arg", "i32[3]=1,2,3", "--call",
                    "--arg", "i32[3]=2,3,4", NULL),
                "Tensor([3 5 7], shape=(3,), dtype=int32)\nTensor([5 7 9], shape=(3,), dtype=int32)\n");
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  cli_result r = cli("run", module, "chatty", "--isolate", "--arg", "f32[2]=1,2", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "chatty out 1\nchatty out 2 (no newline)\nTensor([2. 4.], shape=(2,), dtype=float32)\n");
  g_assert_cmpstr(r.err, ==, "chatty err\n");
  cli_result_clear(&r);
  r = cli("run", module, "segv", "--isolate", "--mode", "eager", "--arg", "f32[2]=1,2", NULL);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: error: segv crashed: SIGSEGV (segmentation fault"));
  g_assert_nonnull(strstr(r.err, "\nlast op started: Relu at "));
  g_assert_nonnull(strstr(r.err, "\nbacktrace of the worker:\n#0  segv (misbehave.c:"));
  cli_result_clear(&r);
  r = cli("run", module, "exit_call", "--isolate", "--arg", "1", NULL);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.err, ==, "tracescope-cli: error: exit_call called exit(3)\n");
  cli_result_clear(&r);
  expect_failure(cli("run", "seeds", "deep_net", "--isolate", "--reduce-retracing", NULL), 2,
                 "--isolate takes --arg, --call, --mode, --repeat, --input-signature and --trace-log; "
                 "not --reduce-retracing");
}

/* run --isolate with a module that attacks its worker: closing or writing
 * over the worker's fds changes nothing; a crash after forking a child
 * that never exits is reported (and the child killed with the worker);
 * a crash while loading says so, with the backtrace. */
static void test_isolate_hostile(void)
{
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "hostile.so", NULL);
  static const char *const survived[] = { "close_std", "close_fds", "scribble_fds" };
  for (guint i = 0; i < G_N_ELEMENTS(survived); i++)
    expect_output(cli("run", module, survived[i], "--isolate", "--mode", "eager", "--call", "--arg", "f32[]=1",
                      "--call", "--arg", "f32[]=2", NULL),
                  "Tensor(2.0, shape=(), dtype=float32)\nTensor(3.0, shape=(), dtype=float32)\n");
  cli_result r = cli("run", module, "fork_segv", "--isolate", "--mode", "eager", "--arg", "f32[]=1", NULL);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.out, "child "));
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: error: fork_segv crashed: SIGSEGV (segmentation fault"));
  g_assert_nonnull(strstr(r.err, "\nbacktrace of the worker:\n#0  fork_segv (hostile.c:"));
  cli_result_clear(&r);
  g_autofree char *ctor = g_build_filename(TS_TEST_MODULES_DIR, "ctor-crash.so", NULL);
  r = cli("run", ctor, "never", "--isolate", "--arg", "f32[]=1", NULL);
  g_assert_cmpint(r.status, ==, 1);
  g_autofree char *said = g_strdup_printf("tracescope-cli: error: %s crashed while loading the module: SIGSEGV "
                                          "(segmentation fault", ctor);
  g_assert_true(g_str_has_prefix(r.err, said));
  g_assert_nonnull(strstr(r.err, "\nbacktrace of the worker:\n#0  crash_on_load (ctor-crash.c:"));
  cli_result_clear(&r);
}

/* run --kernels: the CPU, the BLAS and a line per product shape on stderr,
 * the results alone on stdout. */
static void test_kernels(void)
{
  cli_result r = cli("run", "seeds", "simple_nn_layer", "--kernels", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "Tensor("));
  g_assert_nonnull(strstr(r.err, "[kernels] CPU: "));
  g_assert_nonnull(strstr(r.err, "[kernels] BLAS: "));
  g_assert_nonnull(strstr(r.err, "[kernels] matmul 3x3x3: "));
  cli_result_clear(&r);
  expect_failure(cli("run", "seeds", "deep_net", "--isolate", "--kernels", NULL), 2,
                 "not --kernels");
}

static void test_deep_net(void)
{
  /* no --arg: the example arguments the seeds declare */
  expect_output(cli("run", "seeds", "deep_net", NULL), "Tensor([3 5 7], shape=(3,), dtype=int32)\n");
  expect_output(cli("run", "seeds", "deep_net", "--isolate", NULL), "Tensor([3 5 7], shape=(3,), dtype=int32)\n");
  expect_output(cli("run", "seeds", "deep_net", "--arg", "i32[3]=1,2,3", NULL),
                "Tensor([3 5 7], shape=(3,), dtype=int32)\n");
  expect_output(cli("run", "seeds", "deep_net", "--mode", "eager", "--arg=i32[3]=1,2,3", NULL),
                "Tensor([3 5 7], shape=(3,), dtype=int32)\n");
  /* a --call given no --arg: the example arguments too (it said the module
   * gave none), in the worker and when tracing only */
  const char *twice = "Tensor([3 5 7], shape=(3,), dtype=int32)\nTensor([3 5 7], shape=(3,), dtype=int32)\n";
  expect_output(cli("run", "seeds", "deep_net", "--call", "--call", NULL), twice);
  expect_output(cli("run", "seeds", "deep_net", "--isolate", "--call", "--call", NULL), twice);
  expect_output(cli("run", "seeds", "deep_net", "--call", "--arg", "i32[2]=1,2", "--call", NULL),
                "Tensor([3 5], shape=(2,), dtype=int32)\nTensor([3 5 7], shape=(3,), dtype=int32)\n");
  expect_output(cli("signatures", "seeds", "deep_net", "--call", "--arg", "i32[2]=1,2", "--call", NULL),
                "deep_net(x)\n  Args:\n    x: int32 Tensor, shape=(2,)\n  Returns:\n    int32 Tensor, shape=(2,)\n\n"
                "deep_net(x)\n  Args:\n    x: int32 Tensor, shape=(3,)\n  Returns:\n    int32 Tensor, shape=(3,)\n");
}

static void test_seed_programs(void)
{
  expect_output(cli("run", "seeds", "function_to_get_faster", "--arg", "f32[1,2]=1,2", "--arg",
                    "f32[2,1]=2,3", "--arg", "4", NULL),
                "Tensor([[12.]], shape=(1, 1), dtype=float32)\n");
  expect_output(cli("run", "seeds", "get_MSE", "--arg", "i32[5]=1,4,3,1,3", "--arg",
                    "i32[5]=0,3,8,0,6", NULL),
                "Calculating MSE!\nTensor(7, shape=(), dtype=int32)\n");
  expect_output(cli("run", "seeds", "square_if_positive_vectorized", "--arg", "i32[10]:range(-5)",
                    NULL),
                "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16], shape=(10,), dtype=int32)\n");
  expect_output(cli("run", "seeds", "square_if_positive_vectorized", "--arg",
                    "i32[10]=-5,-4,-3,-2,-1,0,1,2,3,4", NULL),
                "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16], shape=(10,), dtype=int32)\n");
  expect_output(cli("run", "seeds", "simple_nn_layer", "--arg", "f32[1,2]=1,-2", "--arg",
                    "f32[2,2]=1,0,0,1", NULL),
                "Tensor([[1. 0.]], shape=(1, 2), dtype=float32)\n");
  /* one line per call */
  expect_output(cli("run", "seeds", "deep_net", "--arg", "i32[]=1", "--repeat", "3", NULL),
                "Tensor(3, shape=(), dtype=int32)\nTensor(3, shape=(), dtype=int32)\n"
                "Tensor(3, shape=(), dtype=int32)\n");
}

static void test_list(void)
{
  cli_result r = cli("list", "seeds", NULL);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "seeds\n  simple_nn_layer(x, y)\n"));
  /* the programs of the guides, by the names tests and users call them by */
  static const char *const names[] = {
    "function_to_get_faster", "outer_function", "square_if_positive", "sum_even", "fizzbuzz",
    "my_function", "simple_relu", "my_relu", "a_function_with_python_side_effect", "get_MSE",
    "shape_retrace", "poly_func", "find_next_odd", "side_effect", "unused_return",
    "custom_model", "square_if_positive_naive", "sequential_model", "lstm_fn", "conv_fn", "train",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *line = g_strdup_printf("\n  %s(", names[i]);
    if (!strstr(r.out, line))
      g_error("list lacks %s:\n%s", names[i], r.out);
    g_free(line);
  }
  cli_result_clear(&r);
  /* a module that exports nothing yet: its title, and how to export */
  g_autofree char *empty = g_build_filename(TS_TEST_MODULES_DIR, "empty.so", NULL);
  r = cli("list", empty, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "empty\n");
  g_assert_cmpstr(r.err, ==,
                  "note: empty.so exports no functions: name them in its TS_MODULE(...) with TS_EXPORT(fn, x, ...)\n");
  cli_result_clear(&r);
}

static void test_help(void)
{
  cli_result r = cli("--help", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "Usage: tracescope-cli COMMAND"));
  g_assert_nonnull(strstr(r.out, "f32[2,3]=1,2,3,4,5,6"));
  g_assert_nonnull(strstr(r.out, "'tracescope-cli COMMAND --help'"));
  g_assert_cmpstr(r.err, ==, "");
  cli_result_clear(&r);
}

/* The commands `--help` lists, in order. */
static GPtrArray *listed_commands(void)
{
  cli_result r = cli("--help", NULL);
  const char *at = strstr(r.out, "Commands:\n");
  g_assert_nonnull(at);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) lines = g_strsplit(at + strlen("Commands:\n"), "\n", -1);
  for (char **l = lines; *l && g_str_has_prefix(*l, "  "); l++)
    g_ptr_array_add(names, g_strndup(*l + 2, strcspn(*l + 2, " ")));
  cli_result_clear(&r);
  return names;
}

/* The options a command's help lists ("--arg", ...), from its Options section. */
static GPtrArray *listed_options(const char *help)
{
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *at = strstr(help, "\nOptions:\n");
  if (!at)
    return names;
  g_auto(GStrv) lines = g_strsplit(at + strlen("\nOptions:\n"), "\n", -1);
  for (char **l = lines; *l && **l; l++)
    if (g_str_has_prefix(*l, "  --"))
      g_ptr_array_add(names, g_strndup(*l + 2, strcspn(*l + 2, " ")));
  return names;
}

/* COMMAND --help is that command's help, not the whole: its usage, its
 * options (each one it takes, none it refuses) and an example; also after
 * other words. */
static void test_command_help(void)
{
  g_autoptr(GPtrArray) commands = listed_commands();
  g_assert_cmpuint(commands->len, >=, 14);
  for (guint i = 0; i < commands->len; i++) {
    const char *name = commands->pdata[i];
    cli_result r = cli(name, "--help", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.err, ==, "");
    g_autofree char *usage = g_strdup_printf("Usage: tracescope-cli %s ", name);
    if (!g_str_has_prefix(r.out, usage))
      g_error("%s --help starts '%.60s'", name, r.out);
    g_assert_nonnull(strstr(r.out, "\nExample:\n  "));
    g_assert_null(strstr(r.out, "Commands:"));
    for (guint j = 0; j < commands->len; j++) {
      g_autofree char *other = g_strdup_printf("Usage: tracescope-cli %s ", (char *)commands->pdata[j]);
      if (j != i && strstr(r.out, other))
        g_error("%s --help has %s's usage", name, (char *)commands->pdata[j]);
    }
    cli_result_clear(&r);
  }
  /* run's options are run's: --save, not debug's --break or profile's --csv */
  cli_result run = cli("run", "seeds", "deep_net", "--help", NULL);
  g_assert_true(g_str_has_prefix(run.out, "Usage: tracescope-cli run "));
  g_autoptr(GPtrArray) run_options = listed_options(run.out);
  g_assert_true(g_ptr_array_find_with_equal_func(run_options, "--save", g_str_equal, NULL));
  g_assert_true(g_ptr_array_find_with_equal_func(run_options, "--arg", g_str_equal, NULL));
  g_assert_false(g_ptr_array_find_with_equal_func(run_options, "--break", g_str_equal, NULL));
  g_assert_false(g_ptr_array_find_with_equal_func(run_options, "--csv", g_str_equal, NULL));
  cli_result_clear(&run);
  cli_result debug = cli("debug", "--help", NULL);
  g_autoptr(GPtrArray) debug_options = listed_options(debug.out);
  g_assert_true(g_ptr_array_find_with_equal_func(debug_options, "--break", g_str_equal, NULL));
  g_assert_false(g_ptr_array_find_with_equal_func(debug_options, "--save", g_str_equal, NULL));
  g_assert_nonnull(strstr(debug.out, "step|s")); /* its commands */
  cli_result_clear(&debug);
  /* an option of another command is refused, pointing at this one's help */
  expect_failure(cli("run", "seeds", "deep_net", "--break", "MatMul", NULL), 2,
                 "--break is not an option of run (see: tracescope-cli run --help)");
  expect_failure(cli("runn", "seeds", NULL), 2, "unknown command 'runn' (did you mean 'run'?");
  /* two letters swapped are one typo */
  expect_failure(cli("rnu", "seeds", NULL), 2, "unknown command 'rnu' (did you mean 'run'?");
  expect_failure(cli("porfile", "seeds", NULL), 2, "unknown command 'porfile' (did you mean 'profile'?");
  expect_failure(cli("run", "seeds", "deep_net", "--sav", "x", NULL), 2,
                 "unknown option '--sav' (did you mean '--save'? see: tracescope-cli run --help)");
  expect_failure(cli("debug", "seeds", "power", "--brek=MatMul", NULL), 2, "(did you mean '--break'?");

  /* `help [COMMAND]`, as git and meson take it: --help's text, or the command's */
  cli_result help = cli("help", NULL), whole = cli("--help", NULL);
  g_assert_cmpint(help.status, ==, 0);
  g_assert_cmpstr(help.out, ==, whole.out);
  g_assert_cmpstr(help.err, ==, "");
  cli_result_clear(&help);
  cli_result_clear(&whole);
  cli_result help_run = cli("help", "run", NULL), run_help = cli("run", "--help", NULL);
  g_assert_cmpint(help_run.status, ==, 0);
  g_assert_cmpstr(help_run.out, ==, run_help.out);
  cli_result_clear(&help_run);
  cli_result_clear(&run_help);
  expect_failure(cli("help", "rnu", NULL), 2, "unknown command 'rnu' (did you mean 'run'?");
  expect_failure(cli("help", "run", "list", NULL), 2, "help takes at most one COMMAND");
}

/* Each command takes every option its help lists: given one (with a value
 * where it needs one), no command says it is not its option. */
static void test_command_help_options(void)
{
  g_autoptr(GPtrArray) commands = listed_commands();
  for (guint i = 0; i < commands->len; i++) {
    const char *name = commands->pdata[i];
    if (g_str_equal(name, "list") || g_str_equal(name, "onnx-test"))
      continue; /* their own parsers */
    cli_result r = cli(name, "--help", NULL);
    g_autoptr(GPtrArray) options = listed_options(r.out);
    g_assert_cmpuint(options->len, >=, 1);
    for (guint k = 0; k < options->len; k++) {
      /* with a value (a bad one at worst, or an operand after a flag);
       * parsing stops at --help, having applied the option */
      cli_result o = cli(name, options->pdata[k], "x", "--help", NULL);
      g_autofree char *refused = g_strdup_printf("%s is not an option", (char *)options->pdata[k]);
      g_assert_null(strstr(o.err, refused));
      cli_result_clear(&o);
    }
    cli_result_clear(&r);
  }
}

/* onnx-test's help describes every option its usage line names. */
static void test_help_onnx_test_options(void)
{
  cli_result own = cli("onnx-test", "--help", NULL);
  g_assert_cmpint(own.status, ==, 0);
  const char *options = strstr(own.out, "\nOptions:\n");
  g_assert_nonnull(options);
  g_autoptr(GRegex) option = g_regex_new("\\[(--[a-z-]+)", 0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  int n = 0;
  for (g_regex_match(option, own.out, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL), n++) {
    g_autofree char *name = g_match_info_fetch(m, 1);
    g_autofree char *line = g_strdup_printf("\n  %s ", name);
    if (!strstr(options, line))
      g_error("onnx-test --help does not describe %s", name);
  }
  g_assert_cmpint(n, >=, 5);
  cli_result_clear(&own);
}

/* --help's list of the dtypes an argument spec takes is the parser's own
 * (ts_value_spec_dtypes, which /module/spec-dtype-list checks against
 * what parses). */
static void test_help_dtypes(void)
{
  cli_result r = cli("--help", NULL);
  const char *at = strstr(r.out, "dtypes: ");
  g_assert_nonnull(at);
  at += strlen("dtypes: ");
  g_autofree char *listed = g_strndup(at, strcspn(at, "\n"));
  g_autofree char *dtypes = ts_value_spec_dtypes(" ");
  g_assert_cmpstr(g_strstrip(listed), ==, dtypes);
  cli_result_clear(&r);
}

/* The words of the row of `key` in a table printed by stats, top or diff. */
static char **row_words(const char *out, const char *key)
{
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  for (char **l = lines; *l; l++) {
    char *text = g_strstrip(g_strdup(*l));
    if (g_str_has_prefix(text, key) && text[strlen(key)] == ' ') {
      char **w = g_regex_split_simple("\\s+", text + strlen(key), 0, 0);
      g_free(text);
      return w;
    }
    g_free(text);
  }
  g_error("no row '%s' in:\n%s", key, out);
}

/* Chrome traces: PyTorch's profiler's (gzipped, nested spans), read by
 * stats, top and diff; a trace given where a module goes says what to do. */
static void test_trace_files(void)
{
  g_autofree char *torch = g_test_build_filename(G_TEST_DIST, "data", "traces", "torch-mlp.json.gz", NULL);
  cli_result r = cli("stats", torch, NULL);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "1 thread, 354 ops"));
  /* torch's key_averages: aten::linear 6 calls, 68 µs total, 7 µs self */
  g_auto(GStrv) linear = row_words(r.out, "aten::linear");
  g_assert_cmpstr(linear[1], ==, "6");
  g_assert_cmpstr(linear[2], ==, "68.00");
  g_assert_cmpstr(linear[3], ==, "7.00");
  cli_result_clear(&r);

  r = cli("top", torch, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Top ops by self time"));
  g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
  int i = 0;
  while (lines[i] && !g_str_has_prefix(lines[i], "Top ops"))
    i++;
  g_assert_true(g_str_has_prefix(g_strstrip(lines[i + 2]), "aten::mm ")); /* 74 µs self, the most */
  g_assert_nonnull(strstr(r.out, "(25 more)"));
  cli_result_clear(&r);

  r = cli("diff", torch, torch, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_auto(GStrv) mm = row_words(r.out, "aten::mm");
  g_assert_cmpstr(mm[1], ==, "9");
  g_assert_cmpstr(mm[2], ==, "9");
  g_assert_cmpstr(mm[7], ==, "1.00x");
  cli_result_clear(&r);

  expect_failure(cli("profile", torch, "f", NULL), 2, "is a trace, not a module: read it with tracescope-cli stats");
  expect_failure(cli("stats", NULL), 2, "stats needs a trace file");
  expect_failure(cli("diff", torch, NULL), 2, "diff needs two trace files");
  expect_failure(cli("stats", "/no/such/trace.json", NULL), 1, "/no/such/trace.json");
}

static void test_bad_arguments(void)
{
  /* the cases */
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32[2]=1", NULL), 2,
                 "argument 'f32[2]=1': 2 values expected for f32[2], got 1");
  expect_failure(cli("run", "seeds", "no_such_function", NULL), 1,
                 "module 'seeds' has no function 'no_such_function' (see: tracescope-cli list seeds)");
  /* a typo names the function meant */
  expect_failure(cli("run", "seeds", "sequential_modle", NULL), 1,
                 "module 'seeds' has no function 'sequential_modle' (did you mean 'sequential_model'? "
                 "see: tracescope-cli list seeds)");
  expect_failure(cli("run", "seeds", "Deep_Net", NULL), 1, "(did you mean 'deep_net'? ");
  expect_failure(cli("run", "/no/such/module.so", "f", NULL), 1,
                 "cannot open module '/no/such/module.so': no such file");
  expect_failure(cli("list", "/no/such/module.so", NULL), 1,
                 "cannot open module '/no/such/module.so'");

  /* refused modules */
  char *path = g_test_build_filename(G_TEST_BUILT, "modules", "wrong-abi.so", NULL);
  g_autofree char *wrong = g_strdup_printf("was built for Tracescope ABI %d, this is ABI %d",
                                            TS_ABI_VERSION + 1, TS_ABI_VERSION);
  expect_failure(cli("list", path, NULL), 1, wrong);
  g_free(path);
  path = g_test_build_filename(G_TEST_BUILT, "modules", "no-symbol.so", NULL);
  expect_failure(cli("run", path, "f", NULL), 1, "symbol tracescope_module not found");
  g_free(path);

  /* bad specs */
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "x32[2]=1,2", NULL), 2,
                 "unknown dtype 'x32'");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32[2,=1,2", NULL), 2,
                 "malformed shape");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "i32[2]=1,two", NULL), 2,
                 "bad number 'two' for i32");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32[3]=1;2;3", NULL), 2,
                 "3 values expected for f32[3], got 1 (values are separated by commas, in row-major order)");
  /* a spec that is not a tensor's reads as a string: the error shows it (48 characters at most) */
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32 [3]=1,2,3", NULL), 1,
                 "deep_net: argument 0 (x) must be a tensor or a number, got a string 'f32 [3]=1,2,3'");
  g_autoptr(GString) long_string = g_string_new(NULL);
  for (int i = 0; i < 60; i++)
    g_string_append(long_string, "\xc3\xa9"); /* é: the cut falls between characters */
  g_autofree char *shown = g_strdup_printf("got a string '%.96s...'", long_string->str);
  expect_failure(cli("run", "seeds", "deep_net", "--arg", long_string->str, NULL), 1, shown);

  /* arity, argument kinds and op errors inside the function */
  expect_failure(cli("run", "seeds", "simple_nn_layer", "--arg", "f32[2,2]:ones", NULL), 2,
                 "simple_nn_layer(x, y) takes 2 arguments, 1 given");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "hello", NULL), 1,
                 "deep_net: argument 0 (x) must be a tensor or a number, got a string");
  expect_failure(cli("run", "seeds", "power", "--arg", "f32[10,10]:ones", "--arg", "2.5", NULL), 1,
                 "power: argument 1 (n) must be an int, got a float 2.5");
  expect_failure(cli("run", "seeds", "simple_nn_layer", "--arg", "f32[2,3]:ones", "--arg",
                     "f32[2,3]:ones", NULL),
                 1, "MatMul: ");

  /* usage */
  /* no command: the usage and the command list on stderr, as git and meson print them */
  cli_result bare = cli(NULL);
  g_assert_cmpint(bare.status, ==, 2);
  g_assert_cmpstr(bare.out, ==, "");
  g_assert_true(g_str_has_prefix(bare.err, "Usage: tracescope-cli COMMAND"));
  cli_result help = cli("--help", NULL);
  g_assert_cmpint(help.status, ==, 0);
  /* the same command list as --help's (every command, one line each) */
  const char *list = strstr(help.out, "Commands:\n"), *list_end = strstr(list, "\n\n");
  g_autofree char *commands = g_strndup(list, (gsize)(list_end - list));
  g_assert_nonnull(strstr(bare.err, commands));
  g_assert_nonnull(strstr(commands, "\n  run "));
  g_assert_nonnull(strstr(commands, "\n  export "));
  cli_result_clear(&bare);
  cli_result_clear(&help);
  expect_failure(cli("frobnicate", NULL), 2, "unknown command 'frobnicate'");
  expect_failure(cli("list", NULL), 2, "list takes one MODULE");
  /* an option list lacks is said to be one, as run says it, and --help anywhere helps */
  expect_failure(cli("list", "seeds", "--verbose", NULL), 2,
                 "unknown option '--verbose' (see: tracescope-cli list --help)");
  expect_failure(cli("list", "seeds", "extra", NULL), 2, "list takes one MODULE, not also 'extra'");
  cli_result list_help = cli("list", "seeds", "--help", NULL);
  g_assert_cmpint(list_help.status, ==, 0);
  g_assert_true(g_str_has_prefix(list_help.out, "Usage: tracescope-cli list MODULE"));
  cli_result_clear(&list_help);
  expect_failure(cli("run", NULL), 2, "run needs a MODULE and a FUNCTION");
  /* the module alone: where its functions are listed */
  expect_failure(cli("run", "seeds", NULL), 2,
                 "run needs a FUNCTION after the MODULE (tracescope-cli list seeds lists them)");
  expect_failure(cli("run", "seeds", "deep_net", "extra", NULL), 2, "unexpected argument 'extra'");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", NULL), 2, "--arg needs a SPEC");
  expect_failure(cli("run", "seeds", "deep_net", "--mode", "lazy", NULL), 2,
                 "--mode must be eager or graph, not 'lazy'");
  expect_failure(cli("run", "seeds", "deep_net", "--repeat", "0", NULL), 2,
                 "--repeat needs a count from 1, not '0'");
  expect_failure(cli("run", "seeds", "deep_net", "--repeat", "x", NULL), 2, "--repeat needs a count");
  expect_failure(cli("run", "seeds", "deep_net", "--verbose", NULL), 2, "unknown option '--verbose'");

  /* options of other commands, bad values, calls that do not fit */
  expect_failure(cli("run", "seeds", "deep_net", "--format", "dot", NULL), 2,
                 "--format is not an option of run");
  expect_failure(cli("graph", "seeds", "deep_net", "--arg", "i32[]=1", "--format", "svg", NULL), 2,
                 "--format must be text or dot, not 'svg'");
  expect_failure(cli("graph", "seeds", "deep_net", "--mode", "eager", NULL), 2,
                 "--mode is not an option of graph");
  expect_failure(cli("run", "seeds", "deep_net", "--trace-log=yes", NULL), 2,
                 "--trace-log takes no value");
  expect_failure(cli("run", "seeds", "deep_net", "--mode", "eager", "--concrete", "i32[3]", NULL), 2,
                 "--concrete calls a traced graph: it cannot be combined with --mode eager");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "i32[]=1", "--call", "--arg", "i32[]=2",
                     NULL),
                 2, "--arg before the first --call");
  expect_failure(cli("run", "seeds", "simple_nn_layer", "--call", "--arg", "f32[1,1]=1", "--arg",
                     "f32[1,1]=1", "--call", "--arg", "f32[1,1]=1", NULL),
                 2, "simple_nn_layer(x, y) takes 2 arguments, 1 given with --arg");
  expect_failure(cli("run", "seeds", "deep_net", "--concrete", "x32[]", NULL), 2,
                 "--concrete 'x32[]': unknown dtype 'x32'");
  expect_failure(cli("run", "seeds", "deep_net", "--concrete", "f32[2,x]", NULL), 2,
                 "--concrete 'f32[2,x]': 'x' is not a dimension");
  expect_failure(cli("run", "seeds", "deep_net", "--input-signature", "2", NULL), 2,
                 "--input-signature '2': expected DTYPE[DIMS], e.g. f32[?,784]");
  expect_failure(cli("run", "seeds", "simple_nn_layer", "--input-signature", "f32[?,2]", NULL), 2,
                 "simple_nn_layer(x, y) takes 2 arguments, 1 given with --input-signature");
  /* a function whose module gives no example arguments needs them given */
  g_autofree char *tiny = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  expect_failure(cli("signatures", tiny, "identity", NULL), 2,
                 "signatures needs arguments to trace identity with");
  expect_failure(cli("run", tiny, "scale", NULL), 2,
                 "scale(x, k) takes 2 arguments, 0 given with --arg (and the module gives no example "
                 "arguments: TS_EXPORT_WITH)");
  expect_output(cli("signatures", "seeds", "deep_net", NULL),
                "deep_net(x)\n  Args:\n    x: int32 Tensor, shape=(3,)\n  Returns:\n    int32 Tensor, shape=(3,)\n");
  expect_failure(cli("graph", "seeds", "deep_net", "--call", "--arg", "i32[]=1", "--call", "--arg",
                     "i32[]=2", NULL),
                 2, "graph traces one call");
  expect_failure(cli("graph", "seeds", "deep_net", "--arg", "i32[]=1", "--concrete", "i32[]", NULL),
                 2, "graph traces one call");
  expect_failure(cli("signatures", "seeds", NULL), 2, "signatures needs a FUNCTION after the MODULE");

  /* dims whose product overflows int64: a clean error naming the op and shape, both modes */
  expect_failure(cli("run", "seeds", "sequential_model", "--mode", "eager", "--arg",
                     "f32[0,4611686018427387904,3]:zeros", NULL), 1,
                 "Flatten: cannot flatten f32[0,4611686018427387904,3]");
  expect_failure(cli("run", "seeds", "sequential_model", "--mode", "graph", "--arg",
                     "f32[0,4611686018427387904,3]:zeros", NULL), 1,
                 "Flatten: cannot flatten f32[0,4611686018427387904,3]");
  /* the seeds' own shape code: a 3x3 kernel's fan (9 * channels) must not overflow */
  expect_failure(cli("run", "seeds", "conv_layer", "--arg", "f32[0,3,3,4611686018427387904]:zeros",
                     NULL), 1, "RandomUniform: shape f32[3,3,4611686018427387904,100] is too large");
  expect_failure(cli("run", "seeds", "conv_fn", "--mode", "graph", "--arg",
                     "f32[0,3,3,4611686018427387904]:zeros", NULL), 1,
                 "RandomUniform: shape f32[3,3,4611686018427387904,100] is too large");
  /* out-of-range dims are errors, not clamped to INT64_MAX */
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32[99999999999999999999]:zeros", NULL),
                 2, "'99999999999999999999' is not a dimension (out of range)");
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "f32[4294967296,4294967296]:zeros", NULL),
                 2, "has too many elements");
  expect_failure(cli("run", "seeds", "deep_net", "--input-signature", "f32[99999999999999999999]",
                     NULL), 2, "'99999999999999999999' is not a dimension");
  expect_failure(cli("graph", "seeds", "no_such_function", "--arg", "1", NULL), 1,
                 "module 'seeds' has no function 'no_such_function'");
}

/* stdout with trace durations ("[0.123 ms, ") made "[T ms, ". */
static char *normalise_durations(const char *out)
{
  GRegex *re = g_regex_new("\\[[0-9]+\\.[0-9]+ ms, ", 0, 0, NULL);
  char *s = g_regex_replace_literal(re, out, -1, 0, "[T ms, ", 0, NULL);
  g_regex_unref(re);
  return s;
}

/* A successful run printing `expected` once durations are normalised. */
static void expect_traced_output(cli_result r, const char *expected)
{
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.status, ==, 0);
  char *out = normalise_durations(r.out);
  g_assert_cmpstr(out, ==, expected);
  g_free(out);
  cli_result_clear(&r);
}

static void test_trace_log(void)
{
  /* host values: a trace per value, the second naming the argument that changed */
  expect_traced_output(
    cli("run", "seeds", "a_function_with_python_side_effect", "--trace-log", "--call", "--arg", "2",
        "--call", "--arg", "3", NULL),
    "Tracing!\n"
    "[trace] a_function_with_python_side_effect(x: 2): traced (first call) [T ms, 1 concrete "
    "function]\n"
    "Tensor(6, shape=(), dtype=int32)\n"
    "Tracing!\n"
    "[trace] a_function_with_python_side_effect(x: 3): retraced (host value): arg 0 (x): host value "
    "3 differs from 2 [T ms, 2 concrete functions]\n"
    "Tensor(11, shape=(), dtype=int32)\n");
  /* tensors: one trace serves both calls */
  expect_traced_output(
    cli("run", "seeds", "a_function_with_python_side_effect", "--trace-log", "--call", "--arg",
        "i32[]=2", "--call", "--arg", "i32[]=3", NULL),
    "Tracing!\n"
    "[trace] a_function_with_python_side_effect(x: i32[]): traced (first call) [T ms, 1 concrete "
    "function]\n"
    "Tensor(6, shape=(), dtype=int32)\n"
    "Tensor(11, shape=(), dtype=int32)\n");
  /* without the log, only what the program prints */
  expect_output(cli("run", "seeds", "a_function_with_python_side_effect", "--call", "--arg", "2",
                    "--call", "--arg", "3", "--repeat", "2", NULL),
                "Tracing!\nTensor(6, shape=(), dtype=int32)\nTensor(6, shape=(), dtype=int32)\n"
                "Tracing!\nTensor(11, shape=(), dtype=int32)\nTensor(11, shape=(), dtype=int32)\n");
  /* the retrace for a new shape; with reduce_retracing the new concrete
   * function has the dimension unknown and serves the next shape too */
  expect_traced_output(
    cli("run", "seeds", "deep_net", "--reduce-retracing", "--trace-log", "--call", "--arg",
        "i32[3]=1,2,3", "--call", "--arg", "i32[2]=1,2", "--call", "--arg", "i32[4]=1,2,3,4", NULL),
    "[trace] deep_net(x: i32[3]): traced (first call) [T ms, 1 concrete function]\n"
    "Tensor([3 5 7], shape=(3,), dtype=int32)\n"
    "[trace] deep_net(x: i32[?]): retraced (shape): arg 0 (x): shape (2,) differs from traced (3,) "
    "(reduce_retracing: generalised to (x: i32[?])) [T ms, 2 concrete functions]\n"
    "Tensor([3 5], shape=(2,), dtype=int32)\n"
    "Tensor([3 5 7 9], shape=(4,), dtype=int32)\n");
}

static void test_retracing_warning(void)
{
  /* the fifth trace in a row warns, naming the argument (in the log, or on stderr) */
  const char *args[] = { "run", "seeds", "a_function_with_python_side_effect", "--call", "--arg",
                         "1", "--call", "--arg", "2", "--call", "--arg", "3", "--call", "--arg",
                         "4", "--call", "--arg", "5", "--trace-log", NULL };
  cli_result r = cli_v(args);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  const char *warning = strstr(r.out, "\n[warning] a_function_with_python_side_effect: ");
  g_assert_nonnull(warning);
  g_assert_nonnull(strstr(warning, "because x keeps changing"));
  g_assert_nonnull(strstr(r.out, "x: 5): retraced (host value)"));
  g_assert_true(strstr(r.out, "x: 5): retraced") < warning); /* after the trace that made it */
  cli_result_clear(&r);

  args[G_N_ELEMENTS(args) - 2] = NULL; /* without --trace-log */
  r = cli_v(args);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: warning: a_function_with_python_side_effect: "));
  g_assert_null(strstr(r.out, "[trace]"));
  cli_result_clear(&r);
}

static void test_modes(void)
{
  /* get_MSE's host print runs at the one trace in graph mode, on every call eagerly */
  expect_output(cli("run", "seeds", "get_MSE", "--arg", "i32[5]=1,4,3,1,3", "--arg",
                    "i32[5]=0,3,8,0,6", "--repeat", "3", NULL),
                "Calculating MSE!\nTensor(7, shape=(), dtype=int32)\n"
                "Tensor(7, shape=(), dtype=int32)\nTensor(7, shape=(), dtype=int32)\n");
  expect_output(cli("run", "seeds", "get_MSE", "--mode", "eager", "--arg", "i32[5]=1,4,3,1,3",
                    "--arg", "i32[5]=0,3,8,0,6", "--repeat", "3", NULL),
                "Calculating MSE!\nTensor(7, shape=(), dtype=int32)\n"
                "Calculating MSE!\nTensor(7, shape=(), dtype=int32)\n"
                "Calculating MSE!\nTensor(7, shape=(), dtype=int32)\n");
  /* eagerly the C code runs on every call: no traces, "Tracing!" each time */
  expect_output(cli("run", "seeds", "a_function_with_python_side_effect", "--mode", "eager",
                    "--trace-log", "--call", "--arg", "i32[]=2", "--call", "--arg", "i32[]=3", NULL),
                "Tracing!\nTensor(6, shape=(), dtype=int32)\n"
                "Tracing!\nTensor(11, shape=(), dtype=int32)\n");
  expect_output(cli("run", "seeds", "function_to_get_faster", "--mode", "graph", "--arg",
                    "f32[1,2]=1,2", "--arg", "f32[2,1]=2,3", "--arg", "4", NULL),
                "Tensor([[12.]], shape=(1, 1), dtype=float32)\n");
}

/* A failed run whose stdout may hold what ran before the failure. */
static void expect_late_failure(cli_result r, const char *stdout_part, const char *fragment)
{
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.out, stdout_part));
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: error: "));
  g_assert_true(strchr(r.err, '\n') == r.err + strlen(r.err) - 1); /* one line */
  if (!strstr(r.err, fragment))
    g_error("stderr '%s' lacks '%s'", r.err, fragment);
  cli_result_clear(&r);
}

static void test_concrete(void)
{
  /* the int32 concrete function refuses a float32: one line naming both */
  cli_result r = cli("run", "seeds", "poly_func", "--concrete", "i32[]", "--arg", "f32[]=1", NULL);
  g_assert_nonnull(strstr(r.err, "int32"));
  g_assert_nonnull(strstr(r.err, "float32"));
  expect_late_failure(r, "Tracing with", "poly_func: expected int32 tensor for arg 0 (a), got float32");
  /* and takes what fits, with its call made through the concrete function */
  r = cli("run", "seeds", "poly_func", "--concrete", "i32[]", "--trace-log", "--call", "--arg",
          "i32[]=5", "--call", "--arg", "i32[]=6", NULL);
  g_assert_cmpint(r.status, ==, 0);
  char *out = normalise_durations(r.out);
  g_assert_true(g_str_has_suffix(
    out, "[trace] poly_func(a: i32[]): traced (get_concrete_function) [T ms, 1 concrete function]\n"
         "Tensor(5, shape=(), dtype=int32)\nTensor(6, shape=(), dtype=int32)\n"));
  g_free(out);
  cli_result_clear(&r);
  /* an unknown dimension accepts any size */
  expect_output(cli("run", "seeds", "deep_net", "--concrete", "i32[?]", "--call", "--arg",
                    "i32[2]=1,2", "--call", "--arg", "i32[1]=5", NULL),
                "Tensor([3 5], shape=(2,), dtype=int32)\nTensor([11], shape=(1,), dtype=int32)\n");
  /* an input signature: calls that fit never retrace, others are refused */
  expect_late_failure(cli("run", "seeds", "deep_net", "--input-signature", "i32[?]", "--trace-log",
                          "--call", "--arg", "i32[3]=1,2,3", "--call", "--arg", "i32[2]=1,2",
                          "--call", "--arg", "f32[2]=1,2", NULL),
                      "Tensor([3 5], shape=(2,), dtype=int32)\n",
                      "deep_net: arg 0 (x) does not match the input signature: expected i32[?], "
                      "got f32[2]");
}

static void test_signatures(void)
{
  /* my_relu's three concrete functions, as the guide prints them */
  expect_output(cli("signatures", "seeds", "my_relu", "--call", "--arg", "f32[]=5.5", "--call",
                    "--arg", "[1,-1]", "--call", "--arg", "f32[2]=3,-3", NULL),
                "my_relu(x)\n"
                "  Args:\n"
                "    x: float32 Tensor, shape=()\n"
                "  Returns:\n"
                "    float32 Tensor, shape=()\n"
                "\n"
                "my_relu(x=[1, -1])\n"
                "  Returns:\n"
                "    float32 Tensor, shape=(2,)\n"
                "\n"
                "my_relu(x)\n"
                "  Args:\n"
                "    x: float32 Tensor, shape=(2,)\n"
                "  Returns:\n"
                "    float32 Tensor, shape=(2,)\n");
  /* from specs, and from the input signature */
  expect_output(cli("signatures", "seeds", "deep_net", "--concrete", "i32[?]", NULL),
                "deep_net(x)\n  Args:\n    x: int32 Tensor, shape=(None,)\n"
                "  Returns:\n    int32 Tensor, shape=(None,)\n");
  expect_output(cli("signatures", "seeds", "deep_net", "--input-signature", "f32[2,?]", NULL),
                "deep_net(x)\n  Args:\n    x: float32 Tensor, shape=(2, None)\n"
                "  Returns:\n    float32 Tensor, shape=(2, None)\n");
}

/* DOT text: "digraph NAME {" ... "}" with braces balanced outside quoted strings. */
static void assert_dot(const char *dot)
{
  g_assert_true(g_str_has_prefix(dot, "digraph \""));
  g_assert_true(g_str_has_suffix(dot, "}\n"));
  int depth = 0, min_depth = 0;
  bool quoted = false;
  for (const char *p = dot; *p; p++) {
    if (quoted && *p == '\\' && p[1])
      p++;
    else if (*p == '"')
      quoted = !quoted;
    else if (!quoted && (*p == '{' || *p == '}')) {
      depth += *p == '{' ? 1 : -1;
      min_depth = MIN(min_depth, depth);
      g_assert_true(depth > 0 || p[1] == '\n'); /* the first brace closes last */
    }
  }
  g_assert_false(quoted);
  g_assert_cmpint(depth, ==, 0);
  g_assert_cmpint(min_depth, ==, 0);
}

static void test_graph(void)
{
  cli_result r = cli("graph", "seeds", "function_to_get_faster", "--arg", "f32[1,2]=1,2", "--arg",
                     "f32[2,1]=2,3", "--arg", "4", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_true(g_str_has_prefix(
    r.out, "graph function_to_get_faster(x: f32[1,2], y: f32[2,1]) -> (Add:0 f32[1,1])\n"
           "  #0 x = Placeholder() -> f32[1,2]\n"
           "  #1 y = Placeholder() -> f32[2,1]\n"
           "  #2 MatMul = MatMul(x:0, y:0) -> f32[1,1] {transpose_a=false, transpose_b=false} "
           "@ seeds.c:"));
  g_assert_nonnull(strstr(r.out, " (function_to_get_faster)\n"));
  cli_result_clear(&r);

  /* control flow: the branches under the If node */
  r = cli("graph", "seeds", "square_if_positive", "--arg", "i32[]=2", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "\n    then: graph "));
  g_assert_nonnull(strstr(r.out, "\n    else: graph "));
  cli_result_clear(&r);

  r = cli("graph", "seeds", "sum_even", "--arg", "i32[4]=10,12,15,20", "--format", "dot", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  assert_dot(r.out);
  g_assert_nonnull(strstr(r.out, "subgraph \"cluster_"));
  g_assert_nonnull(strstr(r.out, "label=\"body (While)\""));
  cli_result_clear(&r);

  /* what the C code prints while tracing goes to stderr, keeping the DOT clean */
  r = cli("graph", "seeds", "a_function_with_python_side_effect", "--arg", "2", "--format=dot", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "Tracing!\n");
  assert_dot(r.out);
  cli_result_clear(&r);

  /* a trace-time error is one error line */
  expect_failure(cli("graph", "seeds", "simple_nn_layer", "--arg", "f32[2,3]:ones", "--arg",
                     "f32[2,3]:ones", NULL),
                 1, "MatMul: ");
}

static void test_npy_argument(void)
{
  /* a .npy file written by hand: i32 [1, 2, 3] in format 1.0 */
  char *dir = g_dir_make_tmp("ts-cli-XXXXXX", NULL);
  char *path = g_build_filename(dir, "x.npy", NULL);
  GString *npy = g_string_new_len("\x93NUMPY\x01\x00", 8);
  const char *header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  size_t header_len = 128 - 10; /* magic, version, length, then header and padding to 128 */
  g_string_append_c(npy, (char)header_len);
  g_string_append_c(npy, 0);
  g_string_append(npy, header);
  while (npy->len < 127)
    g_string_append_c(npy, ' ');
  g_string_append_c(npy, '\n');
  const int32_t values[] = { 1, 2, 3 };
  g_string_append_len(npy, (const char *)values, sizeof values);
  g_assert_true(g_file_set_contents(path, npy->str, (gssize)npy->len, NULL));
  g_string_free(npy, TRUE);

  char *spec = g_strconcat("npy:", path, NULL);
  expect_output(cli("run", "seeds", "deep_net", "--arg", spec, NULL),
                "Tensor([3 5 7], shape=(3,), dtype=int32)\n");
  g_free(spec);
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(path);
  g_free(dir);
}

/* --save writes every result as DIR/FUNCTION-K.npy and says so, for
 * results too big to print; it is refused where the results are made in
 * another process. */
static void test_save_results(void)
{
  char *dir = g_dir_make_tmp("ts-cli-XXXXXX", NULL);
  char *save = g_build_filename(dir, "out", NULL); /* made by the command */
  char *first = g_build_filename(save, "deep_net-1.npy", NULL);
  char *second = g_build_filename(save, "deep_net-2.npy", NULL);
  char *want = g_strdup_printf("saved %s: i32[3]\nsaved %s: i32[2]\n", first, second);
  expect_output(cli("run", "seeds", "deep_net", "--call", "--arg", "i32[3]=1,2,3", "--call", "--arg",
                    "i32[2]=4,5", "--save", save, NULL),
                want);
  const int32_t expected[2][3] = { { 3, 5, 7 }, { 9, 11 } };
  const char *paths[2] = { first, second };
  ts_scope *scope = ts_scope_begin();
  for (int i = 0; i < 2; i++) {
    ts_tensor *t = ts_npy_load(paths[i]); /* the scope's */
    g_assert_nonnull(t);
    g_assert_cmpint(ts_tensor_dtype(t), ==, TS_I32);
    g_assert_cmpmem(ts_tensor_data(t), ts_tensor_size(t) * 4, expected[i], (3 - i) * 4);
    g_assert_cmpint(g_unlink(paths[i]), ==, 0);
  }
  ts_scope_end(scope);
  expect_failure(cli("run", "seeds", "deep_net", "--arg", "i32[3]=1,2,3", "--isolate", "--save", save,
                     NULL),
                 2, "not --save");
  g_assert_cmpint(g_rmdir(save), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(want);
  g_free(first);
  g_free(second);
  g_free(save);
  g_free(dir);
}

/* `run module fn` on f32[3]=1,-2,5 prints want in graph mode, eagerly,
 * through a concrete function and through a worker. */
static void expect_run_every_way(const char *module, const char *fn, const char *want)
{
  const char *arg[] = { "--arg", "f32[3]=1,-2,5" };
  expect_output(cli("run", module, fn, arg[0], arg[1], NULL), want);
  expect_output(cli("run", module, fn, "--mode", "eager", arg[0], arg[1], NULL), want);
  expect_output(cli("run", module, fn, "--concrete", "f32[3]", arg[0], arg[1], NULL), want);
  expect_output(cli("run", module, fn, "--isolate", arg[0], arg[1], NULL), want);
}

/* A function returning None (the guide's find_next_odd): "None", as
 * Python prints it, in graph mode, eagerly, through a worker and under
 * the debugger; --save has nothing to write; its signature returns None. */
static void test_none_result(void)
{
  expect_output(cli("run", "seeds", "find_next_odd", NULL), "None\n");
  expect_output(cli("run", "seeds", "find_next_odd", "--mode", "eager", NULL), "None\n");
  expect_output(cli("run", "seeds", "find_next_odd", "--isolate", "--call", "--call", NULL),
                "None\nNone\n");
  char *dir = g_dir_make_tmp("ts-cli-XXXXXX", NULL);
  expect_output(cli("run", "seeds", "find_next_odd", "--save", dir, NULL), "None\n");
  g_assert_cmpint(g_rmdir(dir), ==, 0); /* nothing written */
  g_free(dir);
  expect_output(cli("signatures", "seeds", "find_next_odd", NULL),
                "find_next_odd()\n  Returns:\n    None\n");
  cli_result r = cli("health", "seeds", "find_next_odd", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "None\nhealth: "));
  cli_result_clear(&r);
}

/* A function returning a tuple: every result, as Python prints a tuple,
 * in graph mode, eagerly, through a concrete function and a worker; its
 * signature's returns as TensorFlow prints them; --save one file each. */
static void test_tuple_results(void)
{
  g_autofree char *tiny = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  const char *want = "(Tensor(-2.0, shape=(), dtype=float32), Tensor(5.0, shape=(), dtype=float32))\n";
  expect_run_every_way(tiny, "min_max", want);
  expect_output(cli("signatures", tiny, "min_max", "--arg", "f32[3]=1,-2,5", NULL),
                "min_max(x)\n  Args:\n    x: float32 Tensor, shape=(3,)\n  Returns:\n"
                "    (<1>, <2>)\n      <1>: float32 Tensor, shape=()\n"
                "      <2>: float32 Tensor, shape=()\n");
  char *dir = g_dir_make_tmp("ts-cli-XXXXXX", NULL);
  char *paths[2] = { g_build_filename(dir, "min_max-1-1.npy", NULL),
                     g_build_filename(dir, "min_max-1-2.npy", NULL) };
  char *lines = g_strdup_printf("saved %s: f32[]\nsaved %s: f32[]\n", paths[0], paths[1]);
  expect_output(cli("run", tiny, "min_max", "--arg", "f32[3]=1,-2,5", "--save", dir, NULL), lines);
  ts_scope *scope = ts_scope_begin();
  for (int i = 0; i < 2; i++) {
    ts_tensor *t = ts_npy_load(paths[i]);
    g_assert_nonnull(t);
    g_assert_cmpfloat(ts_tensor_get_f64(t, 0), ==, i ? 5 : -2);
    g_assert_cmpint(g_unlink(paths[i]), ==, 0);
    g_free(paths[i]);
  }
  ts_scope_end(scope);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(lines);
  g_free(dir);
  /* run --help names those files as they are written */
  cli_result help = cli("run", "--help", NULL);
  g_assert_nonnull(strstr(help.out, "DIR/FUNCTION-K-J.npy"));
  cli_result_clear(&help);
  /* the debugger's health check shows them all */
  cli_result r = cli("health", tiny, "min_max", "--arg", "f32[3]=1,-2,5", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, want));
  cli_result_clear(&r);
  /* a tuple of one prints as Python's (x,), in every mode */
  const char *one = "(Tensor(-2.0, shape=(), dtype=float32),)\n";
  expect_run_every_way(tiny, "only_min", one);
  r = cli("health", tiny, "only_min", "--arg", "f32[3]=1,-2,5", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, one));
  cli_result_clear(&r);
  expect_output(cli("run", tiny, "identity", "--arg", "f32[2]=1,2", NULL),
                "Tensor([1. 2.], shape=(2,), dtype=float32)\n"); /* one tensor: no tuple */
}

/* --version prints the project's version and exits 0. */
static void test_version(void)
{
  cli_result r = cli("--version", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_true(g_regex_match_simple("^tracescope-cli [0-9]+\\.[0-9]+\\.[0-9]+\n$", r.out, 0, 0));
  cli_result_clear(&r);
}

#ifdef TS_CLI_RENDER
/* A file that cannot be written is named as the user named it, never as
 * the temporary file beside it. */
static void test_render_out_error(void)
{
  /* drawing text leaves fontconfig's caches, as the renderer's tests know */
  g_autofree char *supp = g_test_build_filename(G_TEST_DIST, "lsan-gui.supp", NULL);
  g_autofree char *lsan = g_strdup_printf("suppressions=%s:print_suppressions=0", supp);
  g_autofree char *old_lsan = g_strdup(g_getenv("LSAN_OPTIONS"));
  g_setenv("LSAN_OPTIONS", lsan, TRUE);
  const char *formats[] = { "svg", "png", "dot" };
  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    g_autofree char *out = g_strdup_printf("/no/such/dir/g.%s", formats[i]);
    g_autofree char *expected = g_strdup_printf("cannot write '%s': ", out);
    cli_result r = cli("render", "seeds", "deep_net", "--arg", "i32[3]=1,2,3", "--out", out, NULL);
    g_autofree char *temp_prefix = g_strdup_printf("%s.", out);
    if (strstr(r.err, temp_prefix))
      g_error("stderr '%s' names a temporary file", r.err);
    expect_failure(r, 1, expected);
  }
  if (old_lsan)
    g_setenv("LSAN_OPTIONS", old_lsan, TRUE);
  else
    g_unsetenv("LSAN_OPTIONS");
}
#else
/* Built with -Dgui=disabled: render says what is missing. */
static void test_render_not_built(void)
{
  cli_result r = cli("render", "seeds", "deep_net", "--out", "g.svg", NULL);
  expect_failure(r, 2, "built without the renderer");
}
#endif

/* Errors in an argument spec say what is wrong with it, never where in the
 * engine's sources it was found. */
static void test_argument_errors_without_location(void)
{
  const char *specs[] = { "bool[2]:range(2)", "u8[300]:range(0)", "f32[2]:range(1e39)",
                          "f32[2,-3]:uniform", "x32[2]:ones" };
  for (guint i = 0; i < G_N_ELEMENTS(specs); i++) {
    cli_result r = cli("run", "seeds", "deep_net", "--arg", specs[i], NULL);
    if (g_regex_match_simple("[a-z_]+\\.c:[0-9]+", r.err, 0, 0))
      g_error("stderr '%s' shows a source location", r.err);
    g_autofree char *fragment = g_strdup_printf("argument '%s': ", specs[i]);
    expect_failure(r, 2, fragment);
  }
}

/* ---- debug and health ------------------------------------------------------------------ */

/* A --commands file in a temporary directory; returns its path (g_free; the
 * caller removes it with remove_commands). */
static char *write_commands(const char *text)
{
  char *dir = g_dir_make_tmp("tracescope-debug-XXXXXX", NULL);
  g_assert_nonnull(dir);
  char *path = g_build_filename(dir, "commands", NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_free(dir);
  return path;
}

static void remove_commands(char *path)
{
  char *dir = g_path_get_dirname(path);
  g_unlink(path);
  g_rmdir(dir);
  g_free(dir);
  g_free(path);
}

/* --device SIM:0: the simulated GPU prints what the CPU prints, in both
 * modes and under the debugger; an unknown device is named. */
static void test_device(void)
{
  /* Our kernels only: each process times the GEMM candidates for itself,
   * and OpenBLAS (when a process's timing picks it) gives other last bits
   * than our tiles; the two tiles agree bit for bit (test-kernels). */
  g_autofree char *old_blas = g_strdup(g_getenv("TRACESCOPE_BLAS"));
  g_setenv("TRACESCOPE_BLAS", "off", TRUE);
  const char *modes[] = { "graph", "eager" };
  for (int m = 0; m < 2; m++) {
    cli_result cpu = cli("run", "seeds", "sequential_model", "--mode", modes[m], "--device", "CPU",
                         NULL);
    g_assert_cmpint(cpu.status, ==, 0);
    expect_output(cli("run", "seeds", "sequential_model", "--mode", modes[m], "--device", "SIM:0",
                      NULL), cpu.out);
    cli_result_clear(&cpu);
  }
  if (old_blas)
    g_setenv("TRACESCOPE_BLAS", old_blas, TRUE);
  else
    g_unsetenv("TRACESCOPE_BLAS");
  /* profile: the kernels' device times per op, in graph mode from the replayed plan */
  cli_result prof = cli("profile", "seeds", "sequential_model", "--repeat", "2", "--device", "SIM:0",
                        NULL);
  g_assert_cmpint(prof.status, ==, 0);
  const char *table = strstr(prof.out, "Device time by op (graph, kernels on the device's stream)");
  g_assert_nonnull(table);
  g_assert_true(g_regex_match_simple("\\n  _FusedMatMul +202 ", table, 0, 0)); /* 101 a call */
  cli_result_clear(&prof);
  prof = cli("profile", "seeds", "sequential_model", "--repeat", "2", NULL);
  g_assert_null(strstr(prof.out, "Device time")); /* the CPU has no device records */
  cli_result_clear(&prof);
  /* the debugger shows a device tensor's statistics as the CPU's */
  char *commands = write_commands("print in 1\ncontinue\nprint in 1\nc\n");
  cli_result dbg[2];
  const char *devices[] = { "CPU", "SIM:0" };
  for (int d = 0; d < 2; d++) {
    dbg[d] = cli("debug", "seeds", "power", "--arg", "f32[10,10]:ones", "--arg", "2", "--break",
                 "MatMul", "--commands", commands, "--device", devices[d], NULL);
    g_assert_cmpint(dbg[d].status, ==, 0);
  }
  g_assert_nonnull(strstr(dbg[0].out, "min 1 max 1 mean 1 std 0"));
  g_assert_cmpstr(dbg[1].out, ==, dbg[0].out);
  cli_result_clear(&dbg[0]);
  cli_result_clear(&dbg[1]);
  remove_commands(commands);
  expect_failure(cli("run", "seeds", "get_MSE", "--device", "GPU:7", NULL), 2,
                 "--device needs one of CPU, SIM:0");
}

/* profile --against: the same calls on the CPU and on SIM:0, op by op;
 * the device's side is its kernels' time, the host's launch beside it. */
static void test_device_against(void)
{
  cli_result prof = cli("profile", "seeds", "sequential_model", "--repeat", "2", "--device", "SIM:0",
                        "--against", "CPU", "--by", "node", NULL);
  g_assert_cmpint(prof.status, ==, 0);
  const char *table = strstr(prof.out, "On SIM:0 against CPU, the same 2 calls after warm-up");
  g_assert_nonnull(table);
  g_assert_nonnull(strstr(table, "CPU median µs SIM:0 median µs"));
  /* a node of both: runs on each side, where it ran, a launch time on the device's side only */
  g_assert_true(g_regex_match_simple("\\n  dense_1/MatMul +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
                                     "+[0-9.]+ +[0-9.]+x +CPU +SIM:0 +- +[0-9.]+\\n",
                                     table, 0, 0));
  cli_result_clear(&prof);
  expect_failure(cli("profile", "seeds", "sequential_model", "--against", "GPU:7", NULL), 2,
                 "--against needs one of CPU, SIM:0");
  expect_failure(cli("profile", "seeds", "sequential_model", "--mode", "both", "--against", "CPU",
                     NULL), 2, "--against compares one mode on two devices");
}

static char *debuggee_module(void)
{
  return g_build_filename(TS_TEST_MODULES_DIR, "debuggee.so", NULL);
}

/* power(x, 3) stops at each MatMul; the running product is its second input. */
static void test_debug_power(void)
{
  char *commands = write_commands("print in 1\ncontinue\nprint in 1\nc\nvalues in 1\nc\n");
  cli_result r = cli("debug", "seeds", "power", "--arg", "f32[2,2]=1,1,1,1", "--arg", "3",
                     "--break", "MatMul", "--commands", commands, NULL);
  /* eye(10) is 10x10: x must be too.  The trace fails, but the eager
   * call is debugged: it stops where its first MatMul fails, before the
   * breakpoint would, with the inputs to look at, then fails */
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "note: tracing failed, so ops have no node names: "));
  const char *failed = strstr(r.out, "#2 MatMul at seeds.c:");
  g_assert_nonnull(failed);
  g_assert_nonnull(strstr(failed, " (error: seeds.c:"));
  g_assert_nonnull(strstr(failed, "MatMul: inner dimensions differ: f32[2,2] x f32[10,10] (2 vs 10))\n"
                                  "  in[1] f32[10,10] min 0 max 1 mean 0.1 "));
  g_assert_null(strstr(r.out, "finished"));
  g_assert_nonnull(strstr(r.err, "inner dimensions differ"));
  cli_result_clear(&r);
  r = cli("debug", "seeds", "power", "--arg", "f32[10,10]:ones", "--arg", "3", "--break", "MatMul",
          "--commands", commands, NULL);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_cmpint(r.status, ==, 0);
  g_autofree char *line = g_strdup_printf("#2 MatMul MatMul at seeds.c:");
  const char *at = strstr(r.out, line);
  g_assert_nonnull(at);
  g_assert_nonnull(strstr(at, "(breakpoint 1)\n  in[1] f32[10,10] min 0 max 1 mean 0.1 "));
  g_assert_nonnull(strstr(at, "#3 MatMul MatMul_1 at seeds.c:"));
  g_assert_nonnull(strstr(at, "(breakpoint 1)\n  in[1] f32[10,10] min 1 max 1 mean 1 std 0 "));
  g_assert_nonnull(strstr(at, "#4 MatMul MatMul_2 at seeds.c:"));
  g_assert_nonnull(strstr(at, "(breakpoint 1)\n  in[1] = [[10. 10. "));
  g_assert_nonnull(strstr(at, "finished: Tensor(\n[[100. 100. "));
  cli_result_clear(&r);
  remove_commands(commands);
}

/* print and values say what they cannot show, rather than nothing: an
 * index past the op's inputs or outputs, a word that is not in, out or an
 * index; back and forward a count that is not one (the session goes on). */
static void test_debug_print_refuses(void)
{
  char *commands = write_commands("print in 5\nvalues 3\nprint bogus\nback two\nprint in 0\nc\n");
  cli_result r = cli("debug", "seeds", "simple_nn_layer", "--break", "Relu", "--commands", commands, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.err, "error: print in 5: Relu has 1 input\n"));
  g_assert_nonnull(strstr(r.err, "error: values 3: Relu has 1 input\n"));
  g_assert_nonnull(strstr(r.err, "error: print: expected in, out or an index, not 'bogus'\n"));
  g_assert_nonnull(strstr(r.err, "error: back: expected a count of ops, not 'two'\n"));
  g_assert_null(strstr(r.out, "(the stop)")); /* back two is not back 0 */
  g_assert_nonnull(strstr(r.out, "  in[0] f32[3,3] min "));
  g_assert_nonnull(strstr(r.out, "finished: Tensor("));
  cli_result_clear(&r);
  remove_commands(commands);
}

/* Commands of a --commands file that the call's end left unrun are named
 * (a step that ended the call printed nothing of the print after it). */
static void test_debug_commands_after_the_end(void)
{
  char *commands = write_commands("step\nprint out\n\nwhere\n");
  cli_result r = cli("debug", "seeds", "simple_nn_layer", "--break", "Relu", "--commands", commands, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "finished: Tensor("));
  g_assert_cmpstr(r.err, ==, "note: the call finished before these commands of --commands ran: print out; where\n");
  cli_result_clear(&r);
  remove_commands(commands);
}

/* A call that runs to its end says which breakpoints it never stopped at
 * (a line of a file the module is not built from, an op it does not run);
 * one it stopped at, or one deleted, is not named. */
static void test_debug_never_hit(void)
{
  char *commands = write_commands("break Softmax\nbreak Relu\ndelete 3\nc\nc\n");
  cli_result r = cli("debug", "seeds", "simple_nn_layer", "--break", "MatMul", "--break", "nosuch.c:3",
                     "--commands", commands, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_nonnull(strstr(r.out, "(breakpoint 1)\n"));
  g_assert_nonnull(strstr(r.out, "(breakpoint 4)\n"));
  const char *finished = strstr(r.out, "finished: Tensor(");
  g_assert_nonnull(finished);
  g_assert_true(g_str_has_suffix(finished, "\nbreakpoint 2 (nosuch.c:3) was never hit\n"));
  g_assert_null(strstr(finished, "(Softmax)"));
  cli_result_clear(&r);
  remove_commands(commands);
}

/* Break on NaN stops after the Log; step back shows the Sub before it;
 * quit cancels the call.  In graph mode the fuse pass ran Sub, Log and Add
 * as one node: the stop names what it stands for. */
static void test_debug_nan(void)
{
  char *module = debuggee_module();
  char *commands = write_commands("print out\nvalues out\nwhere\nback\nprint\nforward\nquit\n");
  expect_output(cli("debug", module, "plant_nan", "--break", "nan", "--commands", commands, NULL),
                "breakpoint 1: nan\n"
                "#2 Log shifted_log/Log at debuggee.c:10 (nan 1, after the op)\n"
                "  out[0] f32[2] min 0 max 0 mean 0 std 0 nan 1 inf 0 zeros 1\n"
                "  out[0] = [nan  0.]\n"
                "  #0 plant_nan\n"
                "#1 Sub Sub at debuggee.c:8 (1 back)\n"
                "  in[0] f32[2] min 1 max 3 mean 2 std 1 nan 0 inf 0 zeros 0\n"
                "  in[1] f32[] min 2 max 2 mean 2 std 0 nan 0 inf 0 zeros 0\n"
                "  out[0] f32[2] min -1 max 1 mean 0 std 1 nan 0 inf 0 zeros 0\n"
                "#2 Log shifted_log/Log at debuggee.c:10 (the stop)\n"
                "quit: the call was cancelled\n");
  cli_result r = cli("debug", module, "plant_nan", "--mode", "graph", "--break", "nan", "--commands",
                     commands, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, " [Sub, shifted_log/Log, Add] at debuggee.c:12 (nan 1, after the op)\n"));
  g_assert_nonnull(strstr(r.out, "quit: the call was cancelled\n"));
  cli_result_clear(&r);
  remove_commands(commands);
  g_free(module);
}

/* next steps over the nested call and the TS_IF block, step into them,
 * finish out; breakpoints come and go by command. */
static void test_debug_stepping(void)
{
  char *module = debuggee_module();
  char *commands = write_commands("next\nnext\nnext\nstep\nwhere\nfinish\nbreak Sqrt\n"
                                  "break max >> 1\ndelete 7\nc\nbt\ndelete 1\nc\n");
  cli_result r = cli("debug", module, "nested", "--commands", commands, NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==,
                  "#1 Add Add at debuggee.c:26 (step)\n"
                  "#4 Neg Neg at debuggee.c:26 (step)\n"
                  "#5 Sum Sum at debuggee.c:27 (step)\n"
                  "#6 Less Less at debuggee.c:27 (step)\n"
                  "#7 Exp If/then/Exp at debuggee.c:28 (step)\n" /* a branch's op by its path */
                  "  #0 then at debuggee.c:27\n"
                  "  #1 nested\n"
                  "#9 Abs Abs at debuggee.c:31 (step)\n"
                  "breakpoint 1: Sqrt\n"
                  "finished: Tensor([0.36787945 0.00247875], shape=(2,), dtype=float32)\n"
                  "breakpoint 1 (Sqrt) was never hit\n"); /* it came after the call's only Sqrt */
  g_assert_nonnull(strstr(r.err, "breakpoint 'max >> 1': expected a number"));
  g_assert_nonnull(strstr(r.err, "no breakpoint '7'"));
  cli_result_clear(&r);
  remove_commands(commands);
  g_free(module);
}

static void test_debug_errors(void)
{
  expect_failure(cli("debug", "seeds", "power", "--break", "MatMull", NULL), 2,
                 "breakpoint 'MatMull': unknown op type 'MatMull'");
  expect_failure(cli("debug", "seeds", "power", "--break", "Matmul", NULL), 2,
                 "breakpoint 'Matmul': unknown op type 'Matmul' (did you mean 'MatMul'?)");
  expect_failure(cli("debug", "seeds", "power", "--break", "max >> 1e6", NULL), 2,
                 "expected a number after the comparison, got '> 1e6'");
  expect_failure(cli("debug", "seeds", NULL), 2, "debug needs a FUNCTION after the MODULE");
  expect_failure(cli("debug", "seeds", "power", "--commands", "/nonexistent/commands", NULL), 2,
                 "--commands: ");
  expect_failure(cli("debug", "seeds", "power", "--mode", "fast", NULL), 2, "--mode must be eager or graph");
  expect_failure(cli("health", "seeds", "power", "--break", "nan", NULL), 2, "--break is not an option of health");
  expect_failure(cli("debug", "seeds", "power", "--call", NULL), 2, "--call is not an option of debug");
}

/* health names the Log in both modes. */
static void test_health(void)
{
  char *module = debuggee_module();
  expect_output(cli("health", module, "plant_nan", NULL),
                "Tensor([nan  1.], shape=(2,), dtype=float32)\n"
                "health: 3 ops, first NaN/Inf: #2 Log at debuggee.c:10 (nan 1, inf 0)\n");
  cli_result r = cli("health", module, "plant_nan", "--mode", "graph", "--arg", "f32[3]=0,1,3", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "Tensor([nan nan  1.], shape=(3,), dtype=float32)\n"
                                        "health: "));
  /* fused with its neighbours by the optimizer, or alone */
  g_assert_true(strstr(r.out, "[Sub, shifted_log/Log, Add] at debuggee.c:12 (nan 2, inf 0)\n") ||
                strstr(r.out, "#2 Log shifted_log/Log at debuggee.c:10 (nan 2, inf 0)\n"));
  cli_result_clear(&r);
  expect_output(cli("health", module, "plant_nan", "--all", "--stats", "--arg", "f32[1]=3", NULL),
                "Tensor([1.], shape=(1,), dtype=float32)\n"
                "#1 Sub at debuggee.c:8 (nan 0, inf 0, min 1 max 1 mean 1)\n"
                "#2 Log at debuggee.c:10 (nan 0, inf 0, min 0 max 0 mean 0)\n"
                "#3 Add at debuggee.c:12 (nan 0, inf 0, min 1 max 1 mean 1)\n"
                "health: 3 ops, no NaN or Inf\n");
  g_free(module);
}

/* diverge: the report on stdout, exit status 0 (same), 1 (divergence), 2 (error). */
static void test_diverge(void)
{
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "diverge.so", NULL);
  cli_result r = cli("diverge", module, "unlisted_loop_var", NULL); /* the example argument */
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.err, ==, "");
  /* x * 2 is fused with total + x: the fused node's output is the Add's */
  g_assert_true(g_str_has_prefix(r.out, "eager vs graph: unlisted_loop_var(x: f32[3]) (atol 1e-06, rtol 1e-05)\n"
                                        "first divergence: op #8 Add 'Add' at diverge.c:17 (in the graph: "
                                        "FusedElementwise 'Add' standing for Mul, Add): max |eager-graph| = 6 "
                                        "at [2] (eager 18, graph 12)\n"));
  g_assert_nonnull(strstr(r.out, "\n  eager: [ 6. 12. 18.]\n  graph: [ 4.  8. 12.]\n"));
  g_assert_nonnull(strstr(r.out, "likely cause: Mul at diverge.c:16 reads 'x': "));
  g_assert_nonnull(strstr(r.out, "a tensor changed inside the loop body but not listed in TS_WHILE(...)"));
  g_assert_nonnull(strstr(r.out, "\nresult: max |eager-graph| = 24 at [2] (eager 42, graph 18)\n"));
  g_assert_nonnull(strstr(r.out, "\nexpected differences:\n  op #3 Mul 'Mul' at diverge.c:16: fused: fused "
                                 "into FusedElementwise 'Add' standing for Mul, Add: "));
  cli_result_clear(&r);

  r = cli("diverge", module, "listed_loop_var", "--arg", "f32[2]=1,-1", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_true(g_str_has_prefix(r.out, "eager vs graph: listed_loop_var(x: f32[2]) (atol 1e-06, rtol 1e-05)\n"
                                        "no divergence\nresult: equal\n"));
  cli_result_clear(&r);

  /* what the function prints goes to stderr; the expected differences are listed */
  r = cli("diverge", module, "print_and_fold", "--atol", "0.5", "--rtol=0", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "x: [1 2 3]\nx: [1 2 3]\n");
  g_assert_true(g_str_has_prefix(r.out, "eager vs graph: print_and_fold(x: f32[3]) (atol 0.5, rtol 0)\n"));
  g_assert_nonnull(strstr(r.out, "\nexpected differences:\n  op #1 Add 'Add' at diverge.c:"));
  g_assert_nonnull(strstr(r.out, ": print: "));
  cli_result_clear(&r);

  expect_failure(cli("diverge", "seeds", "deep_net", "--atol", "-1", NULL), 2,
                 "--atol needs a number >= 0, not '-1'");
  expect_failure(cli("diverge", "seeds", "no_such", NULL), 2, "module 'seeds' has no function 'no_such'");
  expect_failure(cli("diverge", "seeds", "deep_net", "--arg", "f32[2", NULL), 2, "f32[2");
  expect_failure(cli("diverge", "seeds", "deep_net", "--call", NULL), 2, "--call is not an option of diverge");
  expect_failure(cli("diverge", "seeds", "unused_return", NULL), 2, "eager run: ");
}

/* run --check-eagerly: the graph's results, and a warning where eager differs. */
static void test_check_eagerly(void)
{
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "diverge.so", NULL);
  cli_result r = cli("run", module, "unlisted_loop_var", "--check-eagerly", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "Tensor([ 6. 12. 18.], shape=(3,), dtype=float32)\n");
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: warning: unlisted_loop_var(x: f32[3]): eager and graph "
                                        "differ (check mode): first divergence: op #8 Add 'Add' at diverge.c:17"));
  g_assert_nonnull(strstr(r.err, "not listed in TS_WHILE(...)"));
  cli_result_clear(&r);
  r = cli("run", module, "unlisted_loop_var", "--check-eagerly", "--trace-log", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "\n[warning] unlisted_loop_var(x: f32[3]): eager and graph differ"));
  cli_result_clear(&r);
  expect_output(cli("run", module, "listed_loop_var", "--check-eagerly", "--repeat", "2", NULL),
                "Tensor([14. 28. 42.], shape=(3,), dtype=float32)\n"
                "Tensor([14. 28. 42.], shape=(3,), dtype=float32)\n");
  expect_failure(cli("run", module, "listed_loop_var", "--check-eagerly", "--mode", "eager", NULL), 2,
                 "--check-eagerly runs each call both ways: it cannot be combined with --mode eager");
  expect_failure(cli("diverge", "seeds", "deep_net", "--check-eagerly", NULL), 2,
                 "--check-eagerly is not an option of diverge");
}

/* graph --passes: the graph after them, what fused nodes stand for, its
 * memory plan and schedule, one line per pass; a bad list is a usage error naming the pass. */
static void test_graph_passes(void)
{
  cli_result r = cli("graph", "seeds", "lstm_fn", "--passes", "all", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "\nplan: 7 buffers (1 in place), peak 3.6 kB, 2.9 kB saved by reuse\n"
                                 "schedule: 11 ops, one at a time\n"));
  g_assert_nonnull(strstr(r.out, "= FusedElementwise("));
  g_assert_nonnull(strstr(r.out, ": fused from Sigmoid, Sigmoid, Sigmoid, Tanh, Mul, Mul, Add, Tanh, Mul"));
  g_assert_true(g_str_has_suffix(r.out, "fold: folded 0 nodes into 0 constants\n"
                                        "cse: removed 0 nodes\n"
                                        "simplify: simplified 0 nodes\n"
                                        "dce: removed 0 nodes\n"
                                        "fuse: fused 11 nodes into 2 kernels\n"));
  cli_result_clear(&r);
  r = cli("graph", "seeds", "get_MSE", "--passes", "simplify,dce", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_null(strstr(r.out, "= Pow("));
  g_assert_true(g_str_has_suffix(r.out, "simplify: simplified 1 node\ndce: removed 1 node\n"));
  cli_result_clear(&r);
  r = cli("graph", "seeds", "get_MSE", "--passes", "none", NULL);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "= Pow("));
  cli_result_clear(&r);
  expect_failure(cli("graph", "seeds", "get_MSE", "--passes", "cse,fast", NULL), 2,
                 "unknown pass 'fast'");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/run/deep-net", test_deep_net);
  g_test_add_func("/cli/run/isolate", test_isolate);
  g_test_add_func("/cli/run/isolate-hostile", test_isolate_hostile);
  g_test_add_func("/cli/run/kernels", test_kernels);
  g_test_add_func("/cli/run/seed-programs", test_seed_programs);
  g_test_add_func("/cli/run/npy-argument", test_npy_argument);
  g_test_add_func("/cli/run/save", test_save_results);
  g_test_add_func("/cli/run/tuple-results", test_tuple_results);
  g_test_add_func("/cli/run/none-result", test_none_result);
  g_test_add_func("/cli/list", test_list);
  g_test_add_func("/cli/help", test_help);
  g_test_add_func("/cli/help-command", test_command_help);
  g_test_add_func("/cli/help-command-options", test_command_help_options);
  g_test_add_func("/cli/help-dtypes", test_help_dtypes);
  g_test_add_func("/cli/help-onnx-test-options", test_help_onnx_test_options);
  g_test_add_func("/cli/debug-print-refuses", test_debug_print_refuses);
  g_test_add_func("/cli/debug-never-hit", test_debug_never_hit);
  g_test_add_func("/cli/debug-commands-after-the-end", test_debug_commands_after_the_end);
  g_test_add_func("/cli/trace-files", test_trace_files);
  g_test_add_func("/cli/version", test_version);
#ifdef TS_CLI_RENDER
  g_test_add_func("/cli/render/out-error", test_render_out_error);
#else
  g_test_add_func("/cli/render/not-built", test_render_not_built);
#endif
  g_test_add_func("/cli/errors/no-engine-location", test_argument_errors_without_location);
  g_test_add_func("/cli/errors", test_bad_arguments);
  g_test_add_func("/cli/run/threads", test_threads);
  g_test_add_func("/cli/run/trace-log", test_trace_log);
  g_test_add_func("/cli/run/retracing-warning", test_retracing_warning);
  g_test_add_func("/cli/run/modes", test_modes);
  g_test_add_func("/cli/run/device", test_device);
  g_test_add_func("/cli/profile/device-against", test_device_against);
  g_test_add_func("/cli/run/concrete", test_concrete);
  g_test_add_func("/cli/signatures", test_signatures);
  g_test_add_func("/cli/graph", test_graph);
  g_test_add_func("/cli/debug/power", test_debug_power);
  g_test_add_func("/cli/debug/nan", test_debug_nan);
  g_test_add_func("/cli/debug/stepping", test_debug_stepping);
  g_test_add_func("/cli/debug/errors", test_debug_errors);
  g_test_add_func("/cli/health", test_health);
  g_test_add_func("/cli/diverge", test_diverge);
  g_test_add_func("/cli/run/check-eagerly", test_check_eagerly);
  g_test_add_func("/cli/graph/passes", test_graph_passes);
  return g_test_run();
}
