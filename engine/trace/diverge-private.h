/* diverge-private.h — what the divergence finder's files share
 * (diverge.c runs and compares, diverge_report.c writes the report). */
#pragma once

#include "function-private.h"

/* "model.c" of "/src/model.c"; "?" for NULL. */
const char *ts__diverge_base_name(const char *path);
/* The report's verdict in one line: "first divergence: op #12 Add ...",
 * "the results differ, though no op does: ..." or "no divergence". */
void ts__diverge_append_verdict(GString *s, const ts_diverge_report *rep);
