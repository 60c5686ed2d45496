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

static const char usage[] =
  "Usage:\n"
  "  tracescope-cli list MODULE\n"
  "  tracescope-cli run MODULE FUNCTION [OPTION]... [--call [--arg SPEC]...]...\n"
  "  tracescope-cli signatures MODULE FUNCTION [--call [--arg SPEC]...]...\n"
  "  tracescope-cli graph MODULE FUNCTION [--arg SPEC]... [--format text|dot]\n"
  "                 [--passes none|all|LIST]\n"
  "  tracescope-cli render MODULE FUNCTION [--arg SPEC]... --out FILE [--expand WHAT]...\n"
  "  tracescope-cli profile MODULE FUNCTION [--arg SPEC]... [--mode eager|graph|both]\n"
  "                 [--repeat N] [--out trace.json.gz] [--csv stats.csv] [--by WHAT]\n"
  "                 [--device NAME] [--against NAME]\n"
  "  tracescope-cli debug MODULE FUNCTION [--arg SPEC]... [--mode eager|graph]\n"
  "                 [--break SPEC]... [--commands FILE]\n"
  "  tracescope-cli health MODULE FUNCTION [--arg SPEC]... [--mode eager|graph] [--stats] [--all]\n"
  "  tracescope-cli diverge MODULE FUNCTION [--arg SPEC]... [--atol X] [--rtol Y]\n"
  "  tracescope-cli stats TRACE [--by WHAT] [--csv stats.csv]\n"
  "  tracescope-cli top TRACE [--by WHAT]\n"
  "  tracescope-cli diff TRACE_A TRACE_B [--by WHAT]\n"
  "  tracescope-cli onnx-test [--mode eager|graph|both] [--expected FILE] [--wrong-data FILE]\n"
  "                 [--list-passed] [--verbose] DIR...\n"
  "  tracescope-cli export MODULE FUNCTION [--arg SPEC]... --out FILE.onnx\n"
  "\n"
  "MODULE is a shared object built against libtracescope, `seeds` for the\n"
  "bundled programs of the tf.function guides, or an ONNX model (FILE.onnx: one\n"
  "function per output, named as `list` shows; its inputs are the arguments).\n"
  "\n"
  "run calls FUNCTION and prints each result, one line per call.\n"
  "  --arg SPEC       the next argument of the call (repeat in order); with no\n"
  "                   --arg at all, the module's example arguments (TS_EXPORT_WITH)\n"
  "  --call           starts the next call of FUNCTION (in one process, so the\n"
  "                   traced graphs are reused); without --call, one call\n"
  "  --repeat N       make each call N times (default 1)\n"
  "  --save DIR       write each result as DIR/FUNCTION-K.npy (K from 1, in call\n"
  "                   order) and print where, not its values (a model's outputs\n"
  "                   are too big to print)\n"
  "  --threads N      threads the engine splits large ops across, OpenBLAS's\n"
  "                   included (0: every core; default $TRACESCOPE_THREADS, else\n"
  "                   every core); also for profile, debug, health and diverge\n"
  "  --device NAME    the device the calls' ops run on: CPU (default), or SIM:0,\n"
  "                   the simulated GPU (with TRACESCOPE_DEVICES=sim); ops it\n"
  "                   cannot run fall back to the CPU with a warning; also for\n"
  "                   profile and debug\n"
  "  --against NAME   profile: make the same calls on device NAME too (CPU, SIM:0,\n"
  "                   CUDA:0) and compare them op by op: each op's time on both\n"
  "                   (on a device its kernels', the host's launch beside it)\n"
  "  --mode MODE      graph (default: trace once per signature, run the graph)\n"
  "                   or eager (run the C code on every call)\n"
  "  --isolate        run the module in a tracescope-worker process, as the app\n"
  "                   does: a crash is reported (with a backtrace) rather than\n"
  "                   taking the CLI down\n"
  "  --remote [USER@]HOST[:PORT]\n"
  "                   run the module on HOST in its tracescope-worker, through\n"
  "                   ssh (its keys and config; no password prompts): MODULE\n"
  "                   is a path there, or seeds\n"
  "  --check-eagerly  run every call both eagerly and as a graph and warn\n"
  "                   where they differ (the call returns the graph's result)\n"
  "  --kernels        after the calls, print the CPU, the BLAS library and the\n"
  "                   kernel the engine chose for each product and convolution\n"
  "                   shape met (timed against each other on first sight), on stderr\n"
  "  --trace-log      print each trace as it happens, with its reason:\n"
  "                   [trace] f(x: 3): retraced (host value): arg 0 (x): ... [0.02 ms, ...]\n"
  "                   and warnings as [warning] ...\n"
  "  --concrete SPEC  get the concrete function for these argument specs first\n"
  "                   (once per argument) and call it: other calls are refused\n"
  "  --input-signature SPEC  the input signature (once per argument)\n"
  "  --reduce-retracing      trace one graph with unknown dims when shapes change\n"
  "\n"
  "signatures traces FUNCTION for each call (or the --concrete specs, or the\n"
  "input signature, or the module's example arguments) without running it and\n"
  "prints its concrete functions.\n"
  "graph traces one call and prints its graph (--format text or dot); what the\n"
  "C code prints while tracing goes to stderr.  Both take --concrete,\n"
  "--input-signature and --reduce-retracing; signatures takes --trace-log.\n"
  "  --passes LIST    print the graph after the optimizer's passes (all, none\n"
  "                   or some of layout,fold,cse,simplify,dce,fuse), what each node\n"
  "                   made by them stands for, and one line per pass\n"
  "                   (\"cse: removed 12 nodes\"; on stderr with --format dot)\n"
  "\n"
  "render traces one call (as graph does) and draws its graph as the viewer\n"
  "shows it, with no display.\n"
  "  --out FILE       graph.svg, graph.png or graph.pdf; graph.dot writes DOT text\n"
  "  --expand WHAT    all, none, or a name scope to open (repeat; in order);\n"
  "                   by default the top-level scopes are closed\n"
  "  --style STYLE    light (default) or dark\n"
  "  --scale N        PNG pixels per point (default 1)\n"
  "\n"
  "profile calls FUNCTION once to warm up (in graph mode that call traces), then\n"
  "N more times (--repeat, default 10), timing every op, and prints the top ops\n"
  "by total time: count, total, self (less the ops inside an If/While), the\n"
  "median, min and p95 of one op's time, and share of the wall time.\n"
  "  --mode MODE      graph (default), eager, or both: then also eager against\n"
  "                   graph op by op, the speedup and what tracing costs\n"
  "  --by WHAT        group ops by op (default), node, line or scope\n"
  "  --out FILE       every event as a Chrome trace (trace.json, or gzipped\n"
  "                   trace.json.gz) for Perfetto, chrome://tracing or the app\n"
  "  --csv FILE       the op statistics as CSV (times in ns)\n"
  "\n"
  "debug runs one call op by op (eagerly unless --mode graph), stopping at its\n"
  "first op, or with --break at the breakpoints, and prints each stop as\n"
  "  #SEQ OP NODE at FILE:LINE (REASON)\n"
  "then reads commands from --commands FILE (else stdin, line by line):\n"
  "  step|s  next|n (step over calls and blocks)  finish (step out)  continue|c\n"
  "  back [N]  forward [N]  (move through the ops that ran: step back)\n"
  "  print|p [in|out] [I]  tensor statistics      values [in|out] [I]  values\n"
  "  where|bt  the call stack    break SPEC    delete N    quit (cancels the call)\n"
  "  --break SPEC     MatMul (an op type), dense_3/* (a name-scope glob),\n"
  "                   seeds.c:12 (a line), nan, inf, 'max > 1e6' (min max mean std\n"
  "                   with > >= < <= == !=), 'MatMul if std == 0'\n"
  "When the commands end, the call runs on to its end.\n"
  "health calls FUNCTION once, counting NaN and Inf in every op's outputs, and\n"
  "prints the first op that made one (--all: every op; --stats: min/max/mean).\n"
  "diverge runs FUNCTION eagerly and as a graph on the same arguments (the\n"
  "module's example arguments without --arg), compares the output of every op\n"
  "and prints the first op where they differ, with both values, the likely\n"
  "cause, and the differences the modes are allowed to have.  Exit status 0:\n"
  "no divergence, 1: divergence, 2: error.\n"
  "  --atol X --rtol Y  equal when |eager - graph| <= X + Y * |eager|\n"
  "                   (default 1e-6 and 1e-5)\n"
  "  --nan-differs    NaN against NaN is a difference (default: equal)\n"
  "onnx-test runs ONNX backend test folders (model.onnx, test_data_set_*/input_*.pb\n"
  "and output_*.pb) eagerly and as graphs, and ends with 'N passed, M failed, K skipped' (skipped: an op,\n"
  "dtype or attribute value the importer does not map, counted by op; --verbose: why each was).\n"
  "  --expected FILE  fail too when a test named in FILE does not pass\n"
  "  --wrong-data FILE  a test named in FILE (reference outputs that contradict\n"
  "                   their model, as ONNX's test_adam_multiple's) is skipped when it\n"
  "                   fails: tests/data/onnx-wrong-data.txt\n"
  "  --list-passed    print the name of each test that passed\n"
  "export traces one call (as graph does: --arg, --concrete, --input-signature,\n"
  "--reduce-retracing) and writes its concrete function as an ONNX model (opset\n"
  "17) that ONNX Runtime and `run FILE.onnx` run; a node ONNX cannot express\n"
  "(Print, assignments, TensorArrays) is an error naming it.\n"
  "\n"
  "stats, top and diff read Chrome trace files (trace.json or trace.json.gz: ours\n"
  "from profile --out, PyTorch's profiler's, any tool's trace events).  Self time\n"
  "is a span less the spans directly inside it on its thread; share is of the\n"
  "wall time from the first op to the last; median, min and p95 of one op's time.\n"
  "stats prints every group by total time (--csv FILE: as CSV), top the 20 with\n"
  "the most self time, diff two recordings group by group, largest change first:\n"
  "runs, median and min self time in each, and B's median over A's.\n"
  "  --by WHAT        group by op (default), node, line or scope\n"
  "\n"
  "Argument specs:\n"
  "  f32[2,3]=1,2,3,4,5,6   a tensor: dtype, shape, values; dtypes f32 f64 f16 bf16\n"
  "                         i8 i16 i32 i64 u8 u16 u32 u64 bool\n"
  "  f32[]=2.5              a scalar tensor\n"
  "  f32[20,28,28]:uniform  generated: uniform normal (seeded; uniform@7 picks seed 7),\n"
  "                         zeros ones range (range(-5) counts from -5)\n"
  "  npy:path.npy           a tensor from a .npy file\n"
  "  100  -2.5  true  [1,-1]  a  host values: int, float, bool, list, string\n"
  "Tensor specs (--concrete, --input-signature):\n"
  "  f32[?,784]  i32[]      a dtype and a shape; ? is a dimension of any size\n";

static bool is_help(const char *arg)
{
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_show_help(void)
{
  fputs(usage, stdout);
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
  if (argc == 1 && is_help(argv[0]))
    return cli_show_help();
  if (argc != 1)
    return cli_fail(CLI_EXIT_USAGE, "list takes one MODULE (try --help)");
  ts_module *module = cli_open_module(argv[0]);
  if (!module)
    return cli_fail_engine(CLI_EXIT_FAILED);
  printf("%s\n", ts_module_title(module));
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
static int cli_render_missing(int argc, char **argv)
{
  return cli_fail(CLI_EXIT_USAGE, "render: this tracescope-cli was built without the renderer "
                                  "(meson -Dgui=disabled); rebuild with -Dgui=enabled");
}
#endif

static const struct {
  const char *name;
  int (*run)(int argc, char **argv); /* the words after the command */
} COMMANDS[] = {
  { "list", cmd_list },
  { "run", cli_run },
  { "signatures", cli_signatures },
  { "graph", cli_graph },
#ifdef TS_CLI_RENDER
  { "render", cli_render },
#else
  { "render", cli_render_missing },
#endif
  { "profile", cli_profile },
  { "debug", cli_debug },
  { "health", cli_health },
  { "diverge", cli_diverge },
  { "stats", cli_stats },
  { "top", cli_top },
  { "diff", cli_diff },
  { "onnx-test", cli_onnx_test },
  { "export", cli_export },
};

int main(int argc, char **argv)
{
  if (argc < 2)
    return cli_fail(CLI_EXIT_USAGE, "no command given (try --help)");
  if (is_help(argv[1]))
    return cli_show_help();
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
    printf("tracescope-cli %s\n", TS_VERSION);
    return EXIT_SUCCESS;
  }
  int ret = -1;
  for (size_t i = 0; i < G_N_ELEMENTS(COMMANDS) && ret < 0; i++)
    if (strcmp(argv[1], COMMANDS[i].name) == 0)
      ret = COMMANDS[i].run(argc - 2, argv + 2);
  if (ret < 0)
    ret = cli_fail(CLI_EXIT_USAGE,
                   "unknown command '%s' (list, run, signatures, graph, render, profile, diverge, "
                   "debug, health, stats, top, diff, onnx-test, export; try --help)",
                   argv[1]);
  cli_close_models();
  ts_release_all();
  return ret;
}
