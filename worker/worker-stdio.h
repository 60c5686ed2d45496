/* worker-stdio.h — `tracescope-worker --stdio`, the far end of a remote
 * worker over ssh (ts-remote-link.h). */
#pragma once

#include <glib.h>

/* Runs the worker on the link on stdin/stdout until it died and was told,
 * or the link ended; the process's exit status. */
int worker_stdio_main(gint64 memory_limit);
