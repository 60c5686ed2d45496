/* ts-input-signature.h — the input signature that stops a function's
 * shape retracing: its traced signatures with every dimension that varies
 * made unknown. */
#pragma once

#include <glib.h>
#include <tracescope.h>

#include "ts-loaded-module.h"
#include "ts-spec-text.h"

G_BEGIN_DECLS

/* The input signature serving every concrete function fn holds: one spec
 * per argument, dims that differ between them unknown.  *specs owned
 * (g_free); FALSE with an error if fn has no concrete functions, takes a
 * host value or changed the number, dtype or rank of its arguments. */
gboolean ts_input_signature_relaxed(const TsModuleFunction *fn, ts_spec **specs, int *n_specs,
                                    GError **error);
/* "(x: f32[?])" with fn's parameter names.  Owned. */
char *ts_input_signature_to_string(const TsModuleFunction *fn, const ts_spec *specs, int n_specs);

G_END_DECLS
