/* worker-fast.h — the worker's end of the fast call channel
 * (ts-fast-channel.h): a thread that waits for requests and makes them. */
#pragma once

#include "worker-service.h"

typedef struct WorkerFast WorkerFast;

/* Makes the channel and starts its thread. */
WorkerFast *worker_fast_new(WorkerService *service, GError **error);
/* The channel's memfd (the channel keeps it). */
int worker_fast_fd(WorkerFast *f);
/* Stops the thread (after the call it is in) and unmaps the channel. */
void worker_fast_free(WorkerFast *f);
