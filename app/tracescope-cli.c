/* tracescope-cli — lists, runs, traces, shows and draws the functions of
 * a Tracescope module from the command line.  This file has the commands'
 * table, usage and errors; cli-run.c runs, cli-inspect.c shows signatures
 * and graphs, cli-render.c draws them (with the viewer's renderer),
 * cli-profile.c profiles (profiler/), cli-trace.c reads trace files,
 * cli-diverge.c compares eager and graph runs, cli-onnx-test.c runs ONNX
 * backend tests, cli-options.c parses. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_help(const char *arg)
{
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int cmd_list(int argc, char **argv);
#ifndef TS_CLI_RENDER
static int cli_render_missing(int argc, char **argv);
#endif

/* The commands: what runs each, and its help.  A command whose options
 * cli-options.c parses names its cli_command there (its options' help is
 * that table's); list and onnx-test parse their own and describe them in
 * `about`. */
static const struct command {
  const char *name;
  int (*run)(int argc, char **argv); /* the words after the command */
  cli_command options;               /* 0: parses its own */
  const char *synopsis;              /* after "tracescope-cli NAME " */
  const char *summary;               /* one line, for the command list */
  const char *about;                 /* what it does, in a few lines */
  const char *example;
} COMMANDS[] = {
  { "list", cmd_list, 0, "MODULE", "list the module's functions and their parameters",
    "Prints the module's title and each function with its parameters.\n",
    "tracescope-cli list seeds" },
  { "run", cli_run, CLI_RUN, "MODULE FUNCTION [--arg SPEC]... [OPTION]...\n"
    "       [--call [--arg SPEC]...]...",
    "call a function and print its results",
    "Calls FUNCTION and prints each result, one line per call.\n",
    "tracescope-cli run seeds deep_net --arg 'i32[3]=1,2,3'" },
  { "signatures", cli_signatures, CLI_SIGNATURES,
    "MODULE FUNCTION [OPTION]...\n"
    "       [--call [--arg SPEC]...]...",
    "trace a function and print its concrete functions",
    "Traces FUNCTION for each call (or the --concrete specs, or the input\n"
    "signature, or the module's example arguments) without running it and\n"
    "prints its concrete functions.\n",
    "tracescope-cli signatures seeds my_relu --call --arg 'f32[]=1' --call --arg '[1,-1]'" },
  { "graph", cli_graph, CLI_GRAPH, "MODULE FUNCTION [--arg SPEC]... [--format text|dot]\n"
    "       [--passes LIST]",
    "trace one call and print its graph",
    "Traces one call and prints its graph (--format text or dot); what the C\n"
    "code prints while tracing goes to stderr.\n",
    "tracescope-cli graph seeds square_if_positive --arg 'i32[]=2' --passes all" },
#ifdef TS_CLI_RENDER
  { "render", cli_render, CLI_RENDER,
#else
  { "render", cli_render_missing, CLI_RENDER,
#endif
    "MODULE FUNCTION [--arg SPEC]... --out FILE\n"
    "       [--expand WHAT]...",
    "draw one call's graph as the viewer shows it (SVG, PNG, PDF, DOT)",
    "Traces one call (as graph does) and draws its graph as the viewer shows\n"
    "it, with no display.\n",
    "tracescope-cli render seeds square_if_positive --arg 'i32[]=2' --expand all --out if.svg" },
  { "profile", cli_profile, CLI_PROFILE, "MODULE FUNCTION [--arg SPEC]...\n"
    "       [--mode eager|graph|both] [--repeat N] [--out trace.json.gz]\n"
    "       [--csv stats.csv] [--by WHAT]",
    "time every op of repeated calls and print the top ops",
    "Calls FUNCTION once to warm up (in graph mode that call traces), then N\n"
    "more times (--repeat), timing every op, and prints the top ops by total\n"
    "time: count, total, self (less the ops inside an If/While), the median,\n"
    "min and p95 of one op's time, and share of the wall time.\n",
    "tracescope-cli profile seeds sequential_model --arg 'f32[20,28,28]:uniform' --out run.json.gz" },
  { "debug", cli_debug, CLI_DEBUG, "MODULE FUNCTION [--arg SPEC]... [--mode eager|graph]\n"
    "       [--break SPEC]... [--commands FILE]",
    "step through one call op by op, with breakpoints",
    "Runs one call op by op (eagerly unless --mode graph), stopping at its\n"
    "first op, or with --break at the breakpoints, and prints each stop as\n"
    "  #SEQ OP NODE at FILE:LINE (REASON)\n"
    "then reads commands from --commands FILE (else stdin, line by line):\n"
    "  step|s  next|n (step over calls and blocks)  finish (step out)  continue|c\n"
    "  back [N]  forward [N]  (move through the ops that ran: step back)\n"
    "  print|p [in|out] [I]  tensor statistics      values [in|out] [I]  values\n"
    "  where|bt  the call stack    break SPEC    delete N    quit (cancels the call)\n"
    "When the commands end, the call runs on to its end; when the call ends\n"
    "first, the --commands lines left are named on stderr.\n",
    "echo where | tracescope-cli debug seeds power --arg 'f32[10,10]:uniform' --arg 3 --break MatMul" },
  { "health", cli_health, CLI_HEALTH, "MODULE FUNCTION [--arg SPEC]...\n"
    "       [--mode eager|graph] [--stats] [--all]",
    "find the first op that made a NaN or an Inf",
    "Calls FUNCTION once, counting NaN and Inf in every op's outputs, and\n"
    "prints the first op that made one.\n",
    "tracescope-cli health seeds sequential_model --arg 'f32[4,28,28]:uniform' --all" },
  { "diverge", cli_diverge, CLI_DIVERGE, "MODULE FUNCTION [--arg SPEC]... [--atol X]\n"
    "       [--rtol Y]",
    "find the first op where eager and graph runs differ",
    "Runs FUNCTION eagerly and as a graph on the same arguments (the module's\n"
    "example arguments without --arg), compares the output of every op and\n"
    "prints the first op where they differ, with both values, the likely\n"
    "cause, and the differences the modes are allowed to have.  Exit status\n"
    "0: no divergence, 1: divergence, 2: error.\n",
    "tracescope-cli diverge seeds sequential_model --arg 'f32[4,28,28]:uniform'" },
  { "stats", cli_stats, CLI_STATS, "TRACE [--by WHAT] [--csv stats.csv]",
    "print a trace file's ops, every group by total time",
    "Reads a Chrome trace file (trace.json or trace.json.gz: ours from profile\n"
    "--out, PyTorch's profiler's, any tool's trace events) and prints every\n"
    "group by total time: runs, total and self time (a span less the spans\n"
    "directly inside it on its thread), median, min and p95 of one op's time,\n"
    "share of the wall time from the first op to the last.\n",
    "tracescope-cli stats run.json.gz --by scope" },
  { "top", cli_top, CLI_TOP, "TRACE [--by WHAT]", "print a trace file's 20 groups with the most self time",
    "Reads a Chrome trace file (as stats does) and prints the 20 groups with\n"
    "the most self time.\n",
    "tracescope-cli top run.json.gz" },
  { "diff", cli_diff, CLI_DIFF, "TRACE_A TRACE_B [--by WHAT]", "compare two trace files group by group",
    "Reads two Chrome trace files (as stats does) and compares them group by\n"
    "group, largest change first: runs, median and min self time in each, and\n"
    "B's median over A's.\n",
    "tracescope-cli diff before.json.gz after.json.gz" },
  { "onnx-test", cli_onnx_test, 0, "[--mode eager|graph|both] [--expected FILE]\n"
    "       [--wrong-data FILE] [--list-passed] [--verbose] DIR...",
    "run ONNX backend test folders",
    "Runs ONNX backend tests (a DIR holding model.onnx and test_data_set_*/\n"
    "input_*.pb and output_*.pb, or a folder of them) eagerly and as traced\n"
    "graphs, and ends with 'N passed, M failed, K skipped' (skipped: an op,\n"
    "dtype or attribute value the importer does not map, counted by op).\n"
    "Fails when a test fails.\n"
    "\n"
    "Options:\n"
    "  --mode MODE         both (default), eager or graph\n"
    "  --expected FILE     fail too when a test named in FILE does not pass\n"
    "  --wrong-data FILE   a test named in FILE (reference outputs that contradict\n"
    "                      their model, as ONNX's test_adam_multiple's) is skipped\n"
    "                      when it fails: tests/data/onnx-wrong-data.txt\n"
    "  --list-passed       print the name of each test that passed\n"
    "  --verbose           and why each skipped test was\n",
    "tracescope-cli onnx-test --wrong-data tests/data/onnx-wrong-data.txt "
    "/usr/include/onnx/backend/test/data/node" },
  { "export", cli_export, CLI_EXPORT, "MODULE FUNCTION [--arg SPEC]... --out FILE.onnx",
    "write one call's concrete function as an ONNX model",
    "Traces one call (as graph does) and writes its concrete function as an\n"
    "ONNX model (opset 17) that ONNX Runtime and `run FILE.onnx` run; a node\n"
    "ONNX cannot express (Print, assignments, TensorArrays) is an error naming\n"
    "it.\n",
    "tracescope-cli export seeds dense_128_model --arg 'f32[60,28,28]:uniform' --out dense.onnx" },
};

static const char module_help[] =
  "MODULE is a shared object built against libtracescope, `seeds` for the\n"
  "bundled programs of the tf.function guides, or an ONNX model (FILE.onnx: one\n"
  "function per output, named as `list` shows; its inputs are the arguments).\n";

static void print_spec_help(bool tensor_specs)
{
  g_autofree char *dtypes = ts_value_spec_dtypes(" ");
  printf("Argument specs (--arg):\n"
         "  f32[2,3]=1,2,3,4,5,6   a tensor: dtype, shape, values\n"
         "  f32[]=2.5              a scalar tensor\n"
         "  f32[20,28,28]:uniform  generated: uniform normal (seeded; uniform@7 picks\n"
         "                         seed 7), zeros ones range (range(-5) counts from -5)\n"
         "  npy:path.npy           a tensor from a .npy file\n"
         "  100  -2.5  true  [1,-1]  a  host values: int, float, bool, list, string\n"
         "  dtypes: %s\n", dtypes);
  if (tensor_specs)
    printf("Tensor specs (--concrete, --input-signature):\n"
           "  f32[?,784]  i32[]      a dtype and a shape; ? is a dimension of any size\n");
}

static const struct command *find_command(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
    if (strcmp(name, COMMANDS[i].name) == 0)
      return &COMMANDS[i];
  return NULL;
}

const char *cli_command_name(cli_command command)
{
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
    if (COMMANDS[i].options == command)
      return COMMANDS[i].name;
  return "?";
}

/* The usage line and the command list: the start of --help, and all that
 * a bare `tracescope-cli` prints (to stderr). */
static void print_usage(FILE *out)
{
  fprintf(out, "Usage: tracescope-cli COMMAND [ARGUMENT]... [OPTION]...\n\nCommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
    fprintf(out, "  %-11s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
}

int cli_show_help(void)
{
  print_usage(stdout);
  printf("\n%s\n", module_help);
  print_spec_help(true);
  printf("\n'tracescope-cli COMMAND --help' (or 'tracescope-cli help COMMAND') shows a command's\n"
         "options and an example.\n"
         "Example:\n  tracescope-cli run seeds deep_net --arg 'i32[3]=1,2,3'\n");
  return EXIT_SUCCESS;
}

int cli_show_command_help(const char *name)
{
  const struct command *c = find_command(name);
  g_return_val_if_fail(c != NULL, CLI_EXIT_USAGE);
  printf("Usage: tracescope-cli %s %s\n\n%s", c->name, c->synopsis, c->about);
  if (c->options) {
    printf("\nOptions:\n");
    cli_print_options(c->options, "  ", 20);
  }
  if (strstr(c->synopsis, "MODULE"))
    printf("\n%s", module_help);
  if (c->options & (CLI_RUN | CLI_SIGNATURES | CLI_GRAPH | CLI_RENDER | CLI_EXPORT | CLI_PROFILE |
                    CLI_DIVERGE | CLI_DEBUG | CLI_HEALTH)) {
    printf("\n");
    print_spec_help(c->options & (CLI_RUN | CLI_SIGNATURES | CLI_GRAPH | CLI_RENDER | CLI_EXPORT |
                                  CLI_DIVERGE | CLI_DEBUG | CLI_HEALTH));
  }
  printf("\nExample:\n  %s\n", c->example);
  return EXIT_SUCCESS;
}

int cli_fail(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *message = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_strdelimit(message, "\r\n", ' ');
  fflush(stdout); /* what was printed comes first */
  fprintf(stderr, "tracescope-cli: error: %s\n", message);
  g_free(message);
  return code;
}

int cli_fail_engine(int code)
{
  ts_error *error = ts_error_take();
  int ret = cli_fail(code, "%s", error ? error->message : "unknown error");
  ts_error_free(error);
  return ret;
}

int cli_fail_input(int code)
{
  ts_error *error = ts_error_take();
  int ret;
  if (!error)
    ret = cli_fail(code, "unknown error");
  else if (error->detail)
    ret = error->op ? cli_fail(code, "%s: %s", error->op, error->detail) : cli_fail(code, "%s", error->detail);
  else
    ret = cli_fail(code, "%s", error->message ? error->message : "unknown error");
  ts_error_free(error);
  return ret;
}

static int cmd_list(int argc, char **argv)
{
  for (int i = 0; i < argc; i++)
    if (is_help(argv[i]))
      return cli_show_command_help("list");
  for (int i = 0; i < argc; i++) /* list has no options: one given is said to be one, not a second MODULE */
    if (g_str_has_prefix(argv[i], "--"))
      return cli_fail(CLI_EXIT_USAGE, "unknown option '%s' (see: tracescope-cli list --help)", argv[i]);
  if (argc > 1)
    return cli_fail(CLI_EXIT_USAGE, "list takes one MODULE, not also '%s' (see: tracescope-cli list --help)",
                    argv[1]);
  if (argc != 1)
    return cli_fail(CLI_EXIT_USAGE, "list takes one MODULE (see: tracescope-cli list --help)");
  ts_module *module = cli_open_module(argv[0]);
  if (!module)
    return cli_fail_engine(CLI_EXIT_FAILED);
  printf("%s\n", ts_module_title(module));
  if (ts_module_n_functions(module) == 0) {
    g_autofree char *name = g_path_get_basename(argv[0]);
    fprintf(stderr, "note: %s exports no functions: name them in its TS_MODULE(...) with TS_EXPORT(fn, x, ...)\n",
            name);
  }
  for (int i = 0; i < ts_module_n_functions(module); i++) {
    const ts_function *fn = ts_module_function(module, i);
    printf("  %s(", ts_function_name(fn));
    for (int p = 0; p < ts_function_n_params(fn); p++)
      printf("%s%s", p ? ", " : "", ts_function_param_name(fn, p));
    printf(")\n");
  }
  ts_module_free(module);
  return EXIT_SUCCESS;
}

#ifndef TS_CLI_RENDER
/* Its help still says what render does, and that this build lacks it. */
static int cli_render_missing(int argc, char **argv)
{
  for (int i = 0; i < argc; i++)
    if (is_help(argv[i])) {
      int ret = cli_show_command_help("render");
      printf("\nThis tracescope-cli was built without the renderer (meson -Dgui=disabled).\n");
      return ret;
    }
  return cli_fail(CLI_EXIT_USAGE, "render: this tracescope-cli was built without the renderer "
                                  "(meson -Dgui=disabled); rebuild with -Dgui=enabled");
}
#endif

/* The nearest command's name for a mistyped one, or NULL. */
static const char *nearest_command(const char *name)
{
  const char *names[G_N_ELEMENTS(COMMANDS)];
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
    names[i] = COMMANDS[i].name;
  return ts_nearest_name(name, names, G_N_ELEMENTS(names));
}

static int unknown_command(const char *name)
{
  const char *near = nearest_command(name);
  return near ? cli_fail(CLI_EXIT_USAGE, "unknown command '%s' (did you mean '%s'? try --help)", name, near)
              : cli_fail(CLI_EXIT_USAGE, "unknown command '%s' (try --help)", name);
}

/* `tracescope-cli help [COMMAND]`, as git and meson take it: --help's text,
 * or the command's. */
static int cmd_help(int argc, char **argv)
{
  if (argc == 0)
    return cli_show_help();
  if (argc > 1)
    return cli_fail(CLI_EXIT_USAGE, "help takes at most one COMMAND (try --help)");
  return find_command(argv[0]) ? cli_show_command_help(argv[0]) : unknown_command(argv[0]);
}

int main(int argc, char **argv)
{
  if (argc < 2) { /* as git and meson do: the commands, then what shows more */
    print_usage(stderr);
    fprintf(stderr, "\n'tracescope-cli --help' shows more, 'tracescope-cli COMMAND --help' a command's options.\n");
    return CLI_EXIT_USAGE;
  }
  if (is_help(argv[1]))
    return cli_show_help();
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
    printf("tracescope-cli %s\n", TS_VERSION);
    return EXIT_SUCCESS;
  }
  const struct command *c = find_command(argv[1]);
  int ret = strcmp(argv[1], "help") == 0 ? cmd_help(argc - 2, argv + 2)
            : c                          ? c->run(argc - 2, argv + 2)
                                         : unknown_command(argv[1]);
  cli_close_models();
  ts_release_all();
  return ret;
}
