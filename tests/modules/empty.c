/* empty.c — a module that exports no functions yet (a first build before
 * any TS_EXPORT): the CLI and the app say so, and how to export one. */
#include <tracescope.h>

TS_MODULE("empty");
