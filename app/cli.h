/* cli.h — what the files of tracescope-cli share: errors, the parsed
 * options of run / signatures / graph / render / profile, argument values, tracing
 * one call, the commands. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <tracescope.h>

enum { CLI_EXIT_FAILED = 1, CLI_EXIT_USAGE = 2 };

/* Prints "tracescope-cli: error: MESSAGE" (one line) on stderr; returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The engine's pending error as the one error line. */
int cli_fail_engine(int code);
/* The same for an error in what the user typed (an argument spec): the
 * error's op and detail, never the engine's own source location. */
int cli_fail_input(int code);
/* Prints the usage text on stdout (every command, in short); returns 0. */
int cli_show_help(void);
/* Prints command's own help on stdout (its usage, what it does, its
 * options, an example); returns 0. */
int cli_show_command_help(const char *command);

typedef enum cli_command {
  CLI_RUN = 1 << 0,
  CLI_SIGNATURES = 1 << 1,
  CLI_GRAPH = 1 << 2,
  CLI_RENDER = 1 << 3,
  CLI_PROFILE = 1 << 4,
  CLI_DIVERGE = 1 << 5,
  CLI_DEBUG = 1 << 6,
  CLI_HEALTH = 1 << 7,
  CLI_STATS = 1 << 8, /* the commands on trace files */
  CLI_TOP = 1 << 9,
  CLI_DIFF = 1 << 10,
  CLI_EXPORT = 1 << 11,
} cli_command;

/* "run", "signatures", "graph", "render", "profile", "diverge", "debug", "health",
 * "stats", "top", "diff", "export". */
const char *cli_command_name(cli_command command);

/* The options of run, signatures, graph and render (strings borrowed from argv). */
typedef struct cli_options {
  cli_command command;
  const char *module, *function;
  const char *traces[2];      /* stats, top: a trace file; diff: two */
  bool eager;                 /* --mode eager (debug and health: the default) */
  bool both;                  /* profile: --mode both */
  bool memory;                /* profile: --memory (tensor memory over time) */
  GPtrArray *calls;           /* per call: a GPtrArray of --arg specs */
  GPtrArray *concrete;        /* --concrete specs, one per argument */
  GPtrArray *input_signature; /* --input-signature specs */
  bool reduce_retracing;
  bool trace_log;
  bool isolate;               /* run: through a tracescope-worker process */
  const char *remote;         /* run --remote: "[user@]host[:port]" whose worker makes the calls (over ssh) */
  int64_t repeat;
  int threads;                /* --threads (0: every core), applied by the parser; -1 if not given */
  const ts_backend *device;   /* --device, opened on the parsing thread by the parser; NULL: CPU */
  const ts_backend *against;  /* profile --against: the device the same calls run on too, compared */
  const char *format;         /* graph: "text" or "dot" */
  const char *passes;         /* graph: the optimizer passes to run first, or NULL */
  const char *out;            /* render, profile: the file to write */
  const char *save;           /* run: --save DIR, every result as a .npy file there */
  const char *csv;            /* profile: op statistics as CSV */
  const char *by;             /* profile: op, node, line or scope */
  GPtrArray *expand;          /* render: "all", "none" or scope names, in order */
  bool dark;                  /* render: --style dark */
  double scale;               /* render: PNG pixels per layout unit */
  bool check_eagerly;         /* run: --check-eagerly */
  double atol, rtol;          /* diverge: tolerances */
  bool nan_differs;           /* diverge: --nan-differs */
  GPtrArray *breaks;          /* debug: --break specs, checked */
  const char *commands;       /* debug: --commands FILE; NULL: stdin */
  bool kernels;               /* run: --kernels */
  bool stats;                 /* health: --stats */
  bool all;                   /* health: --all */
  bool help;
} cli_options;

/* Fills o from argv (the words after the command); 0 or the exit status of
 * a usage error (already printed).  Free with cli_options_clear. */
int cli_options_parse(cli_options *o, cli_command command, int argc, char **argv);
void cli_options_clear(cli_options *o);
/* Prints the options command takes, one per line: indent, the option and
 * its value padded to width, then its help (further lines under it). */
void cli_print_options(cli_command command, const char *indent, int width);
/* A command's whole life: parses its options, then shows the help or
 * runs body; the exit status. */
int cli_command_main(cli_command command, int argc, char **argv, int (*body)(const cli_options *o));

/* The arguments of one call, parsed in the current scope. */
typedef struct cli_args {
  ts_value *v;
  int n;
} cli_args;

/* --arg SPECs into values; false after printing the error (usage). */
bool cli_args_parse(GPtrArray *specs, cli_args *out);
/* --concrete SPECs: "DTYPE[DIMS]" (a dim may be ?) is a tensor spec, anything
 * else an --arg value.  false after printing the error (usage). */
bool cli_concrete_parse(GPtrArray *specs, cli_args *out);
void cli_args_clear(cli_args *a);

/* Opens o's module (*module, owned, NULL if it failed) and finds its
 * function (*fn, borrowed), set up with o's input signature and
 * reduce_retracing.  0, or an exit status after printing the error. */
int cli_open_function(const cli_options *o, ts_module **module, ts_function **fn);
/* An exit status if a call's argument count does not fit fn, else 0. */
int cli_check_arity(const ts_function *fn, int n_args, const char *given_with);
/* fn's example arguments in module (NULL-terminated specs), or NULL. */
const char *const *cli_examples(const ts_module *module, const ts_function *fn);

/* What to trace fn for (graph and render take one call, signatures
 * several): the --call groups, then the --concrete specs, else the input
 * signature, else the module's example arguments; appended to out (cli_args, in the current scope).  0 or an
 * exit status after printing the error. */
int cli_trace_inputs(const cli_options *o, const ts_module *module, const ts_function *fn, int n_max,
                     GArray *out);
/* Traces fn for a without running it, with what the C code prints sent to
 * stderr (it must not mix into a graph on stdout).  Borrowed; NULL + error. */
ts_concrete *cli_trace_aside(ts_function *fn, const cli_args *a);

/* Prints trace events ("[trace] ...") and warnings ("[warning] ...") on
 * stdout when trace_log, else warnings only, on stderr.  Returns the
 * listener id (remove with ts_listener_remove). */
int cli_listen(bool trace_log);
/* One line of the trace log: "[trace] f(x: 3): retraced (host value): ... [0.02 ms, 2 concrete functions]". */
void cli_print_trace(const char *function, const char *signature, ts_trace_reason reason,
                     const char *reason_text, uint64_t duration_ns, int n_concrete, bool failed);
/* `run --isolate`: the calls of o made by a worker process (cli-isolate.c). */
int cli_run_isolated(const cli_options *o);

int cli_run(int argc, char **argv);
int cli_signatures(int argc, char **argv);
int cli_graph(int argc, char **argv);
int cli_render(int argc, char **argv);
/* cli-onnx.c: export FUNCTION's concrete function as an ONNX model */
int cli_export(int argc, char **argv);
int cli_profile(int argc, char **argv);
/* cli-debug.c */
int cli_debug(int argc, char **argv);
int cli_health(int argc, char **argv);
int cli_diverge(int argc, char **argv);
/* cli-trace.c: stats, top and diff of Chrome trace files */
int cli_stats(int argc, char **argv);
int cli_top(int argc, char **argv);
int cli_diff(int argc, char **argv);
/* Op statistics as a table: at most limit rows (0: all), then a total
 * row with the wall time it spans (cli-profile.c). */
struct tsp_stats;
void cli_print_op_table(const struct tsp_stats *st, const char *title, const char *by, int limit);
/* A training step's forward, backward and optimizer self time (by name
 * scope) over the ops f accepts; nothing when no op is a gradient's or an
 * optimizer's (cli-profile.c). */
struct tsp_session;
struct tsp_filter;
void cli_print_step_split(const struct tsp_session *s, const struct tsp_filter *f, const char *mode);
/* Two recordings group by group (tsp_diff_compute), A and B named so, as
 * diff and profile --against print them (cli-trace.c). */
struct tsp_diff;
void cli_print_diff(const struct tsp_diff *d, const char *by, const char *a, const char *b);
/* A table's name column of `width` (at most 63): the name, or its end
 * after "..." when longer (a node path's last part is its own name:
 * ".../If/else/If/else/PrintV2").  Returns buf or name. */
const char *cli_fit(char buf[64], const char *name, int width);
/* A comparison's last column: "1.25x", or why there is no ratio ("only in A"). */
void cli_ratio_text(char text[16], const char *only, double ratio);
/* --by's word as a grouping. */
int cli_group_by(const char *by);
/* cli-onnx.c: a MODULE path ending in .onnx is an ONNX model, opened as a
 * module of one function per output; the models stay open until
 * cli_close_models (after the command has freed its module). */
bool cli_is_model_path(const char *path);
ts_module *cli_open_module(const char *path);
void cli_close_models(void);
/* cli-onnx-test.c */
int cli_onnx_test(int argc, char **argv);
