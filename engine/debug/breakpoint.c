/* breakpoint.c — breakpoints from text and whether an op meets them:
 * op type, name-scope glob, file:line, and conditions on the outputs
 * (nan, inf, or a statistic compared with a number). */
#include "debug-private.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>

static const char *const STAT_NAMES[TS_BP_STAT_COUNT] = {
  [TS_BP_MIN] = "min", [TS_BP_MAX] = "max", [TS_BP_MEAN] = "mean", [TS_BP_STD] = "std",
};
/* Longer operators first, so ">=" is not read as ">". */
static const struct {
  const char *text;
  ts_bp_cmp cmp;
} CMPS[] = {
  { ">=", TS_BP_GE }, { "<=", TS_BP_LE }, { "==", TS_BP_EQ }, { "!=", TS_BP_NE },
  { ">", TS_BP_GT },  { "<", TS_BP_LT },
};

#define USAGE                                                                            \
  "a breakpoint is an op type (MatMul), a scope glob (dense_3/*), FILE:LINE, " \
  "nan, inf, a condition such as 'max > 1e6', or 'OP if CONDITION'"

static bool fail(const char *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(const char *spec, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "breakpoint '%s': %s", spec, what);
  g_free(what);
  return false;
}

static const char *skip_space(const char *p)
{
  while (*p && isspace((unsigned char)*p))
    p++;
  return p;
}

/* The word at p (letters, digits, _) into buf; returns the end. */
static const char *word(const char *p, char *buf, size_t size)
{
  size_t n = 0;
  while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < size)
    buf[n++] = *p++;
  buf[n] = '\0';
  return p;
}

/* "nan", "inf" or "STAT CMP NUMBER" (the whole of text). */
static bool parse_cond(const char *spec, const char *text, ts_breakpoint *bp)
{
  char w[32];
  const char *p = word(skip_space(text), w, sizeof w);
  if (!w[0])
    return fail(spec, "expected a condition (nan, inf, or min|max|mean|std then a comparison), got '%s'",
                skip_space(text));
  if (g_ascii_strcasecmp(w, "nan") == 0 || g_ascii_strcasecmp(w, "inf") == 0) {
    bp->cond = g_ascii_strcasecmp(w, "nan") == 0 ? TS_BP_NAN : TS_BP_INF;
    p = skip_space(p);
    return *p ? fail(spec, "unexpected '%s' after '%s'", p, w) : true;
  }
  int stat = -1;
  for (int i = 0; i < TS_BP_STAT_COUNT; i++)
    if (strcmp(w, STAT_NAMES[i]) == 0)
      stat = i;
  if (stat < 0)
    return fail(spec, "unknown statistic '%s' (min, max, mean or std)", w);
  p = skip_space(p);
  int cmp = -1;
  for (size_t i = 0; i < G_N_ELEMENTS(CMPS) && cmp < 0; i++)
    if (g_str_has_prefix(p, CMPS[i].text)) {
      cmp = (int)CMPS[i].cmp;
      p += strlen(CMPS[i].text);
    }
  if (cmp < 0)
    return fail(spec, "expected a comparison (> >= < <= == !=) after '%s', got '%s'", w,
                *p ? p : "the end");
  p = skip_space(p);
  char *end;
  double v = g_ascii_strtod(p, &end);
  if (end == p || !isfinite(v))
    return fail(spec, "expected a number after the comparison, got '%s'", *p ? p : "the end");
  if (*skip_space(end))
    return fail(spec, "unexpected '%s' after the number", skip_space(end));
  bp->cond = TS_BP_EXPR;
  bp->stat = (ts_bp_stat)stat;
  bp->cmp = (ts_bp_cmp)cmp;
  bp->value = v;
  return true;
}

static bool starts_with_cond(const char *text)
{
  char w[32];
  const char *p = skip_space(word(skip_space(text), w, sizeof w));
  for (int i = 0; i < TS_BP_STAT_COUNT; i++)
    if (strcmp(w, STAT_NAMES[i]) == 0)
      return true;
  return g_ascii_strcasecmp(w, "nan") == 0 || g_ascii_strcasecmp(w, "inf") == 0 ? !*p : false;
}

/* An op type, a scope glob or FILE:LINE (text trimmed, one token). */
static bool parse_where(const char *spec, const char *text, ts_breakpoint *bp)
{
  if (!*text)
    return fail(spec, "nothing before 'if' (%s)", USAGE);
  if (strpbrk(text, " \t"))
    return fail(spec, "unexpected space in '%s' (%s)", text, USAGE);
  const char *colon = strrchr(text, ':');
  if (colon) {
    char *end;
    long line = strtol(colon + 1, &end, 10);
    if (colon == text || !colon[1] || *end || line < 1 || line > 100000000)
      return fail(spec, "expected FILE:LINE with a line number from 1, got '%s'", text);
    bp->where = TS_BP_LINE;
    bp->file = g_strndup(text, (gsize)(colon - text));
    bp->line = (int)line;
    return true;
  }
  if (strpbrk(text, "/*?")) {
    bp->where = TS_BP_GLOB;
    bp->glob = g_strdup(text);
    return true;
  }
  int op = ts_op_from_name(text);
  if (op < 0) {
    const char *names[TS_OP_COUNT];
    for (int i = 0; i < TS_OP_COUNT; i++)
      names[i] = ts_op_name((ts_op)i);
    const char *near = ts_nearest_name(text, names, TS_OP_COUNT);
    if (near)
      return fail(spec, "unknown op type '%s' (did you mean '%s'?)", text, near);
    return fail(spec, "unknown op type '%s' (%s)", text, USAGE);
  }
  bp->where = TS_BP_OP;
  bp->op = (ts_op)op;
  return true;
}

bool ts__breakpoint_parse(const char *spec, ts_breakpoint *bp)
{
  *bp = (ts_breakpoint){ 0 };
  if (!spec)
    return fail("(null)", "no text");
  g_autofree char *text = g_strstrip(g_strdup(spec));
  if (!*text)
    return fail(spec, "empty (%s)", USAGE);
  /* "OP if EXPR" */
  if (g_str_has_prefix(text, "if "))
    return fail(spec, "nothing before 'if' (%s)", USAGE);
  char *sep = strstr(text, " if ");
  bool ok;
  if (sep) {
    *sep = '\0';
    ok = parse_where(spec, g_strstrip(text), bp) && parse_cond(spec, sep + 4, bp);
  } else if (starts_with_cond(text) || strpbrk(text, "<>=!")) {
    ok = parse_cond(spec, text, bp);
  } else {
    ok = parse_where(spec, text, bp);
  }
  if (!ok)
    ts__breakpoint_clear(bp);
  return ok;
}

void ts__breakpoint_clear(ts_breakpoint *bp)
{
  g_free(bp->glob);
  g_free(bp->file);
  *bp = (ts_breakpoint){ 0 };
}

/* file is the breakpoint's: "seeds.c" or "data/examples/seeds.c" matches
 * ".../data/examples/seeds.c" (a whole path suffix), as does the base name. */
static bool file_matches(const char *want, const char *file)
{
  if (!file)
    return false;
  size_t nw = strlen(want), nf = strlen(file);
  if (nf >= nw && strcmp(file + nf - nw, want) == 0 && (nf == nw || file[nf - nw - 1] == '/'))
    return true;
  const char *slash = strrchr(want, '/');
  return !slash && strcmp(want, (strrchr(file, '/') ? strrchr(file, '/') + 1 : file)) == 0;
}

bool ts__breakpoint_matches(const ts_breakpoint *bp, const ts_debug_op *op)
{
  switch (bp->where) {
  case TS_BP_ANY: return true;
  case TS_BP_OP: return bp->op == op->op;
  case TS_BP_GLOB:
    return (op->node && g_pattern_match_simple(bp->glob, op->node)) ||
           (op->path && g_pattern_match_simple(bp->glob, op->path)) ||
           (op->scope && *op->scope && g_pattern_match_simple(bp->glob, op->scope));
  case TS_BP_LINE: return op->line == bp->line && file_matches(bp->file, op->file);
  }
  return false;
}

static bool compare(ts_bp_cmp cmp, double a, double b)
{
  switch (cmp) {
  case TS_BP_GT: return a > b;
  case TS_BP_GE: return a >= b;
  case TS_BP_LT: return a < b;
  case TS_BP_LE: return a <= b;
  case TS_BP_EQ: return a == b;
  case TS_BP_NE: return a != b;
  default: return false;
  }
}

bool ts__breakpoint_holds(const ts_breakpoint *bp, ts_tensor *const *out, int n_out,
                          ts_debug_reason *reason)
{
  if (bp->cond == TS_BP_ALWAYS)
    return false;
  if (bp->cond == TS_BP_NAN || bp->cond == TS_BP_INF) {
    for (int i = 0; i < n_out; i++) {
      int64_t nan, inf;
      ts__count_nonfinite(out[i], &nan, &inf);
      if (bp->cond == TS_BP_NAN ? nan > 0 : inf > 0) {
        *reason = bp->cond == TS_BP_NAN ? TS_DEBUG_NAN : TS_DEBUG_INF;
        return true;
      }
    }
    return false;
  }
  /* Statistics over the elements of every numeric output together. */
  ts_tensor_stats all = { 0 }, one;
  for (int i = 0; i < n_out; i++)
    if (ts_tensor_stats_compute(out[i], &one))
      ts__stats_merge(&all, &one);
  if (all.n - all.n_nan - all.n_inf == 0)
    return false; /* nothing finite to compare */
  double v = bp->stat == TS_BP_MIN ? all.min : bp->stat == TS_BP_MAX ? all.max
           : bp->stat == TS_BP_MEAN ? all.mean : all.std;
  if (!compare(bp->cmp, v, bp->value))
    return false;
  *reason = TS_DEBUG_CONDITION;
  return true;
}

bool ts_debug_break_check(const char *spec)
{
  ts_breakpoint bp;
  if (!ts__breakpoint_parse(spec, &bp))
    return false;
  ts__breakpoint_clear(&bp);
  return true;
}
