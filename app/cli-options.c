/* cli-options.c — the options of run, signatures, graph, render and profile (one table),
 * call groups, argument values and tensor specs. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-debug.h>

typedef struct parser {
  cli_options *o;
  bool saw_call;   /* a --call was given */
  bool loose_args; /* --arg values came before any --call */
} parser;

/* ---- option handlers: 0 or an exit status ------------------------------------ */

static int opt_arg(parser *p, const char *value)
{
  if (!p->saw_call) {
    p->loose_args = true;
    if (p->o->calls->len == 0)
      g_ptr_array_add(p->o->calls, g_ptr_array_new());
  }
  g_ptr_array_add(g_ptr_array_index(p->o->calls, p->o->calls->len - 1), (char *)value);
  return 0;
}

static int opt_call(parser *p, const char *value)
{
  if (p->loose_args && !p->saw_call)
    return cli_fail(CLI_EXIT_USAGE, "--arg before the first --call: give every call's "
                                    "arguments after its --call");
  p->saw_call = true;
  g_ptr_array_add(p->o->calls, g_ptr_array_new());
  return 0;
}

static int opt_mode(parser *p, const char *value)
{
  bool profile = p->o->command == CLI_PROFILE;
  if (profile && strcmp(value, "both") == 0) {
    p->o->both = true;
    return 0;
  }
  if (strcmp(value, "eager") != 0 && strcmp(value, "graph") != 0)
    return cli_fail(CLI_EXIT_USAGE, "--mode must be eager%s graph%s, not '%s'", profile ? "," : " or",
                    profile ? " or both" : "", value);
  p->o->eager = strcmp(value, "eager") == 0;
  p->o->both = false;
  return 0;
}

static int opt_repeat(parser *p, const char *value)
{
  char *end;
  long long n = strtoll(value, &end, 10);
  if (!*value || *end || n < 1 || n > 1000000000)
    return cli_fail(CLI_EXIT_USAGE, "--repeat needs a count from 1, not '%s'", value);
  p->o->repeat = n;
  return 0;
}

static int opt_threads(parser *p, const char *value)
{
  char *end;
  long n = strtol(value, &end, 10);
  if (!*value || *end || n < 0 || n > TS_MAX_THREADS)
    return cli_fail(CLI_EXIT_USAGE, "--threads needs a count from 0 (every core) to %d, not '%s'",
                    TS_MAX_THREADS, value);
  p->o->threads = (int)n;
  return 0;
}

/* The device option names (--device, --against) into *out. */
static int device_named(const char *option, const char *value, const ts_backend **out)
{
  const ts_backend *b = ts_backend_by_name(value);
  if (!b) {
    GString *names = g_string_new(NULL);
    for (int i = 0; i < ts_backend_count(); i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", ts_backend_name(ts_backend_get(i)));
    int ret = cli_fail(CLI_EXIT_USAGE, "%s needs one of %s, not '%s'", option, names->str, value);
    g_string_free(names, TRUE);
    return ret;
  }
  *out = b;
  return 0;
}

static int opt_device(parser *p, const char *value)
{
  return device_named("--device", value, &p->o->device);
}

static int opt_against(parser *p, const char *value)
{
  return device_named("--against", value, &p->o->against);
}

static int opt_concrete(parser *p, const char *value)
{
  g_ptr_array_add(p->o->concrete, (char *)value);
  return 0;
}

static int opt_input_signature(parser *p, const char *value)
{
  g_ptr_array_add(p->o->input_signature, (char *)value);
  return 0;
}

static int opt_reduce_retracing(parser *p, const char *value)
{
  p->o->reduce_retracing = true;
  return 0;
}

static int opt_isolate(parser *p, const char *value)
{
  p->o->isolate = true;
  return 0;
}

static int opt_remote(parser *p, const char *value)
{
  p->o->remote = value;
  p->o->isolate = true; /* a worker, there */
  return 0;
}

static int opt_save(parser *p, const char *value)
{
  p->o->save = value;
  return 0;
}

static int opt_trace_log(parser *p, const char *value)
{
  p->o->trace_log = true;
  return 0;
}

static int opt_format(parser *p, const char *value)
{
  if (strcmp(value, "text") != 0 && strcmp(value, "dot") != 0)
    return cli_fail(CLI_EXIT_USAGE, "--format must be text or dot, not '%s'", value);
  p->o->format = value;
  return 0;
}

/* The engine checks the list, and functions traced from now on get them. */
static int opt_passes(parser *p, const char *value)
{
  if (!ts_set_passes(value))
    return cli_fail_engine(CLI_EXIT_USAGE);
  p->o->passes = value;
  return 0;
}

static int opt_out(parser *p, const char *value)
{
  if (p->o->command == CLI_PROFILE) {
    if (!g_str_has_suffix(value, ".json") && !g_str_has_suffix(value, ".json.gz"))
      return cli_fail(CLI_EXIT_USAGE, "--out must name a .json or .json.gz file, not '%s'", value);
    p->o->out = value;
    return 0;
  }
  if (p->o->command == CLI_EXPORT) {
    if (!g_str_has_suffix(value, ".onnx"))
      return cli_fail(CLI_EXIT_USAGE, "--out must name a .onnx file, not '%s'", value);
    p->o->out = value;
    return 0;
  }
  static const char *const EXTENSIONS[] = { ".svg", ".png", ".pdf", ".dot" };
  const char *dot = strrchr(value, '.');
  for (size_t i = 0; dot && dot > value && i < G_N_ELEMENTS(EXTENSIONS); i++)
    if (g_ascii_strcasecmp(dot, EXTENSIONS[i]) == 0) {
      p->o->out = value;
      return 0;
    }
  return cli_fail(CLI_EXIT_USAGE, "--out must name a .svg, .png, .pdf or .dot file, not '%s'", value);
}

static int opt_expand(parser *p, const char *value)
{
  g_ptr_array_add(p->o->expand, (char *)value);
  return 0;
}

static int opt_style(parser *p, const char *value)
{
  if (strcmp(value, "light") != 0 && strcmp(value, "dark") != 0)
    return cli_fail(CLI_EXIT_USAGE, "--style must be light or dark, not '%s'", value);
  p->o->dark = strcmp(value, "dark") == 0;
  return 0;
}

static int opt_scale(parser *p, const char *value)
{
  char *end;
  double scale = g_ascii_strtod(value, &end);
  if (!*value || *end || !(scale >= 0.1 && scale <= 8))
    return cli_fail(CLI_EXIT_USAGE, "--scale needs a factor from 0.1 to 8, not '%s'", value);
  p->o->scale = scale;
  return 0;
}

static int opt_csv(parser *p, const char *value)
{
  p->o->csv = value;
  return 0;
}

static int opt_by(parser *p, const char *value)
{
  static const char *const GROUPS[] = { "op", "node", "line", "scope" };
  for (size_t i = 0; i < G_N_ELEMENTS(GROUPS); i++)
    if (strcmp(value, GROUPS[i]) == 0) {
      p->o->by = GROUPS[i];
      return 0;
    }
  return cli_fail(CLI_EXIT_USAGE, "--by must be op, node, line or scope, not '%s'", value);
}

static int opt_check_eagerly(parser *p, const char *value)
{
  p->o->check_eagerly = true;
  return 0;
}

static int opt_tolerance(parser *p, const char *value, const char *name, double *out)
{
  char *end;
  double v = g_ascii_strtod(value, &end);
  if (!*value || *end || !(v >= 0) || isinf(v))
    return cli_fail(CLI_EXIT_USAGE, "%s needs a number >= 0, not '%s'", name, value);
  *out = v;
  return 0;
}

static int opt_atol(parser *p, const char *value)
{
  return opt_tolerance(p, value, "--atol", &p->o->atol);
}

static int opt_rtol(parser *p, const char *value)
{
  return opt_tolerance(p, value, "--rtol", &p->o->rtol);
}

static int opt_break(parser *p, const char *value)
{
  if (!ts_debug_break_check(value))
    return cli_fail_engine(CLI_EXIT_USAGE);
  g_ptr_array_add(p->o->breaks, (char *)value);
  return 0;
}

static int opt_commands(parser *p, const char *value)
{
  p->o->commands = value;
  return 0;
}

static int opt_kernels(parser *p, const char *value)
{
  p->o->kernels = true;
  return 0;
}

static int opt_stats(parser *p, const char *value)
{
  p->o->stats = true;
  return 0;
}

static int opt_all(parser *p, const char *value)
{
  p->o->all = true;
  return 0;
}

static int opt_memory(parser *p, const char *value)
{
  p->o->memory = true;
  return 0;
}

static int opt_nan_differs(parser *p, const char *value)
{
  p->o->nan_differs = true;
  return 0;
}

/* Every option of the commands parsed here, with its help (one entry per
 * meaning: an option that means something else for some commands has an
 * entry for those, found first for them). */
#define TRACING_COMMANDS (CLI_RUN | CLI_SIGNATURES | CLI_GRAPH | CLI_RENDER | CLI_EXPORT)
#define CALLING_COMMANDS (CLI_RUN | CLI_PROFILE | CLI_DIVERGE | CLI_DEBUG | CLI_HEALTH)
static const struct option {
  const char *name;
  const char *value; /* what the value is called in messages; NULL: a flag */
  unsigned commands;
  int (*apply)(parser *p, const char *value);
  const char *metavar; /* the value in the help, or NULL */
  const char *help;    /* lines after the first indented under it */
} OPTIONS[] = {
  { "--arg", "a SPEC", TRACING_COMMANDS | CALLING_COMMANDS, opt_arg, "SPEC",
    "the next argument of the call (repeat, in order); a call with no --arg "
    "takes the module's example arguments (TS_EXPORT_WITH)" },
  { "--call", NULL, CLI_RUN | CLI_SIGNATURES | CLI_GRAPH | CLI_RENDER, opt_call, NULL,
    "starts the next call of FUNCTION (in one process, so traced graphs "
    "are reused); without --call, one call" },
  { "--mode", "eager, graph or both", CLI_PROFILE, opt_mode, "MODE",
    "graph (default), eager, or both: then also eager against graph op by op, "
    "the speedup and what tracing costs" },
  { "--mode", "eager or graph", CLI_DEBUG | CLI_HEALTH, opt_mode, "MODE",
    "eager (default: the C code op by op) or graph (the traced graph)" },
  { "--mode", "eager or graph", CLI_RUN, opt_mode, "MODE",
    "graph (default: trace once per signature, run the graph) or eager "
    "(run the C code on every call)" },
  { "--repeat", "a count", CLI_PROFILE, opt_repeat, "N",
    "timed calls after the warm-up call (default 10)" },
  { "--repeat", "a count", CLI_RUN, opt_repeat, "N", "make each call N times (default 1)" },
  { "--threads", "a count", CALLING_COMMANDS, opt_threads, "N",
    "threads the engine splits large ops across, OpenBLAS's included "
    "(0: every core; default $TRACESCOPE_THREADS, else every core)" },
  { "--device", "a device name", CLI_RUN | CLI_PROFILE | CLI_DEBUG, opt_device, "NAME",
    "the device the calls' ops run on: CPU (default), or SIM:0, the "
    "simulated GPU (with TRACESCOPE_DEVICES=sim); ops it cannot run fall "
    "back to the CPU with a warning" },
  { "--against", "a device name", CLI_PROFILE, opt_against, "NAME",
    "make the same calls on device NAME too (CPU, SIM:0, CUDA:0) and compare "
    "them op by op: each op's time on both (on a device its kernels', the "
    "host's launch beside it)" },
  { "--concrete", "a SPEC", TRACING_COMMANDS, opt_concrete, "SPEC",
    "get the concrete function for these tensor specs first (once per "
    "argument) and use it: calls that do not fit it are refused" },
  { "--input-signature", "a SPEC", TRACING_COMMANDS | CLI_DIVERGE | CLI_DEBUG | CLI_HEALTH, opt_input_signature,
    "SPEC", "the input signature (once per argument)" },
  { "--reduce-retracing", NULL, TRACING_COMMANDS, opt_reduce_retracing, NULL,
    "trace one graph with unknown dims when shapes change" },
  { "--trace-log", NULL, CLI_RUN | CLI_SIGNATURES, opt_trace_log, NULL,
    "print each trace as it happens, with its reason, and warnings:\n"
    "[trace] f(x: 3): retraced (host value): arg 0 (x): ... [0.02 ms, ...]" },
  { "--isolate", NULL, CLI_RUN, opt_isolate, NULL,
    "run the module in a tracescope-worker process, as the app does: a crash "
    "is reported (with a backtrace) rather than taking the CLI down" },
  { "--remote", "[user@]host[:port]", CLI_RUN, opt_remote, "[USER@]HOST[:PORT]",
    "run the module on HOST in its tracescope-worker, through ssh (its keys "
    "and config; no password prompts): MODULE is a path there, or seeds" },
  { "--format", "text or dot", CLI_GRAPH, opt_format, "FORMAT", "text (default) or dot" },
  { "--passes", "none, all or a LIST", CLI_GRAPH, opt_passes, "LIST",
    "print the graph after the optimizer's passes (all, none or some of "
    "layout,fold,cse,simplify,dce,fuse), what each node made by them stands "
    "for, and one line per pass (\"cse: removed 12 nodes\"; on stderr with "
    "--format dot)" },
  { "--out", "a FILE", CLI_PROFILE, opt_out, "FILE",
    "every event as a Chrome trace (trace.json, or gzipped trace.json.gz) "
    "for Perfetto, chrome://tracing or the app" },
  { "--out", "a FILE", CLI_EXPORT, opt_out, "FILE", "the ONNX model to write (FILE.onnx)" },
  { "--out", "a FILE", CLI_RENDER, opt_out, "FILE",
    "graph.svg, graph.png or graph.pdf; graph.dot writes DOT text" },
  { "--save", "a DIR", CLI_RUN, opt_save, "DIR",
    "write each result as DIR/FUNCTION-K.npy (K from 1, in call order; a "
    "tuple's tensors as DIR/FUNCTION-K-J.npy, J from 1) and print where, not "
    "its values (a model's outputs are too big to print)" },
  { "--csv", "a FILE", CLI_PROFILE | CLI_STATS, opt_csv, "FILE", "the op statistics as CSV (times in ns)" },
  { "--memory", NULL, CLI_PROFILE, opt_memory, NULL,
    "record tensor memory over time too (costs about as much again as the ops)" },
  { "--by", "op, node, line or scope", CLI_PROFILE | CLI_STATS | CLI_TOP | CLI_DIFF, opt_by, "WHAT",
    "group ops by op (default), node, line or scope" },
  { "--expand", "all, none or a SCOPE", CLI_RENDER, opt_expand, "WHAT",
    "all, none, or a name scope to open (repeat; in order); by default the "
    "top-level scopes are closed" },
  { "--style", "light or dark", CLI_RENDER, opt_style, "STYLE", "light (default) or dark" },
  { "--scale", "a factor", CLI_RENDER, opt_scale, "N", "PNG pixels per point (default 1)" },
  { "--check-eagerly", NULL, CLI_RUN, opt_check_eagerly, NULL,
    "run every call both eagerly and as a graph and warn where they differ "
    "(the call returns the graph's result)" },
  { "--kernels", NULL, CLI_RUN, opt_kernels, NULL,
    "after the calls, print on stderr the CPU, the BLAS library and the "
    "kernel the engine chose for each product and convolution shape met "
    "(timed against each other on first sight)" },
  { "--atol", "a tolerance", CLI_DIVERGE, opt_atol, "X",
    "absolute tolerance: values are equal when |eager - graph| <= atol + rtol * |eager| (default 1e-6)" },
  { "--rtol", "a tolerance", CLI_DIVERGE, opt_rtol, "Y", "relative tolerance (default 1e-5)" },
  { "--nan-differs", NULL, CLI_DIVERGE, opt_nan_differs, NULL, "NaN against NaN is a difference (default: equal)" },
  { "--break", "a SPEC", CLI_DEBUG, opt_break, "SPEC",
    "stop there (repeat): MatMul (an op type), dense_3/* (a name, scope or "
    "path glob: While/body/* for a loop body's ops), "
    "seeds.c:12 (a line), nan, inf, 'max > 1e6' (min max mean std with "
    "> >= < <= == !=), 'MatMul if std == 0'" },
  { "--commands", "a FILE", CLI_DEBUG, opt_commands, "FILE", "read the commands from FILE (default: stdin)" },
  { "--stats", NULL, CLI_HEALTH, opt_stats, NULL, "print each op's min, max and mean too" },
  { "--all", NULL, CLI_HEALTH, opt_all, NULL, "print every op, not only the first that made a NaN or Inf" },
};

/* The option arg names ("--opt", "--opt=VALUE"): command's entry for it,
 * else the first (which command refuses), else NULL. */
static const struct option *find_option(const char *arg, cli_command command)
{
  const struct option *first = NULL;
  for (size_t k = 0; k < G_N_ELEMENTS(OPTIONS); k++) {
    size_t len = strlen(OPTIONS[k].name);
    if (strncmp(arg, OPTIONS[k].name, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
      continue;
    if (OPTIONS[k].commands & command)
      return &OPTIONS[k];
    if (!first)
      first = &OPTIONS[k];
  }
  return first;
}

/* text with its spaces turned into line breaks where a line would pass
 * columns (its own breaks kept; a longer word stays whole). */
static GString *wrap(const char *text, int columns)
{
  GString *out = g_string_new(NULL);
  int line = 0;
  g_auto(GStrv) words = g_strsplit(text, " ", -1);
  for (char **w = words; *w; w++) {
    int len = (int)strlen(*w);
    if (line > 0 && line + 1 + len > columns) {
      g_string_append_c(out, '\n');
      line = 0;
    } else if (w != words) {
      g_string_append_c(out, ' ');
      line++;
    }
    g_string_append(out, *w);
    const char *newline = strrchr(*w, '\n');
    line = newline ? (int)strlen(newline + 1) : line + len;
  }
  return out;
}

void cli_print_options(cli_command command, const char *indent, int width)
{
  for (size_t k = 0; k < G_N_ELEMENTS(OPTIONS); k++) {
    const struct option *opt = &OPTIONS[k];
    if (!(opt->commands & command) || find_option(opt->name, command) != opt)
      continue; /* not this command's, or its own entry comes first */
    g_autofree char *head = g_strdup_printf("%s%s", opt->name, opt->metavar ? " " : "");
    g_autofree char *full = g_strconcat(head, opt->metavar ? opt->metavar : "", NULL);
    GString *help = wrap(opt->help, 79 - (int)strlen(indent) - width);
    g_auto(GStrv) lines = g_strsplit(help->str, "\n", -1);
    g_string_free(help, TRUE);
    if ((int)strlen(full) + 1 >= width) /* too long: its help on the next line */
      printf("%s%s\n%s%-*s%s\n", indent, full, indent, width, "", lines[0]);
    else
      printf("%s%-*s%s\n", indent, width, full, lines[0]);
    for (int i = 1; lines[i]; i++)
      printf("%s%-*s%s\n", indent, width, "", lines[i]);
  }
}

static int apply_option(parser *p, const struct option *opt, int argc, char **argv, int *i)
{
  const char *arg = argv[*i];
  const char *eq = strchr(arg, '=');
  if (!(opt->commands & p->o->command))
    return cli_fail(CLI_EXIT_USAGE, "%s is not an option of %s (see: tracescope-cli %s --help)", opt->name,
                    cli_command_name(p->o->command), cli_command_name(p->o->command));
  if (!opt->value) {
    if (eq)
      return cli_fail(CLI_EXIT_USAGE, "%s takes no value", opt->name);
    return opt->apply(p, NULL);
  }
  const char *value = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
  if (!value || !*value)
    return cli_fail(CLI_EXIT_USAGE, "%s needs %s (see: tracescope-cli %s --help)", opt->name, opt->value,
                    cli_command_name(p->o->command));
  return opt->apply(p, value);
}

/* "unknown option '--sav' (did you mean '--save'? ...)": the nearest of
 * command's options, the value after '=' aside. */
static int unknown_option(const char *arg, cli_command command)
{
  const char *names[G_N_ELEMENTS(OPTIONS)];
  size_t n = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(OPTIONS); k++)
    if (OPTIONS[k].commands & command)
      names[n++] = OPTIONS[k].name;
  g_autofree char *name = g_strndup(arg, strcspn(arg, "="));
  const char *near = ts_nearest_name(name, names, n);
  g_autofree char *hint = near ? g_strdup_printf("did you mean '%s'? ", near) : g_strdup("");
  return cli_fail(CLI_EXIT_USAGE, "unknown option '%s' (%ssee: tracescope-cli %s --help)", arg, hint,
                  cli_command_name(command));
}

int cli_options_parse(cli_options *o, cli_command command, int argc, char **argv)
{
  *o = (cli_options){
    .command = command,
    .calls = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref),
    .concrete = g_ptr_array_new(),
    .input_signature = g_ptr_array_new(),
    .repeat = command == CLI_PROFILE ? 10 : 1,
    .format = "text",
    .expand = g_ptr_array_new(),
    .scale = 1,
    .by = "op",
    .atol = TS_DIVERGE_OPTIONS_DEFAULT.atol,
    .rtol = TS_DIVERGE_OPTIONS_DEFAULT.rtol,
    .breaks = g_ptr_array_new(),
    .eager = command == CLI_DEBUG || command == CLI_HEALTH, /* debugging is of eager runs first */
    .threads = -1,
  };
  parser p = { .o = o };
  int n_operands = 0;
  int n_files = command == CLI_DIFF ? 2 : command & (CLI_STATS | CLI_TOP) ? 1 : 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    const struct option *opt = find_option(arg, command);
    int ret;
    if (opt) {
      if ((ret = apply_option(&p, opt, argc, argv, &i)) != 0)
        return ret;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      o->help = true;
      return 0;
    } else if (arg[0] == '-' && arg[1] == '-') {
      return unknown_option(arg, command);
    } else if (n_operands < n_files) {
      o->traces[n_operands++] = arg;
    } else if (n_operands < 2 && !n_files) {
      *(n_operands++ ? &o->function : &o->module) = arg;
    } else {
      return cli_fail(CLI_EXIT_USAGE, "unexpected argument '%s'%s", arg,
                      n_files ? "" : " (arguments go after --arg)");
    }
  }
  if (n_files && n_operands < n_files)
    return cli_fail(CLI_EXIT_USAGE, "%s needs %s (see: tracescope-cli %s --help)", cli_command_name(command),
                    n_files == 2 ? "two trace files" : "a trace file", cli_command_name(command));
  if (!n_files && n_operands == 1) /* the module alone: where its functions are listed */
    return cli_fail(CLI_EXIT_USAGE, "%s needs a FUNCTION after the MODULE (tracescope-cli list %s lists them)",
                    cli_command_name(command), o->module);
  if (!n_files && n_operands < 2)
    return cli_fail(CLI_EXIT_USAGE, "%s needs a MODULE and a FUNCTION (see: tracescope-cli %s --help)",
                    cli_command_name(command), cli_command_name(command));
  if (command == CLI_RENDER && !o->out)
    return cli_fail(CLI_EXIT_USAGE, "render needs --out FILE (.svg, .png, .pdf or .dot)");
  if (command == CLI_EXPORT && !o->out)
    return cli_fail(CLI_EXIT_USAGE, "export needs --out FILE.onnx");
  if (o->isolate && (o->concrete->len > 0 || o->reduce_retracing || o->kernels || o->save))
    return cli_fail(CLI_EXIT_USAGE, "%s takes --arg, --call, --mode, --repeat, --input-signature "
                                    "and --trace-log; not %s", o->remote ? "--remote" : "--isolate",
                                    o->concrete->len > 0 ? "--concrete"
                                    : o->reduce_retracing ? "--reduce-retracing"
                                    : o->kernels ? "--kernels" : "--save");
  if (o->check_eagerly && (o->eager || o->isolate || o->concrete->len > 0))
    return cli_fail(CLI_EXIT_USAGE, "--check-eagerly runs each call both ways: it cannot be "
                                    "combined with %s", o->eager ? "--mode eager"
                                    : o->remote ? "--remote" : o->isolate ? "--isolate" : "--concrete");
  if (o->eager && o->concrete->len > 0)
    return cli_fail(CLI_EXIT_USAGE, "--concrete calls a traced graph: it cannot be combined "
                                    "with --mode eager");
  if (o->isolate && o->device)
    return cli_fail(CLI_EXIT_USAGE, "--isolate runs on the worker's CPU: it cannot be combined "
                                    "with --device");
  if (o->device) /* for the rest of the process (the debugger's thread opens its own) */
    ts_device_scope_begin(o->device);
  if (o->threads >= 0) {
    /* this process, and a worker it starts (--isolate) through the environment */
    ts_set_threads(o->threads);
    char count[16];
    snprintf(count, sizeof count, "%d", ts_get_threads());
    g_setenv("TRACESCOPE_THREADS", count, TRUE);
  }
  return 0;
}

void cli_options_clear(cli_options *o)
{
  g_ptr_array_unref(o->calls);
  g_ptr_array_unref(o->concrete);
  g_ptr_array_unref(o->input_signature);
  g_ptr_array_unref(o->expand);
  g_ptr_array_unref(o->breaks);
}

/* ---- values and specs ----------------------------------------------------------- */

/* "f32[?,784]" / "i32[]": a dtype and a shape whose dims may be unknown.
 * False (without an error) if text is not of that form; *error set to a
 * message when it is but something is wrong in it. */
static bool parse_tensor_spec(const char *text, ts_spec *out, char **error)
{
  const char *open = strchr(text, '[');
  size_t len = strlen(text);
  if (!open || open == text || len < 2 || text[len - 1] != ']' || strchr(open + 1, '['))
    return false;
  for (const char *c = text; c < open; c++)
    if (!g_ascii_isalnum(*c) && *c != '_')
      return false;
  *error = NULL;
  char *dtype = g_strndup(text, (size_t)(open - text));
  if (!ts_dtype_from_name(dtype, &out->dtype) || out->dtype == TS_VARIANT)
    *error = g_strdup_printf("unknown dtype '%s'", dtype);
  g_free(dtype);
  char *dims = g_strstrip(g_strndup(open + 1, (size_t)(text + len - 1 - open - 1)));
  char **parts = *dims ? g_strsplit(dims, ",", -1) : g_new0(char *, 1);
  out->shape.rank = 0;
  for (int i = 0; !*error && parts[i]; i++) {
    char *d = g_strstrip(parts[i]), *end;
    errno = 0; /* strtoll clamps what it cannot hold to LLONG_MAX: out of range is an error */
    long long v = strcmp(d, "?") == 0 ? -1 : strtoll(d, &end, 10);
    if (i >= TS_MAX_RANK)
      *error = g_strdup_printf("more than %d dimensions", TS_MAX_RANK);
    else if (strcmp(d, "?") != 0 && (!*d || *end || v < -1 || errno == ERANGE))
      *error = g_strdup_printf("'%s' is not a dimension (a size or ?)", d);
    else
      out->shape.dim[out->shape.rank++] = v;
  }
  g_strfreev(parts);
  g_free(dims);
  return true;
}

static int spec_fail(const char *option, const char *spec, const char *error)
{
  return cli_fail(CLI_EXIT_USAGE, "%s '%s': %s", option, spec, error);
}

bool cli_args_parse(GPtrArray *specs, cli_args *out)
{
  out->n = (int)specs->len;
  out->v = g_new0(ts_value, out->n > 0 ? out->n : 1);
  for (int i = 0; i < out->n; i++)
    if (!ts_value_parse(g_ptr_array_index(specs, i), &out->v[i])) {
      cli_fail_input(CLI_EXIT_USAGE);
      return false;
    }
  return true;
}

bool cli_concrete_parse(GPtrArray *specs, cli_args *out)
{
  out->n = (int)specs->len;
  out->v = g_new0(ts_value, out->n > 0 ? out->n : 1);
  for (int i = 0; i < out->n; i++) {
    const char *text = g_ptr_array_index(specs, i);
    ts_spec spec;
    char *error = NULL;
    if (parse_tensor_spec(text, &spec, &error)) {
      if (error) {
        spec_fail("--concrete", text, error);
        g_free(error);
        return false;
      }
      out->v[i] = TS_SPEC_VALUE(spec.dtype, spec.shape);
    } else if (!ts_value_parse(text, &out->v[i])) {
      cli_fail_input(CLI_EXIT_USAGE);
      return false;
    }
  }
  return true;
}

void cli_args_clear(cli_args *a)
{
  for (int i = 0; i < a->n; i++)
    ts_value_clear(&a->v[i]);
  g_free(a->v);
  *a = (cli_args){ 0 };
}

/* ---- the function ----------------------------------------------------------------- */

/* --input-signature SPECs onto fn; false after printing the error. */
static bool set_input_signature(ts_function *fn, GPtrArray *specs)
{
  ts_spec *sig = g_new0(ts_spec, specs->len > 0 ? specs->len : 1);
  bool ok = true;
  for (guint i = 0; ok && i < specs->len; i++) {
    const char *text = g_ptr_array_index(specs, i);
    char *error = NULL;
    if (!parse_tensor_spec(text, &sig[i], &error))
      error = g_strdup("expected DTYPE[DIMS], e.g. f32[?,784]");
    if (error) {
      spec_fail("--input-signature", text, error);
      g_free(error);
      ok = false;
    }
  }
  if (ok && !ts_function_set_input_signature(fn, sig, (int)specs->len)) {
    cli_fail_engine(CLI_EXIT_USAGE);
    ok = false;
  }
  g_free(sig);
  return ok;
}

int cli_open_function(const cli_options *o, ts_module **module, ts_function **fn)
{
  *fn = NULL;
  *module = NULL;
  if (g_str_has_suffix(o->module, ".json") || g_str_has_suffix(o->module, ".json.gz"))
    return cli_fail(CLI_EXIT_USAGE, "'%s' is a trace, not a module: read it with "
                    "tracescope-cli stats|top %s", o->module, o->module);
  if (!(*module = cli_open_module(o->module)))
    return cli_fail_engine(CLI_EXIT_FAILED);
  ts_function *f = ts_module_lookup(*module, o->function);
  if (!f) {
    const char *near = ts_module_nearest_function(*module, o->function);
    g_autofree char *hint = near ? g_strdup_printf("did you mean '%s'? ", near) : g_strdup("");
    return cli_fail(CLI_EXIT_FAILED, "module '%s' has no function '%s' (%ssee: tracescope-cli list %s)",
                    o->module, o->function, hint, o->module);
  }
  if (o->input_signature->len > 0) {
    int ret = cli_check_arity(f, (int)o->input_signature->len, "--input-signature");
    if (ret != 0)
      return ret;
    if (!set_input_signature(f, o->input_signature))
      return CLI_EXIT_USAGE;
  }
  ts_function_set_reduce_retracing(f, o->reduce_retracing);
  *fn = f;
  return 0;
}

const char *const *cli_examples(const ts_module *module, const ts_function *fn)
{
  for (int i = 0; i < ts_module_n_functions(module); i++)
    if (ts_module_function(module, i) == fn)
      return ts_module_examples(module, i);
  return NULL;
}

int cli_check_arity(const ts_function *fn, int n_args, const char *given_with)
{
  int n_params = ts_function_n_params(fn);
  if (n_params == 0 || n_params == n_args)
    return 0;
  GString *params = g_string_new(NULL);
  for (int i = 0; i < n_params; i++)
    g_string_append_printf(params, "%s%s", i ? ", " : "", ts_function_param_name(fn, i));
  /* none given with --arg: the module declares no example arguments either */
  const char *no_examples = n_args == 0 && strcmp(given_with, "--arg") == 0
                              ? " (and the module gives no example arguments: TS_EXPORT_WITH)"
                              : "";
  int ret = cli_fail(CLI_EXIT_USAGE, "%s(%s) takes %d argument%s, %d given with %s%s",
                     ts_function_name(fn), params->str, n_params, n_params == 1 ? "" : "s",
                     n_args, given_with, no_examples);
  g_string_free(params, TRUE);
  return ret;
}

int cli_command_main(cli_command command, int argc, char **argv, int (*body)(const cli_options *o))
{
  cli_options o;
  int ret = cli_options_parse(&o, command, argc, argv);
  if (ret == 0)
    ret = o.help ? cli_show_command_help(cli_command_name(command)) : body(&o);
  cli_options_clear(&o);
  return ret;
}
