/* worker-status.h — the status page (ts-worker-protocol.h) filled from the
 * engine's op watch, safely from a signal handler or another thread. */
#pragma once

#include <tracescope.h>

#include "ts-worker-protocol.h"

/* Copies the op w names into st: "MatMul", "dense/MatMul", "model.c:42 (dense)".
 * Async-signal-safe (no allocation, no stdio): the crash handler calls it. */
void worker_status_note_op(TsWorkerStatus *st, const ts_op_watch *w);
