/* error.c — the per-thread pending error: the first failure wins. */
#include "engine-private.h"

#include <stdio.h>
#include <stdlib.h>


static const char *const code_names[TS_ERROR_CODE_COUNT] = {
  [TS_OK] = "ok",
  [TS_ERR_INVALID_ARGUMENT] = "invalid argument",
  [TS_ERR_DTYPE] = "dtype error",
  [TS_ERR_SHAPE] = "shape error",
  [TS_ERR_OUT_OF_RANGE] = "out of range",
  [TS_ERR_NOT_FOUND] = "not found",
  [TS_ERR_IO] = "I/O error",
  [TS_ERR_FORMAT] = "format error",
  [TS_ERR_NO_MEMORY] = "out of memory",
  [TS_ERR_UNIMPLEMENTED] = "unimplemented",
  [TS_ERR_INTERNAL] = "internal error",
  [TS_ERR_CANCELLED] = "cancelled",
};

const char *ts_error_code_name(ts_error_code code)
{
  return (unsigned)code < TS_ERROR_CODE_COUNT ? code_names[code] : "unknown error";
}

bool ts_failed(void)
{
  return ts__context()->error != NULL;
}

const ts_error *ts_error_peek(void)
{
  return ts__context()->error;
}

ts_error *ts_error_take(void)
{
  ts_context *c = ts__context();
  ts_error *e = c->error;
  c->error = NULL;
  c->error_noted = NULL;
  return e;
}

void ts_error_free(ts_error *e)
{
  if (!e)
    return;
  free(e->op);
  free(e->detail);
  free(e->file);
  free(e->func);
  free(e->message);
  free(e);
}

void ts_error_clear(void)
{
  ts_error_free(ts_error_take());
}

void ts__error_put(ts_error *e)
{
  ts_context *c = ts__context();
  ts_error_free(c->error);
  c->error = e;
  c->error_noted = NULL;
}

void ts__error_locate(ts_loc loc)
{
  ts_context *c = ts__context();
  ts_error *e = c->error;
  if (!e || e->file || !loc.file)
    return;
  c->error = NULL;
  ts_error_set(e->code, loc, e->op, "%s", e->detail ? e->detail : e->message);
  ts_error_free(e);
}

void ts__error_name_op(const char *op)
{
  ts_context *c = ts__context();
  ts_error *e = c->error;
  if (!e || e->op || !op)
    return;
  c->error = NULL;
  ts_error_set(e->code, (ts_loc){ e->file, e->func, e->line }, op, "%s", e->detail ? e->detail : e->message);
  ts_error_free(e);
}

static char *dup_or_null(const char *s)
{
  return s ? strdup(s) : NULL;
}

/* The file name without its directories keeps messages short. */
static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void error_setv(ts_error_code code, ts_loc loc, const char *op, const char *fmt, va_list ap)
{
  ts_context *c = ts__context();
  if (c->error)
    return;
  ts_error *e = calloc(1, sizeof *e);
  if (!e)
    return;
  e->code = code;
  e->op = dup_or_null(op);
  e->file = dup_or_null(loc.file);
  e->func = dup_or_null(loc.func);
  e->line = loc.line;
  if (vasprintf(&e->detail, fmt, ap) < 0)
    e->detail = NULL;

  const char *detail = e->detail ? e->detail : "(no detail)";
  int n;
  if (loc.file && op)
    n = asprintf(&e->message, "%s:%d: %s: %s", base_name(loc.file), loc.line, op, detail);
  else if (loc.file)
    n = asprintf(&e->message, "%s:%d: %s", base_name(loc.file), loc.line, detail);
  else if (op)
    n = asprintf(&e->message, "%s: %s", op, detail);
  else
    n = asprintf(&e->message, "%s", detail);
  if (n < 0)
    e->message = NULL;
  c->error = e;
}

void ts_error_set(ts_error_code code, ts_loc loc, const char *op, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  error_setv(code, loc, op, fmt, ap);
  va_end(ap);
}

void ts__op_fail(ts_loc loc, const ts_op_def *def, ts_error_code code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  error_setv(code, loc, def ? def->name : NULL, fmt, ap);
  va_end(ap);
}

void ts__arg_error(const char *func, const char *what)
{
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "%s: invalid argument: %s", func,
               what);
}

void ts__error_append(const char *fmt, ...)
{
  ts_context *c = ts__context();
  ts_error *e = c->error;
  if (!e)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *note = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  c->error = NULL;
  ts_error_set(e->code, (ts_loc){ e->file, e->func, e->line }, e->op, "%s %s",
               e->detail ? e->detail : e->message, note);
  g_free(note);
  ts_error_free(e);
}
