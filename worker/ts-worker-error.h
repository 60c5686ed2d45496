/* ts-worker-error.h — engine errors as GErrors, on both sides of the
 * worker protocol: TS_ENGINE_ERROR's codes are the engine's ts_error_code,
 * registered as D-Bus error names so a worker's error arrives as the same
 * GError it was. */
#pragma once

#include <gio/gio.h>
#include <tracescope.h>

G_BEGIN_DECLS

#define TS_ENGINE_ERROR (ts_engine_error_quark())
GQuark ts_engine_error_quark(void);

/* What went wrong with the worker itself (not with the user's call). */
#define TS_WORKER_ERROR (ts_worker_error_quark())
GQuark ts_worker_error_quark(void);

typedef enum {
  TS_WORKER_ERROR_SPAWN,    /* the worker could not be started */
  TS_WORKER_ERROR_PROTOCOL, /* it said something that is not the protocol */
  TS_WORKER_ERROR_DIED,     /* it crashed, exited or was killed (TsWorkerDeath says how) */
  TS_WORKER_ERROR_BUSY,     /* it is doing something that excludes what was asked (a debug call) */
} TsWorkerErrorCode;

/* The message for an error in an argument the user typed: "Op: detail" or
 * the detail alone, without the engine's source location ("arg_spec.c:204:"),
 * which says nothing about the user's input or code.  Owned. */
char *ts_engine_error_input_message(const ts_error *e);

G_END_DECLS
